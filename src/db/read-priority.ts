// Reads first on the one connection of the embedded database: what a read request asks of the
// database is queued ahead of what writes ask, so that a flood of payments (each several
// statements and two transactions) does not make every read wait for all of it. The edge marks a
// read request's work (src/http/connections.ts); the queue (./serial-queue.ts) reads the mark. On
// PostgreSQL, whose pool runs statements side by side, the mark changes nothing.
import { AsyncLocalStorage } from 'node:async_hooks';

const reading = new AsyncLocalStorage<true>();

/** Runs fn, and everything it starts, as the work of a read request. */
export function runAsRead<T>(fn: () => T): T {
  return reading.run(true, fn);
}

/** Whether the caller is the work of a read request. */
export function isReadWork(): boolean {
  return reading.getStore() === true;
}
