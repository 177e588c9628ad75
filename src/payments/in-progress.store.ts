// Payments and refunds in progress, in SQL: the processor's ids as it names them, and the
// completer's schedule and claims (src/flows/complete-payments.ts). Each row is driven by one
// process at a time under a lease; its outcome is written by payments.store.ts.
import type { Queryable } from '../db/db.ts';

/** What the completer drives, by table: payments and refunds whose outcome the processor has not given yet. */
const IN_PROGRESS = { payments: "status IN ('processing', 'requires_action')", refunds: "status = 'pending'" } as const;
type Driven = keyof typeof IN_PROGRESS;

/** The processor's id of a charge or refund, once it named it (for a charge: the recovery point before it is confirmed). */
async function recordProcessorReferenceOf(db: Queryable, table: Driven, id: number, processorReference: string): Promise<void> {
  await db.query(`UPDATE ${table} SET processor_reference = $2 WHERE id = $1 AND processor_reference IS NULL`, [id, processorReference]);
}

/** When the completer asks again about one in progress; a failure counts towards the schedule, an answer resets it. */
export interface NextAttempt {
  delaySeconds: number;
  failed: boolean;
}

async function scheduleAttemptOf(db: Queryable, table: Driven, id: number, attempt: NextAttempt): Promise<void> {
  await db.query(
    `UPDATE ${table} SET next_attempt_at = now() + make_interval(secs => $2), attempts = CASE WHEN $3::boolean THEN attempts + 1 ELSE 0 END
      WHERE id = $1 AND ${IN_PROGRESS[table]}`,
    [id, attempt.delaySeconds, attempt.failed],
  );
}

/** Flags one for a person, once (docs/payments.md, "Payments that need a person"); true when this flagged it. */
async function flagOf(db: Queryable, table: Driven, id: number, reason: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE ${table} SET needs_attention_since = now(), attention_reason = $2 WHERE id = $1 AND needs_attention_since IS NULL`,
    [id, reason],
  );
  return rowCount === 1;
}

/**
 * The completer's claim: up to `limit` in progress that are due, each leased for leaseSeconds so
 * that no other process drives it meanwhile. A process that dies leaves them due again when the
 * lease runs out.
 */
async function claimDueOf(db: Queryable, table: Driven, limit: number, leaseSeconds: number): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `UPDATE ${table} SET next_attempt_at = now() + make_interval(secs => $2)
      WHERE id IN (SELECT id FROM ${table} WHERE ${IN_PROGRESS[table]} AND next_attempt_at <= now()
                   ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id`,
    [limit, leaseSeconds],
  );
  return rows.map((row) => row.id);
}

export const recordProcessorReference = (db: Queryable, id: number, processorReference: string) =>
  recordProcessorReferenceOf(db, 'payments', id, processorReference);
export const recordRefundProcessorReference = (db: Queryable, id: number, processorReference: string) =>
  recordProcessorReferenceOf(db, 'refunds', id, processorReference);
export const schedulePaymentAttempt = (db: Queryable, id: number, attempt: NextAttempt) => scheduleAttemptOf(db, 'payments', id, attempt);
export const scheduleRefundAttempt = (db: Queryable, id: number, attempt: NextAttempt) => scheduleAttemptOf(db, 'refunds', id, attempt);
export const flagPayment = (db: Queryable, id: number, reason: string) => flagOf(db, 'payments', id, reason);
export const flagRefund = (db: Queryable, id: number, reason: string) => flagOf(db, 'refunds', id, reason);
export const claimDuePayments = (db: Queryable, limit: number, leaseSeconds: number) => claimDueOf(db, 'payments', limit, leaseSeconds);
export const claimDueRefunds = (db: Queryable, limit: number, leaseSeconds: number) => claimDueOf(db, 'refunds', limit, leaseSeconds);
