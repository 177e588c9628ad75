// Point reads asked for in the same turn of the event loop, answered by one statement per group.
// Under concurrent load many requests each look up one row; one round trip for all of them costs
// PostgreSQL and this process a fraction of one per request. A batch is sent at the end of the
// turn its first read was asked in (setImmediate), so every read still sees each write committed
// before it was asked for: nothing is cached, only the round trip is shared.

/** One group's reads of a turn: the keys asked for, each with its callers. */
interface PendingGroup<G, K, V> {
  group: G;
  waiters: Map<K, { resolve: (value: V | undefined) => void; reject: (error: unknown) => void }[]>;
}

export interface CoalescedReads<G, K, V> {
  /** Which reads may share a statement: reads of one group key go together (the caller's scope). */
  groupKey: (group: G) => string;
  /** Reads the keys of one group; a key missing from the map reads as undefined. */
  readMany: (group: G, keys: K[]) => Promise<Map<K, V>>;
  /** Most keys per statement (default 100). */
  maxBatch?: number;
}

export function coalesceReads<G, K, V>({
  groupKey,
  readMany,
  maxBatch = 100,
}: CoalescedReads<G, K, V>): (group: G, key: K) => Promise<V | undefined> {
  let pending = new Map<string, PendingGroup<G, K, V>>();

  function readChunk({ group, waiters }: PendingGroup<G, K, V>, keys: K[]): void {
    readMany(group, keys).then(
      (values) => {
        for (const key of keys) for (const waiter of waiters.get(key)!) waiter.resolve(values.get(key));
      },
      (error: unknown) => {
        for (const key of keys) for (const waiter of waiters.get(key)!) waiter.reject(error);
      },
    );
  }

  function flushTurn(): void {
    const groups = pending;
    pending = new Map();
    for (const batch of groups.values()) {
      const keys = [...batch.waiters.keys()];
      for (let start = 0; start < keys.length; start += maxBatch) readChunk(batch, keys.slice(start, start + maxBatch));
    }
  }

  return function readCoalesced(group, key) {
    if (pending.size === 0) setImmediate(flushTurn);
    const id = groupKey(group);
    let batch = pending.get(id);
    if (!batch) {
      batch = { group, waiters: new Map() };
      pending.set(id, batch);
    }
    const waiters = batch.waiters.get(key) ?? [];
    batch.waiters.set(key, waiters);
    return new Promise<V | undefined>((resolve, reject) => waiters.push({ resolve, reject }));
  };
}

/** One value per database handle, made on first use (a handle's coalesced readers). */
export function perDatabase<D extends object, T>(make: (db: D) => T): (db: D) => T {
  const made = new WeakMap<D, T>();
  return (db) => {
    const known = made.get(db);
    if (known !== undefined) return known;
    const value = make(db);
    made.set(db, value);
    return value;
  };
}
