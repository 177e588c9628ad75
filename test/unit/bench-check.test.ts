// npm run bench:check, pure parts: the node ratio (baseline ÷ orderpay node µs per request) of a
// short run against the committed one, within a tolerance.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPassed, committedScenarios, compareNodeCost, formatCheckTable } from '../../bench/check.ts';
import { aggregate, type BenchResults, type Measurement, type ScenarioResult } from '../../bench/report.ts';

const column = (serverCpuUs: number, errors = 0): Measurement => ({
  requests: 1_000,
  requestsPerSecond: 1_000,
  p50Ms: 1,
  p99Ms: 5,
  errors,
  unexpected: 0,
  serverCpuUs,
  postgresCpuUs: 50,
});

const scenario = (key: string, orderpayUs: number, baselineUs: number, errors = 0): ScenarioResult => ({
  scenario: { key, title: `scenario ${key}`, orderpayRequest: 'GET /orders/1', baselineRequest: 'GET /orders/1' },
  orderpay: aggregate([column(orderpayUs, errors)]),
  baseline: aggregate([column(baselineUs)]),
});

// Committed: (a) 1.00×, (b) 0.50×.
const COMMITTED = [scenario('a', 100, 100), scenario('b', 300, 150)];

describe('bench:check compares node ratios', () => {
  test('the ratio is baseline ÷ orderpay, and the change is relative to the committed ratio', () => {
    const [a, b] = compareNodeCost(COMMITTED, [scenario('a', 50, 40), scenario('b', 200, 110)], 0.25);
    assert.deepEqual(a!.committed, { orderpayUs: 100, baselineUs: 100, ratio: 1 });
    assert.deepEqual(a!.now, { orderpayUs: 50, baselineUs: 40, ratio: 0.8 });
    assert.equal(a!.change.toFixed(2), '-0.20');
    assert.equal(b!.now.ratio, 0.55);
    assert.equal(b!.change.toFixed(2), '0.10');
  });

  test('a faster or slower machine moves both columns and leaves the verdict alone', () => {
    const [a, b] = compareNodeCost(COMMITTED, [scenario('a', 300, 300), scenario('b', 90, 45)], 0.25);
    assert.deepEqual(
      [a, b].map((c) => [c!.change, c!.verdict]),
      [
        [0, 'ok'],
        [0, 'ok'],
      ],
    );
  });

  test('WORSE below the tolerance, better above it, ok within it', () => {
    const verdicts = (orderpayUs: number, tolerance: number) =>
      compareNodeCost(COMMITTED, [scenario('a', orderpayUs, 100)], tolerance)[0]!.verdict;
    assert.equal(verdicts(130, 0.25), 'ok'); // 0.77×: 23% lower
    assert.equal(verdicts(140, 0.25), 'WORSE'); // 0.71×: 29% lower
    assert.equal(verdicts(140, 0.3), 'ok');
    assert.equal(verdicts(75, 0.25), 'better'); // 1.33×
    assert.equal(verdicts(100, 0.01), 'ok');
  });

  test('a scenario with errors or without CPU figures fails; only ok and better pass', () => {
    const comparisons = compareNodeCost(COMMITTED, [scenario('a', 100, 100, 3), scenario('b', Number.NaN, 150)], 0.25);
    assert.deepEqual(
      comparisons.map((c) => c.verdict),
      ['errors', 'unmeasured'],
    );
    assert.equal(checkPassed(comparisons), false);
    assert.equal(checkPassed(compareNodeCost(COMMITTED, [scenario('a', 75, 100), scenario('b', 300, 150)], 0.25)), true);
    assert.equal(checkPassed(compareNodeCost(COMMITTED, [scenario('a', 75, 100), scenario('b', 500, 150)], 0.25)), false);
  });

  test('a scenario the committed file does not have is refused', () => {
    assert.throws(() => compareNodeCost(COMMITTED, [scenario('d', 100, 100)], 0.25), /\(d\) is not in the committed results/);
  });

  test('before anything runs: no file, a scenario it lacks, or another topology is refused', () => {
    const committed = { scenarios: COMMITTED } as BenchResults;
    const options = { orders: 1_000_000, scenarios: new Set(['a', 'b']), pooler: undefined, replica: undefined };
    assert.equal(committedScenarios(committed, options), COMMITTED);
    assert.throws(() => committedScenarios(undefined, options), /needs bench\/results\/orders-1000000\.json/);
    assert.throws(
      () => committedScenarios(committed, { ...options, scenarios: new Set(['a', 'g']) }),
      /no committed CPU per request for g/,
    );
    assert.throws(() => committedScenarios(committed, { ...options, pooler: 'pgbouncer' }), /direct connections/);
  });

  test('the table shows both runs in µs, both ratios, the change and the verdict', () => {
    const table = formatCheckTable(compareNodeCost(COMMITTED, [scenario('a', 125, 100), scenario('b', 290, 150)], 0.25));
    const [header, ...rows] = table.split('\n').map((line) => line.split(/\s{2,}/));
    assert.deepEqual([header!.length, header![0], header!.at(-1)], [9, 'scenario', 'verdict']);
    assert.deepEqual(rows, [
      ['(a) scenario a', '100', '100', '125', '100', '1.00×', '0.80×', '−20%', 'ok'],
      ['(b) scenario b', '300', '150', '290', '150', '0.50×', '0.52×', '+3%', 'ok'],
    ]);
  });
});
