// The days a daily report reads (src/core/day-range.ts): defaults around today (UTC), the bounds,
// and what is no range at all.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DomainError } from '../../src/core/errors.ts';
import { MAX_RANGE_DAYS, MAX_REPORT_ROWS, readReport, resolveDayRange } from '../../src/core/day-range.ts';

const NOW = new Date('2026-03-01T23:59:59.999Z');

function refusal(run: () => unknown): { parameter: string; detail: string } {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof DomainError);
    assert.equal(error.code, 'REQUEST_PARAMETER_INVALID');
    return (error.options as { errors: { parameter: string; detail: string }[] }).errors[0]!;
  }
  assert.fail('not refused');
}

describe('resolveDayRange', () => {
  test('no days named: the 30 that end today (UTC), whatever the hour', () => {
    assert.deepEqual(resolveDayRange({}, NOW), { from: '2026-01-31', to: '2026-03-01' });
    assert.deepEqual(resolveDayRange({}, new Date('2026-03-02T00:00:00Z')), { from: '2026-02-01', to: '2026-03-02' });
  });

  test('only to: the 30 days that end at it; only from: the 30 from it, or up to today where that comes first', () => {
    // 2024 is a leap year: February's 29 days and 1 March.
    assert.deepEqual(resolveDayRange({ to: '2024-03-01' }, NOW), { from: '2024-02-01', to: '2024-03-01' });
    assert.deepEqual(resolveDayRange({ from: '2024-02-01' }, NOW), { from: '2024-02-01', to: '2024-03-01' });
    assert.deepEqual(resolveDayRange({ from: '2026-02-20' }, NOW), { from: '2026-02-20', to: '2026-03-01' });
    // A from after today reads that one day: the range is never backwards.
    assert.deepEqual(resolveDayRange({ from: '2026-04-01' }, NOW), { from: '2026-04-01', to: '2026-04-01' });
  });

  test(`both named: as named, one day up to ${MAX_RANGE_DAYS}`, () => {
    assert.deepEqual(resolveDayRange({ from: '2024-02-29', to: '2024-02-29' }, NOW), { from: '2024-02-29', to: '2024-02-29' });
    assert.deepEqual(resolveDayRange({ from: '2025-01-01', to: '2025-04-02' }, NOW), { from: '2025-01-01', to: '2025-04-02' });
    assert.deepEqual(
      refusal(() => resolveDayRange({ from: '2025-01-01', to: '2025-04-03' }, NOW)),
      {
        parameter: 'to',
        detail: `the range holds 93 days; at most ${MAX_RANGE_DAYS} are read at once`,
      },
    );
    assert.deepEqual(
      refusal(() => resolveDayRange({ from: '2025-01-02', to: '2025-01-01' }, NOW)),
      {
        parameter: 'from',
        detail: 'from is later than to',
      },
    );
  });

  test('a day that is no calendar day is refused, naming its parameter', () => {
    assert.equal(refusal(() => resolveDayRange({ from: '2025-02-29' }, NOW)).parameter, 'from');
    assert.equal(refusal(() => resolveDayRange({ to: '2025-13-01' }, NOW)).parameter, 'to');
  });
});

describe('readReport', () => {
  test('hands the store the range, the currency and one row more than an answer holds; more rows than that are a 400', async () => {
    let seen: unknown;
    const report = await readReport({ from: '2026-01-01', to: '2026-01-02', currency: 'EUR' }, NOW, async (filter) => {
      seen = filter;
      return [1, 2];
    });
    assert.deepEqual(seen, { range: { from: '2026-01-01', to: '2026-01-02' }, currency: 'EUR', limit: MAX_REPORT_ROWS + 1 });
    assert.deepEqual(report, { range: { from: '2026-01-01', to: '2026-01-02' }, rows: [1, 2] });
    await assert.rejects(
      readReport({}, NOW, async () => new Array(MAX_REPORT_ROWS + 1).fill(0)),
      (error) => error instanceof DomainError && /more than 10000 rows/.test(error.message),
    );
    await assert.rejects(
      readReport({ currency: 'ABC' }, NOW, async () => []),
      (error) => error instanceof DomainError && error.message === '"ABC" is not an ISO 4217 currency code.',
    );
  });
});
