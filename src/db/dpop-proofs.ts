// The DPoP proofs the API accepted (dpop_proofs), so that every process of a deployment refuses a
// replayed one without another service. The SQL only: how the API uses it is src/http/dpop-replay.ts.
import type { Queryable } from './db.ts';

/**
 * Records key jkt's proof jti until expiresAt; false when a live row has it already (a replay). A
 * row past its expiry is taken over: its proof could not be accepted any more, whatever it said.
 */
export async function recordDpopProof(db: Queryable, jkt: string, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
  const { rows } = await db.query(
    `INSERT INTO dpop_proofs (jkt, jti, expires_at) VALUES ($1, $2, $3)
     ON CONFLICT (jkt, jti) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE dpop_proofs.expires_at <= $4
     RETURNING 1 AS recorded`,
    [jkt, jti, expiresAt.toISOString(), now.toISOString()],
  );
  return rows.length === 1;
}

/** Deletes the proofs no process could accept any more; returns how many. */
export async function purgeExpiredDpopProofs(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM dpop_proofs WHERE expires_at < now()');
  return rowCount;
}
