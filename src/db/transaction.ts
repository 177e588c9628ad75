// Transactions that PostgreSQL aborted as a serialization failure (40001) or a deadlock (40P01)
// did nothing and can simply run again: a bounded number of times, after a short random pause so
// the contenders do not collide again. Only when that runs out does the caller see the conflict.
import type { Db } from './db.ts';
import { isRetryableConflict } from './sqlstate.ts';

export const TRANSACTION_ATTEMPTS = 3;

const pause = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));

/** Runs fn, again while it fails with a retryable conflict, at most `attempts` times in all. */
export async function retryConflicts<T>(fn: () => Promise<T>, attempts = TRANSACTION_ATTEMPTS): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= attempts || !isRetryableConflict(error)) throw error;
      await pause(attempt);
    }
  }
}

/** The same Db, whose transactions are retried on serialization failures and deadlocks. */
export function withTransactionRetry(db: Db): Db {
  return {
    kind: db.kind,
    poolStats: () => db.poolStats(),
    query: (sql, params) => db.query(sql, params),
    exec: (sql) => db.exec(sql),
    transaction: (fn) => retryConflicts(() => db.transaction(fn)),
    close: () => db.close(),
  };
}
