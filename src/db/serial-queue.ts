// One thing at a time: each function passed to the queue starts only after the previous one has
// settled. PGlite is one connection, so every use of it (in the server, and by a command over the
// embedded database's socket) goes through such a queue, and a statement can never land inside
// another caller's open transaction.

export type SerialQueue = <T>(fn: () => Promise<T>) => Promise<T>;

export function createSerialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}
