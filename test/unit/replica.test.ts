// The read replica's bookkeeping (src/db/replica.ts): WAL positions, and which primary position a
// replica must have replayed to be within the staleness bound.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseLsn, positionAt, pruneSamples } from '../../src/db/replica.ts';

test('pg_lsn text → a byte position, ordered as the WAL is', () => {
  assert.equal(parseLsn('0/0'), 0n);
  assert.equal(parseLsn('0/16B3748'), 0x16b3748n);
  assert.equal(parseLsn('16/B374D848'), (0x16n << 32n) | 0xb374d848n);
  assert.ok(parseLsn('1/0') > parseLsn('0/FFFFFFFF'));
});

const samples = () => [
  { at: 1000, lsn: 10n },
  { at: 1100, lsn: 20n },
  { at: 1200, lsn: 35n },
];

test('the bound is the newest sample taken at or before the moment; before every sample, the oldest (stricter)', () => {
  assert.equal(positionAt(samples(), 1150), 20n);
  assert.equal(positionAt(samples(), 1200), 35n);
  assert.equal(positionAt(samples(), 5000), 35n);
  assert.equal(positionAt(samples(), 900), 10n);
  assert.equal(positionAt([], 900), undefined);
});

test('pruning keeps the newest sample older than the horizon and everything after it', () => {
  const kept = samples();
  pruneSamples(kept, 1150);
  assert.deepEqual(kept, samples().slice(1));
  assert.equal(positionAt(kept, 1150), 20n, 'what the bound needs survives pruning');
  const none = samples();
  pruneSamples(none, 500);
  assert.deepEqual(none, samples());
});
