// Signing keys in the database: the authorization server signs with the newest active key of each
// algorithm; the JWKS publishes the public half of every key that has not expired, so tokens
// signed by a retired key keep verifying until they expire.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Db, Queryable } from '../db/db.ts';

/** What every client but a FAPI 2.0 one is signed for: RS256, OpenID Connect's default. */
export const SIGNING_ALG = 'RS256';
/**
 * One active key per algorithm, never one key for two (RFC 8725 §3.1, FAPI 2.0 §6's single-purpose
 * keys): RS256 for every client, PS256 for FAPI 2.0 clients, whose JWTs may use only PS256, ES256
 * or EdDSA (FAPI 2.0 §5.4.1; docs/decisions/0135-fapi2-client-profile.md).
 */
export const SIGNING_ALGS = [SIGNING_ALG, 'PS256'] as const;

/** How far behind ours a verifier's clock may run. */
export const CLOCK_SKEW_SECONDS = 300;
/**
 * The longest lifetime of anything signed with a signing key: id tokens and `orderpay tokens
 * issue` live at most 1 hour, access tokens from the authorization server 10 minutes. Whatever
 * signs with these keys must stay within it, or a rotation unpublishes a key too early.
 */
export const MAX_TOKEN_LIFETIME_SECONDS = 3600;
/** A retired key stays in the JWKS this long after rotation. */
export const MAX_SIGNED_TOKEN_LIFETIME_SECONDS = MAX_TOKEN_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS;

export interface SigningKey {
  kid: string;
  alg: string;
  privateJwk: JWK;
  publicJwk: JWK;
  createdAt: string;
}

interface SigningKeyRow {
  kid: string;
  alg: string;
  private_jwk: JWK;
  public_jwk: JWK;
  created_at: string;
}

const toKey = (row: SigningKeyRow): SigningKey => ({
  kid: row.kid,
  alg: row.alg,
  privateJwk: row.private_jwk,
  publicJwk: row.public_jwk,
  createdAt: row.created_at,
});

interface SigningKeyMaterial {
  kid: string;
  alg: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

/** A new key pair, kid = its RFC 7638 thumbprint. Slow (RSA), so done outside any transaction. */
async function generateSigningKey(alg: string): Promise<SigningKeyMaterial> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, modulusLength: 2048 });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const decorate = (jwk: JWK): JWK => ({ ...jwk, kid, alg, use: 'sig' });
  return { kid, alg, privateJwk: decorate(await exportJWK(privateKey)), publicJwk: decorate(publicJwk) };
}

async function insertSigningKey(db: Queryable, key: SigningKeyMaterial): Promise<SigningKey> {
  const { rows } = await db.query<SigningKeyRow>(
    `INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk) VALUES ($1, $2, $3, $4)
     RETURNING kid, alg, private_jwk, public_jwk, created_at`,
    [key.kid, key.alg, JSON.stringify(key.privateJwk), JSON.stringify(key.publicJwk)],
  );
  return toKey(rows[0]!);
}

export async function createSigningKey(db: Queryable, alg: string = SIGNING_ALG): Promise<SigningKey> {
  return insertSigningKey(db, await generateSigningKey(alg));
}

/** The key new tokens of `alg` are signed with: the newest one not retired. */
export async function findActiveSigningKey(db: Queryable, alg: string = SIGNING_ALG): Promise<SigningKey | undefined> {
  const { rows } = await db.query<SigningKeyRow>(
    `SELECT kid, alg, private_jwk, public_jwk, created_at FROM signing_keys
     WHERE retired_at IS NULL AND alg = $1 ORDER BY created_at DESC, kid LIMIT 1`,
    [alg],
  );
  return rows[0] && toKey(rows[0]);
}

/**
 * An active key of every algorithm of SIGNING_ALGS, created where missing (a first start, or a
 * database from before PS256 was signed with); the RS256 one is returned.
 */
export async function ensureActiveSigningKey(db: Queryable): Promise<SigningKey> {
  const [first, ...others] = SIGNING_ALGS;
  for (const alg of others) if (!(await findActiveSigningKey(db, alg))) await createSigningKey(db, alg);
  return (await findActiveSigningKey(db, first)) ?? createSigningKey(db, first);
}

/** Public keys of every key still published (not past expires_at). */
export async function listPublishedKeys(db: Queryable): Promise<JWK[]> {
  const { rows } = await db.query<{ public_jwk: JWK }>(
    `SELECT public_jwk FROM signing_keys WHERE expires_at IS NULL OR expires_at > now() ORDER BY created_at DESC, kid`,
  );
  return rows.map((r) => r.public_jwk);
}

/**
 * Private JWKs for the authorization server: the active key first (it signs), then keys retired
 * but still published (kept for verification until they expire).
 */
export async function listSigningJwks(db: Queryable): Promise<{ keys: JWK[]; fingerprint: string }> {
  const { rows } = await db.query<{ kid: string; private_jwk: JWK }>(
    `SELECT kid, private_jwk FROM signing_keys WHERE expires_at IS NULL OR expires_at > now()
     ORDER BY (retired_at IS NULL) DESC, created_at DESC, kid`,
  );
  return { keys: rows.map((r) => r.private_jwk), fingerprint: rows.map((r) => r.kid).join(',') };
}

/** A key as an operator sees it: never its private members. */
export interface SigningKeyInfo {
  kid: string;
  alg: string;
  createdAt: string;
  retiredAt: string | null;
  expiresAt: string | null;
  /** active: signs new tokens; retired: published until expiresAt; expired: no longer published. */
  status: 'active' | 'retired' | 'expired';
}

interface SigningKeyInfoRow {
  kid: string;
  alg: string;
  created_at: string;
  retired_at: string | null;
  expires_at: string | null;
  status: SigningKeyInfo['status'];
}

const toInfo = (row: SigningKeyInfoRow): SigningKeyInfo => ({
  kid: row.kid,
  alg: row.alg,
  createdAt: row.created_at,
  retiredAt: row.retired_at,
  expiresAt: row.expires_at,
  status: row.status,
});

const KEY_STATUS_SQL = `CASE WHEN expires_at IS NOT NULL AND expires_at <= now() THEN 'expired'
  WHEN retired_at IS NOT NULL THEN 'retired' ELSE 'active' END`;

export async function listSigningKeys(db: Queryable): Promise<SigningKeyInfo[]> {
  const { rows } = await db.query<SigningKeyInfoRow>(
    `SELECT kid, alg, created_at, retired_at, expires_at, ${KEY_STATUS_SQL} AS status
     FROM signing_keys ORDER BY created_at DESC, kid`,
  );
  return rows.map(toInfo);
}

const toActiveInfo = (key: SigningKey): SigningKeyInfo => ({
  kid: key.kid,
  alg: key.alg,
  createdAt: key.createdAt,
  retiredAt: null,
  expiresAt: null,
  status: 'active',
});

/**
 * A new key of each algorithm signs from now on; in the same transaction every previously active
 * key is retired and stays published for MAX_SIGNED_TOKEN_LIFETIME_SECONDS, until everything it
 * signed expired. `active` lists the new keys in SIGNING_ALGS' order.
 */
export async function rotateSigningKeys(db: Db): Promise<{ active: SigningKeyInfo[]; retired: SigningKeyInfo[] }> {
  const materials = await Promise.all(SIGNING_ALGS.map(generateSigningKey));
  return db.transaction(async (tx) => {
    // Two rotations at once: the second waits here and then retires the first one's key.
    await tx.query('SELECT kid FROM signing_keys WHERE retired_at IS NULL ORDER BY kid FOR UPDATE');
    const { rows: retired } = await tx.query<SigningKeyInfoRow>(
      `UPDATE signing_keys SET retired_at = now(), expires_at = now() + make_interval(secs => $1)
       WHERE retired_at IS NULL
       RETURNING kid, alg, created_at, retired_at, expires_at, 'retired' AS status`,
      [MAX_SIGNED_TOKEN_LIFETIME_SECONDS],
    );
    const active: SigningKeyInfo[] = [];
    for (const material of materials) active.push(toActiveInfo(await insertSigningKey(tx, material)));
    return { active, retired: retired.map(toInfo) };
  });
}
