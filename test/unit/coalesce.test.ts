// Coalesced point reads (src/db/coalesce.ts): the reads asked for in one turn of the event loop
// share one call per group; every caller gets its own key's value, and a failure reaches each.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { coalesceReads } from '../../src/db/coalesce.ts';

/** A reader over a table of id → value per group, recording the calls it makes. */
function recordingReader(table: Record<string, Record<number, string>>, maxBatch?: number) {
  const calls: { group: string; keys: number[] }[] = [];
  const read = coalesceReads({
    groupKey: (group: string) => group,
    readMany: async (group: string, keys: number[]) => {
      calls.push({ group, keys });
      return new Map(keys.filter((key) => table[group]?.[key] !== undefined).map((key) => [key, table[group]![key]!]));
    },
    maxBatch,
  });
  return { read, calls };
}

describe('coalesceReads', () => {
  test('the reads of one turn are one call per group, each key once; each caller gets its value', async () => {
    const { read, calls } = recordingReader({ a: { 1: 'a1', 2: 'a2' }, b: { 1: 'b1' } });
    const values = await Promise.all([read('a', 1), read('a', 2), read('b', 1), read('a', 1), read('a', 3), read('b', 2)]);
    assert.deepEqual(values, ['a1', 'a2', 'b1', 'a1', undefined, undefined]);
    assert.deepEqual(calls, [
      { group: 'a', keys: [1, 2, 3] },
      { group: 'b', keys: [1, 2] },
    ]);
  });

  test('a read asked for in a later turn goes in a call of its own', async () => {
    const { read, calls } = recordingReader({ a: { 1: 'a1', 2: 'a2' } });
    const first = read('a', 1);
    await nextTurn();
    const second = read('a', 2);
    assert.deepEqual(await Promise.all([first, second]), ['a1', 'a2']);
    assert.deepEqual(calls, [
      { group: 'a', keys: [1] },
      { group: 'a', keys: [2] },
    ]);
  });

  test('more keys than maxBatch are read in several calls', async () => {
    const table = { a: Object.fromEntries(Array.from({ length: 7 }, (_, i) => [i, `v${i}`])) };
    const { read, calls } = recordingReader(table, 3);
    const values = await Promise.all(Array.from({ length: 7 }, (_, i) => read('a', i)));
    assert.deepEqual(values, ['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6']);
    assert.deepEqual(
      calls.map((call) => call.keys),
      [[0, 1, 2], [3, 4, 5], [6]],
    );
  });

  test('a failed call rejects every read it carried, and only those', async () => {
    const failure = new Error('connection lost');
    const read = coalesceReads({
      groupKey: (group: string) => group,
      readMany: async (group: string, keys: number[]) => {
        if (group === 'broken') throw failure;
        return new Map(keys.map((key) => [key, key * 10]));
      },
    });
    const results = await Promise.allSettled([read('broken', 1), read('ok', 2), read('broken', 3), read('broken', 1)]);
    assert.deepEqual(results, [
      { status: 'rejected', reason: failure },
      { status: 'fulfilled', value: 20 },
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
    ]);
  });
});
