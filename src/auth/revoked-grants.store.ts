// revoked_grants: the grants the authorization server has revoked, by digest, kept until every
// JWT access token issued under them has expired. The authorization server writes (the adapter's
// revokeByGrantId); every resource server reads what is new (src/http/grant-revocations.ts).
import type { Queryable } from '../db/db.ts';
import { TOKEN_TTL } from './token-lifetimes.ts';

/**
 * How long a revocation is kept: the longest an access token lives, plus 5 minutes for clocks
 * (the authorization server's, which set exp, against the database's and resource servers').
 */
export const REVOKED_GRANT_KEPT_SECONDS = TOKEN_TTL.AccessToken + 300;

/**
 * Records that the grant with this digest is revoked. oidc-provider revokes a grant through every
 * grant-bound model at once (lib/helpers/revoke.js), so the same grant arrives several times,
 * concurrently: the first insert wins and keeps its revoked_at.
 */
export interface RevokedGrant {
  grantDigest: string;
  /** RFC 3339, the database's clock. */
  revokedAt: string;
  expiresAt: string;
}

export async function recordRevokedGrant(db: Queryable, grantDigest: string): Promise<void> {
  await db.query(
    `INSERT INTO revoked_grants (grant_digest, expires_at) VALUES ($1, now() + make_interval(secs => $2))
     ON CONFLICT (grant_digest) DO NOTHING`,
    [grantDigest, REVOKED_GRANT_KEPT_SECONDS],
  );
}

/** Records these grants (by digest) revoked at once; those already recorded keep their revoked_at. */
export async function recordRevokedGrants(db: Queryable, grantDigests: readonly string[]): Promise<void> {
  if (!grantDigests.length) return;
  await db.query(
    `INSERT INTO revoked_grants (grant_digest, expires_at)
     SELECT digest, now() + make_interval(secs => $2) FROM unnest($1::text[]) AS digest
     ON CONFLICT (grant_digest) DO NOTHING`,
    [grantDigests, REVOKED_GRANT_KEPT_SECONDS],
  );
}

/** Revocations recorded after `since` (all, when undefined) that have not expired yet. */
export async function listRevokedGrantsSince(db: Queryable, since: string | undefined): Promise<RevokedGrant[]> {
  const { rows } = await db.query<{ grant_digest: string; revoked_at: string; expires_at: string }>(
    `SELECT grant_digest, revoked_at, expires_at FROM revoked_grants
     WHERE revoked_at > $1 AND expires_at > now()`,
    [since ?? '-infinity'],
  );
  return rows.map((row) => ({ grantDigest: row.grant_digest, revokedAt: row.revoked_at, expiresAt: row.expires_at }));
}

/** Deletes revocations no token can need any more; returns how many. */
export async function purgeExpiredRevokedGrants(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM revoked_grants WHERE expires_at < now()');
  return rowCount;
}

/**
 * Whether the grant with this digest is revoked, read now: introspection (RFC 7662) answers for
 * the moment it is asked, not for a copy up to a second old.
 */
export async function isGrantRevoked(db: Queryable, grantDigest: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM revoked_grants WHERE grant_digest = $1', [grantDigest]);
  return rows.length > 0;
}
