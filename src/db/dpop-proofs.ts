// The DPoP proofs the API accepted (dpop_proofs), so that every process of a deployment refuses a
// replayed one without another service. The SQL only: how the API uses it is src/http/dpop-replay.ts.
import type { Queryable } from './db.ts';

/** A proof to remember: key jkt's jti, until expiresAt. */
export interface DpopProofRow {
  jkt: string;
  jti: string;
  expiresAt: Date;
}

/** How a batch names a proof: jkt is base64url (no space), so the pair is unambiguous. */
export const dpopProofKey = (jkt: string, jti: string): string => `${jkt} ${jti}`;

/**
 * Records the proofs in one statement; returns the dpopProofKey of those recorded, the others being
 * replays (a live row has them). A row past its expiry is taken over: its proof could not be
 * accepted any more, whatever it said. No (jkt, jti) may come twice: ON CONFLICT DO UPDATE cannot
 * touch a row twice in one statement, so the caller answers a repeat as the replay it is.
 */
export async function recordDpopProofs(db: Queryable, proofs: readonly DpopProofRow[], now: Date): Promise<Set<string>> {
  const { rows } = await db.query<{ jkt: string; jti: string }>(
    `INSERT INTO dpop_proofs (jkt, jti, expires_at)
     SELECT jkt, jti, expires_at FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS proof (jkt, jti, expires_at)
     ON CONFLICT (jkt, jti) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE dpop_proofs.expires_at <= $4
     RETURNING jkt, jti`,
    [proofs.map((p) => p.jkt), proofs.map((p) => p.jti), proofs.map((p) => p.expiresAt.toISOString()), now.toISOString()],
  );
  return new Set(rows.map((row) => dpopProofKey(row.jkt, row.jti)));
}

/** One proof: recordDpopProofs of one; false for a replay. */
export async function recordDpopProof(db: Queryable, jkt: string, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
  return (await recordDpopProofs(db, [{ jkt, jti, expiresAt }], now)).size === 1;
}

/** Deletes the proofs no process could accept any more; returns how many. */
export async function purgeExpiredDpopProofs(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM dpop_proofs WHERE expires_at < now()');
  return rowCount;
}
