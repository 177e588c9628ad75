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

test('every fraction length of UTC text reads as the offset path would read it', () => {
  for (let digits = 0; digits <= 6; digits++) {
    const fraction = '123456'.slice(0, digits);
    const utc = `2026-11-22 13:25:04${digits ? `.${fraction}` : ''}+00`;
    const sameInstant = `2026-11-22 14:25:04${digits ? `.${fraction}` : ''}+01`;
    assert.equal(parseTimestamptz(utc), parseTimestamptz(sameInstant));
  }
  // Not PostgreSQL's form: passed on as written rather than taken apart by position.
  assert.equal(parseTimestamptz('2026-11-22 13:25:04.+00'), '2026-11-22 13:25:04.+00');
  assert.equal(parseTimestamptz('2026-11-22 13:25:04.1x+00'), '2026-11-22 13:25:04.1x+00');
});
