// One thing at a time: each function passed to the queue starts only after the previous one has
// settled. PGlite is one connection, so every use of it (in the server, and by a command over the
// embedded database's socket) goes through such a queue, and a statement can never land inside
// another caller's open transaction.
//
// The work of read requests goes ahead of other waiting work, a few in a row at most: a read waits
// for what is running, not for everything payments have queued (src/db/read-priority.ts;
// docs/decisions/0099-reads-first-on-embedded-database.md). The bound keeps writes moving under a
// flood of reads.
import type { PoolStats } from './db.ts';
import { isReadWork } from './read-priority.ts';

export interface SerialQueue {
  <T>(fn: () => Promise<T>): Promise<T>;
  /** Queued and running work: the connection is in use while any runs, and the rest wait (metrics). */
  readonly pending: number;
}

/** Read work runs ahead of waiting writes at most this many times in a row. */
const READS_AHEAD = 4;

export function createSerialQueue(): SerialQueue {
  const waiting = { read: [] as (() => void)[], write: [] as (() => void)[] };
  let running = false;
  let scheduled = false;
  let readsInARow = 0;
  let pending = 0;

  /** Starts the next work, if the connection is free: a read's unless a write has waited long enough. */
  const startNext = () => {
    if (running) return;
    const read = waiting.read.length > 0 && (waiting.write.length === 0 || readsInARow < READS_AHEAD);
    const next = read ? waiting.read.shift() : waiting.write.shift();
    if (!next) return;
    readsInARow = read ? readsInARow + 1 : 0;
    running = true;
    next();
  };

  /**
   * PGlite runs each statement on this thread: work starts on a turn of the event loop of its own,
   * never straight from the work before it, so that sockets (new requests, answers) are served
   * between them. Chained from one another, a busy queue ran in one turn for as long as callers
   * kept it fed: reads beside 50 paying connections waited seconds to be read at all.
   */
  const scheduleNext = () => {
    if (scheduled || running) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      startNext();
    });
  };

  const enqueue = <T>(fn: () => Promise<T>): Promise<T> => {
    pending++;
    return new Promise<T>((resolve, reject) => {
      waiting[isReadWork() ? 'read' : 'write'].push(() => {
        // A function that throws instead of rejecting must not leave the connection marked busy.
        new Promise<T>((settle) => settle(fn())).then(resolve, reject).finally(() => {
          pending--;
          running = false;
          scheduleNext();
        });
      });
      scheduleNext();
    });
  };
  return Object.defineProperty(enqueue, 'pending', { get: () => pending }) as SerialQueue;
}

/** The pool figures of one connection behind a queue: in use while anything runs, the rest waiting. */
export function serialPoolStats(queue: SerialQueue): PoolStats {
  return { max: 1, open: 1, inUse: Math.min(queue.pending, 1), waiting: Math.max(queue.pending - 1, 0) };
}
