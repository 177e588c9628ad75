// One thing at a time: each function passed to the queue starts only after the previous one has
// settled. PGlite is one connection, so every use of it (in the server, and by a command over the
// embedded database's socket) goes through such a queue, and a statement can never land inside
// another caller's open transaction.
import type { PoolStats } from './db.ts';

export interface SerialQueue {
  <T>(fn: () => Promise<T>): Promise<T>;
  /** Queued and running work: the connection is in use while any runs, and the rest wait (metrics). */
  readonly pending: number;
}

export function createSerialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve();
  let pending = 0;
  const enqueue = <T>(fn: () => Promise<T>): Promise<T> => {
    pending++;
    const run = tail.then(fn, fn).finally(() => pending--);
    tail = run.catch(() => undefined);
    return run;
  };
  return Object.defineProperty(enqueue, 'pending', { get: () => pending }) as SerialQueue;
}

/** The pool figures of one connection behind a queue: in use while anything runs, the rest waiting. */
export function serialPoolStats(queue: SerialQueue): PoolStats {
  return { max: 1, open: 1, inUse: Math.min(queue.pending, 1), waiting: Math.max(queue.pending - 1, 0) };
}
