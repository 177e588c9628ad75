// The bounded map of long credentials that hashes only their tails: a key is found only by itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TailKeyedMap } from '../../src/http/tail-keyed-map.ts';

const token = (payload: string, signature: string) => `Bearer eyJhbGciOiJFUzI1NiJ9.${payload}.${signature}`;
const SIGNATURE = 'MEUCIQDx7yZ3mH0b9wFq2Lk8aPc4sV1nTu6rGe5jKd3oYhW2iQIgBv';

test('a key is found by itself, not by another that shares its tail', () => {
  const map = new TailKeyedMap<string>(10);
  map.set(token('eyJzdWIiOiIxIn0', SIGNATURE), 'one');
  assert.equal(map.get(token('eyJzdWIiOiIxIn0', SIGNATURE)), 'one');
  // The same signature under another payload: a forged token must not find the verified one.
  assert.equal(map.get(token('eyJzdWIiOiIyIn0', SIGNATURE)), undefined);
  // Setting it replaces the entry of that tail; the first key is then not found (verified again).
  map.set(token('eyJzdWIiOiIyIn0', SIGNATURE), 'two');
  assert.equal(map.get(token('eyJzdWIiOiIyIn0', SIGNATURE)), 'two');
  assert.equal(map.get(token('eyJzdWIiOiIxIn0', SIGNATURE)), undefined);
  // Short keys are their own tails.
  map.set('short', 'three');
  assert.equal(map.get('short'), 'three');
  assert.equal(map.get('shor'), undefined);
});

test('when full, the oldest entry goes; setting a key again takes no other entry out', () => {
  const map = new TailKeyedMap<number>(2);
  map.set(token('a', `${SIGNATURE}1`), 1);
  map.set(token('b', `${SIGNATURE}2`), 2);
  map.set(token('b', `${SIGNATURE}2`), 22);
  assert.equal(map.get(token('a', `${SIGNATURE}1`)), 1);
  map.set(token('c', `${SIGNATURE}3`), 3);
  assert.equal(map.get(token('a', `${SIGNATURE}1`)), undefined);
  assert.equal(map.get(token('b', `${SIGNATURE}2`)), 22);
  assert.equal(map.get(token('c', `${SIGNATURE}3`)), 3);
});
