// timestamptz text as PostgreSQL writes it → RFC 3339 in UTC, whatever the session's time zone:
// behind a transaction-mode pooler it is the server's, not ours (docs/deploy.md, "Connection poolers").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTimestamptz } from '../../src/db/db.ts';

test('UTC text keeps its fraction, padded to milliseconds', () => {
  assert.equal(parseTimestamptz('2026-11-22 13:25:04.12+00'), '2026-11-22T13:25:04.120Z');
  assert.equal(parseTimestamptz('2026-11-22 13:25:04+00'), '2026-11-22T13:25:04.000Z');
  assert.equal(parseTimestamptz('2026-11-22 13:25:04.123456+00'), '2026-11-22T13:25:04.123456Z');
});

test('other offsets are converted to UTC, across days and years, the fraction kept as written', () => {
  assert.equal(parseTimestamptz('2026-11-22 18:55:04.12+05:30'), '2026-11-22T13:25:04.120Z');
  assert.equal(parseTimestamptz('2026-12-31 20:00:00.5-05'), '2027-01-01T01:00:00.500Z');
  assert.equal(parseTimestamptz('2027-01-01 00:30:00+01'), '2026-12-31T23:30:00.000Z');
  assert.equal(parseTimestamptz('2026-03-01 00:00:00.000001+01'), '2026-02-28T23:00:00.000001Z');
  // Historical zones write offsets in seconds (Amsterdam's local mean time before 1937).
  assert.equal(parseTimestamptz('1900-01-01 00:19:32+00:19:32'), '1900-01-01T00:00:00.000Z');
});

test('what is not a finite timestamp is passed on as written', () => {
  assert.equal(parseTimestamptz('infinity'), 'infinity');
  assert.equal(parseTimestamptz('0044-03-15 12:00:00+00 BC'), '0044-03-15 12:00:00+00 BC');
});
