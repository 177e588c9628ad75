// What a request that made a payment or refund answers with: the record once it is in a status the
// request's API version shows (v1 and v2 show only final outcomes; docs/payments.md, "Versions").
// The record is driven one step (phases 2 and 3) and, if its status is not shown yet, read again
// until it is or the wait runs out; its response is stored with the outcome where this request
// commits it, or in a transaction of its own where another driver did.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db, Queryable } from '../db/db.ts';

export interface AwaitOptions<T> {
  db: Db;
  /** Whether the request's version shows the record in its current status. */
  shows(record: T): boolean;
  /** How long to wait for a shown status after the processor's answer (ORDERPAY_PAYMENTS_WAIT_MS). */
  waitMs: number;
  /** Stores the response for the record in tx. */
  complete(tx: Queryable, record: T): Promise<void>;
}

/** Between reads of a record whose outcome another driver (an event, the completer) will commit. */
const READ_INTERVAL_MS = 100;

/**
 * Drives the record with `advance` and returns it in a shown status, its response stored; undefined
 * when the wait ran out first (the caller answers 503, and a retry waits again).
 */
export async function awaitShownOutcome<T>(
  advance: (within: (tx: Queryable, record: T) => Promise<void>) => Promise<T>,
  reread: () => Promise<T>,
  options: AwaitOptions<T>,
): Promise<T | undefined> {
  let stored = false;
  let record = await advance(async (tx, changed) => {
    if (!options.shows(changed)) return;
    await options.complete(tx, changed);
    stored = true;
  });
  if (stored) return record;
  const deadline = Date.now() + options.waitMs;
  while (!options.shows(record)) {
    if (Date.now() >= deadline) return undefined;
    await sleep(Math.min(READ_INTERVAL_MS, deadline - Date.now()));
    record = await reread();
  }
  const shown = record;
  await options.db.transaction((tx) => options.complete(tx, shown));
  return shown;
}
