// oidc-provider's storage over the project's Db (PGlite and PostgreSQL alike): one row per model
// instance in oidc_payloads, keyed by digests so a dump holds no redeemable value; clients come
// from oauth_clients, where the `orderpay clients` command registers them.
import { hash } from 'node:crypto';
import { errors, type Adapter, type AdapterConstructor, type AdapterPayload } from 'oidc-provider';
import type { Queryable } from '../db/db.ts';
import type { ClientMetadata } from './clients.rules.ts';
import { findClientMetadata } from './clients.store.ts';
import { recordRevokedGrant, recordRevokedGrants } from './revoked-grants.store.ts';

/** How long an expired row is kept before the purge deletes it. */
export const OIDC_PAYLOAD_PURGE_GRACE_SECONDS = 3600;

/** Models whose rows belong to a grant and go when it is revoked (as in oidc-provider's memory adapter). */
const GRANT_BOUND_MODELS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

interface PayloadRow {
  payload: AdapterPayload;
}

/** SHA-256, base64url: what the table holds in place of an id, uid or user code. */
export function digestOidcIdentifier(value: string): string {
  return hash('sha256', value, 'base64url');
}

const epochSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/**
 * The payload as written: without the identifier itself (a token, code or session cookie value),
 * which find(id) restores from its argument. DeviceCode keeps its jti, because findByUserCode
 * must hand it back and nothing else could. An Interaction drops session.cookie, the session's
 * id, which nothing in oidc-provider reads back.
 */
function toStoredPayload(model: string, payload: AdapterPayload): AdapterPayload {
  const { jti, ...withoutJti } = payload;
  const stored: AdapterPayload = model === 'DeviceCode' ? { ...payload } : withoutJti;
  if (model === 'Interaction' && stored.session?.cookie !== undefined) {
    const { cookie, ...session } = stored.session;
    stored.session = session;
  }
  return stored;
}

/**
 * Adapter class for oidc-provider's `adapter` option; `now` is the clock expiry is judged by;
 * `viewClient`, the metadata the provider works with from the registered one (the scopes
 * ORDERPAY_FAPI2_FOR_PAYMENTS withholds, src/auth/fapi2-profile.ts).
 */
export function createOidcAdapter(
  db: Queryable,
  now: () => Date = () => new Date(),
  viewClient: (metadata: ClientMetadata) => ClientMetadata = (metadata) => metadata,
): AdapterConstructor {
  return class OidcAdapter implements Adapter {
    readonly model: string;

    constructor(name: string) {
      this.model = name;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      this.assertStoredHere('upsert');
      if (this.model === 'ReplayDetection') return this.recordFirstUse(id, payload, expiresIn);
      const at = now();
      const expiresAt = typeof expiresIn === 'number' ? new Date(at.getTime() + expiresIn * 1000).toISOString() : null;
      const grantId = GRANT_BOUND_MODELS.has(this.model) && typeof payload.grantId === 'string' ? payload.grantId : null;
      // A row once consumed stays consumed, whatever a later save of a stale copy says.
      await db.query(
        `INSERT INTO oidc_payloads (model, id, payload, grant_id, uid, user_code, expires_at, consumed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (model, id) DO UPDATE SET
           payload = CASE WHEN oidc_payloads.consumed_at IS NULL THEN EXCLUDED.payload
                          ELSE EXCLUDED.payload || jsonb_build_object('consumed', oidc_payloads.payload -> 'consumed') END,
           grant_id = EXCLUDED.grant_id,
           uid = EXCLUDED.uid,
           user_code = EXCLUDED.user_code,
           expires_at = EXCLUDED.expires_at,
           consumed_at = COALESCE(oidc_payloads.consumed_at, EXCLUDED.consumed_at)`,
        [
          this.model,
          digestOidcIdentifier(id),
          JSON.stringify(toStoredPayload(this.model, payload)),
          grantId,
          typeof payload.uid === 'string' ? digestOidcIdentifier(payload.uid) : null,
          typeof payload.userCode === 'string' ? digestOidcIdentifier(payload.userCode) : null,
          expiresAt,
          payload.consumed ? at.toISOString() : null,
        ],
      );
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Client') {
        // PostgreSQL refuses a NUL in text (22021): answered as the malformed input it is, not a 500.
        if (id.includes('\0')) throw new errors.InvalidRequest('client_id must not contain a NUL character');
        const metadata = await findClientMetadata(db, id);
        return metadata && (viewClient(metadata) as AdapterPayload);
      }
      const payload = await this.findLive('id', id);
      return payload && { ...payload, jti: id };
    }

    /** The Session with this uid; its jti (the cookie value) is not stored, so it is absent. */
    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.findLive('uid', uid);
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.findLive('user_code', userCode);
    }

    /**
     * Marks the row consumed in one UPDATE. oidc-provider checks `consumed` before it calls this,
     * so a row already consumed means a concurrent request redeemed it first: that one is denied
     * (RFC 6749 §4.1.2, a code is used once), as is one whose row is gone (revoked meanwhile).
     */
    async consume(id: string): Promise<void> {
      const at = now();
      const { rows } = await db.query(
        `UPDATE oidc_payloads SET consumed_at = $3, payload = payload || jsonb_build_object('consumed', $4::bigint)
         WHERE model = $1 AND id = $2 AND consumed_at IS NULL
         RETURNING 1 AS consumed`,
        [this.model, digestOidcIdentifier(id), at.toISOString(), epochSeconds(at)],
      );
      if (rows.length === 0) throw new errors.InvalidGrant(`${this.model} already consumed or no longer stored`);
    }

    async destroy(id: string): Promise<void> {
      this.assertStoredHere('destroy');
      await db.query('DELETE FROM oidc_payloads WHERE model = $1 AND id = $2', [this.model, digestOidcIdentifier(id)]);
    }

    /**
     * Removes every grant-bound row of the grant, whichever model's adapter is asked, and records
     * the revocation so resource servers refuse the JWT access tokens already issued under it
     * (RFC 6749 §4.1.2: a reused code SHOULD revoke them; RFC 7009 §2.1: so SHOULD revoking a
     * refresh token). Recorded first: should the delete fail, the tokens are recalled all the same.
     */
    async revokeByGrantId(grantId: string): Promise<void> {
      await recordRevokedGrant(db, digestOidcIdentifier(grantId));
      await db.query('DELETE FROM oidc_payloads WHERE grant_id = $1', [grantId]);
    }

    /**
     * ReplayDetection.unique (a DPoP proof's or a client assertion's jti) asks find, then saves: two
     * requests with the same jti could both find nothing. The save is the check that holds: only
     * the first insert of a live row succeeds, the other request is refused.
     */
    private async recordFirstUse(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const at = now();
      const expiresAt = new Date(at.getTime() + (expiresIn ?? 0) * 1000).toISOString();
      const { rows } = await db.query(
        `INSERT INTO oidc_payloads (model, id, payload, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at
         WHERE oidc_payloads.expires_at <= $5
         RETURNING 1 AS recorded`,
        [this.model, digestOidcIdentifier(id), JSON.stringify(toStoredPayload(this.model, payload)), expiresAt, at.toISOString()],
      );
      if (rows.length === 0) throw new errors.InvalidRequest('this JWT was used before (jti replay detected)');
    }

    /** A row of this model by a hashed column, unless it has expired (purged or not). */
    private async findLive(column: 'id' | 'uid' | 'user_code', value: string): Promise<AdapterPayload | undefined> {
      const { rows } = await db.query<PayloadRow>(
        `SELECT payload FROM oidc_payloads
         WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > $3)
         ORDER BY expires_at DESC NULLS FIRST LIMIT 1`,
        [this.model, digestOidcIdentifier(value), now().toISOString()],
      );
      return rows[0]?.payload;
    }

    private assertStoredHere(operation: string): void {
      if (this.model === 'Client') {
        throw new Error(
          `oidc adapter: Client ${operation} is not supported; clients are registered with \`orderpay clients\` in oauth_clients`,
        );
      }
    }
  };
}

/** Whose rows: a user's (the provider's accountId) or a client's. */
export type OidcPayloadOwner = { accountId: string } | { clientId: string };

/**
 * The rows naming the owner: its grants, the codes and tokens issued under them, and a user's
 * sessions and sign-ins in progress (an Interaction names its account in its session or result) or
 * a client's (in its parameters). A scan of the table: operators' commands only.
 */
const OWNED_ROWS = {
  accountId: `payload ->> 'accountId' = $1
    OR (model = 'Interaction' AND (payload #>> '{session,accountId}' = $1 OR payload #>> '{result,login,accountId}' = $1))`,
  clientId: `payload ->> 'clientId' = $1 OR (model = 'Interaction' AND payload #>> '{params,client_id}' = $1)`,
} as const;

/**
 * Ends what the authorization server holds for a user or a client: its grants are recorded revoked
 * (the JWT access tokens issued under them stay refused after it is enabled again, by their `gid`),
 * and every row naming it is deleted, so no refresh token, code or session of it works any more.
 * A Grant row's id is the digest of the grant id, which is what revoked_grants holds. Returns how
 * many grants were revoked.
 */
export async function revokeOidcPayloadsOf(db: Queryable, owner: OidcPayloadOwner): Promise<number> {
  const [field, value] = 'accountId' in owner ? (['accountId', owner.accountId] as const) : (['clientId', owner.clientId] as const);
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM oidc_payloads WHERE model = 'Grant' AND payload ->> $2 = $1`, [
    value,
    field,
  ]);
  await recordRevokedGrants(
    db,
    rows.map((row) => row.id),
  );
  await db.query(`DELETE FROM oidc_payloads WHERE ${OWNED_ROWS[field]}`, [value]);
  return rows.length;
}

/**
 * Deletes rows expired more than `graceSeconds` ago; returns how many. Consumed rows live as
 * long as their expiry, so a replayed code or rotated refresh token is still recognised.
 */
export async function purgeExpiredOidcPayloads(
  db: Queryable,
  { now = () => new Date(), graceSeconds = OIDC_PAYLOAD_PURGE_GRACE_SECONDS }: { now?: () => Date; graceSeconds?: number } = {},
): Promise<number> {
  const cutoff = new Date(now().getTime() - graceSeconds * 1000).toISOString();
  const { rowCount } = await db.query('DELETE FROM oidc_payloads WHERE expires_at < $1', [cutoff]);
  return rowCount;
}
