// npm run bench:check: a short run whose Node CPU per request is compared with the committed
// results' as the node ratio, baseline ÷ orderpay. Both servers are measured in the same run on the
// same machine, so the ratio carries from the machine that made the committed file to this one,
// where the microseconds themselves do not. Run before committing a change to the request path;
// it never writes a results file or the page (docs/decisions/0122-bench-check-node-ratio.md).
import { alignColumns, int, pct } from './markdown.ts';
import type { BenchResults, ScenarioResult } from './report.ts';

/**
 * A short run over the id lookup, the lists and the payments: three rounds of 2 s per column, the
 * columns taking turns to go first, after 2 s of warm-up: a narrower spread than one round of 5 s,
 * for 17 s more (the record).
 */
export const CHECK_SETTINGS = { rounds: 3, seconds: 2, warmupSeconds: 2, scenarios: 'a,b,c,d,e' };

/**
 * How far a scenario's node ratio may fall below the committed one, in percent: above the falls
 * short runs showed on two cores shared with other work (the record), and tripped by a change that
 * costs orderpay about 1.4× its Node CPU per request in one scenario.
 */
export const CHECK_TOLERANCE_PERCENT = 30;

interface NodeCost {
  orderpayUs: number;
  baselineUs: number;
  /** baseline ÷ orderpay, as the page's "node ratio". */
  ratio: number;
}

/** better: the ratio rose beyond the tolerance (a full `npm run bench` would record it). */
export type CheckVerdict = 'ok' | 'better' | 'WORSE' | 'errors' | 'unmeasured';

export interface CostComparison {
  label: string;
  committed: NodeCost;
  now: NodeCost;
  /** The now ratio relative to the committed one: −0.3 is 30% lower. */
  change: number;
  verdict: CheckVerdict;
}

const nodeCost = ({ orderpay, baseline }: ScenarioResult): NodeCost => ({
  orderpayUs: orderpay.serverCpuUs,
  baselineUs: baseline.serverCpuUs,
  ratio: baseline.serverCpuUs / orderpay.serverCpuUs,
});

function judgeChange(result: ScenarioResult, change: number, tolerance: number): CheckVerdict {
  // A run with failed requests measured something other than the scenario.
  if (result.orderpay.errors + result.baseline.errors > 0) return 'errors';
  // No /proc, or no response: nothing to compare.
  if (!Number.isFinite(change)) return 'unmeasured';
  if (change < -tolerance) return 'WORSE';
  return change > tolerance ? 'better' : 'ok';
}

/** Each scenario run now beside the same scenario's committed figures; tolerance is a fraction (0.25). */
export function compareNodeCost(committed: ScenarioResult[], now: ScenarioResult[], tolerance: number): CostComparison[] {
  return now.map((result) => {
    const { key, title } = result.scenario;
    const before = committed.find((r) => r.scenario.key === key);
    if (!before) throw new Error(`(${key}) is not in the committed results`);
    const [then, current] = [nodeCost(before), nodeCost(result)];
    const change = current.ratio / then.ratio - 1;
    return { label: `(${key}) ${title}`, committed: then, now: current, change, verdict: judgeChange(result, change, tolerance) };
  });
}

export const checkPassed = (comparisons: CostComparison[]) => comparisons.every((c) => c.verdict === 'ok' || c.verdict === 'better');

const CHECK_HEADER = [
  'scenario',
  'committed orderpay µs',
  'baseline µs',
  'now orderpay µs',
  'baseline µs',
  'committed ratio',
  'now ratio',
  'change',
  'verdict',
];

function signedPct(share: number): string {
  if (!Number.isFinite(share)) return '—';
  const percent = Math.round(share * 100);
  return `${percent < 0 ? '−' : '+'}${Math.abs(percent)}%`;
}

export function formatCheckTable(comparisons: CostComparison[]): string {
  const rows = comparisons.map(({ label, committed, now, change, verdict }) => [
    label,
    int(committed.orderpayUs),
    int(committed.baselineUs),
    int(now.orderpayUs),
    int(now.baselineUs),
    `${committed.ratio.toFixed(2)}×`,
    `${now.ratio.toFixed(2)}×`,
    signedPct(change),
    verdict,
  ]);
  return alignColumns([CHECK_HEADER, ...rows]);
}

interface CheckOptions {
  orders: number;
  scenarios: Set<string> | undefined;
  pooler: string | undefined;
  replica: string | undefined;
}

/**
 * The committed scenarios to compare with (committed: the results file at the run's size); throws,
 * before anything runs, where a comparison would mean nothing.
 */
export function committedScenarios(
  committed: BenchResults | undefined,
  { orders, scenarios, pooler, replica }: CheckOptions,
): ScenarioResult[] {
  if (pooler || replica) throw new Error('--check compares with direct connections to one server: unset BENCH_POOLER and BENCH_REPLICA');
  if (!committed) throw new Error(`--check needs bench/results/orders-${orders}.json to compare with`);
  const known = committed.scenarios.map((r) => r.scenario.key);
  const unknown = [...(scenarios ?? [])].filter((key) => !known.includes(key));
  if (unknown.length) throw new Error(`--check: no committed CPU per request for ${unknown.join(', ')} (known: ${known.join(', ')})`);
  return committed.scenarios;
}

/** Prints the comparison; returns the exit status, 1 when a scenario is neither ok nor better. */
export function reportCheck(
  run: Pick<BenchResults, 'info' | 'scenarios'>,
  committed: BenchResults | undefined,
  options: CheckOptions & { checkTolerance: number },
): number {
  const comparisons = compareNodeCost(committedScenarios(committed, options), run.scenarios, options.checkTolerance / 100);
  const { info } = committed!;
  const { others, steal } = run.info.interference;
  console.log(`
Node CPU per request, now and in bench/results/orders-${options.orders}.json (${info.command}, ${info.date.slice(0, 10)}, ${info.rounds} rounds × ${info.seconds} s);
ratio = baseline ÷ orderpay, failing ${options.checkTolerance}% below the committed one (BENCH_CHECK_TOLERANCE):
${formatCheckTable(comparisons)}

During the run other processes used ${pct(others)} of the machine's CPU time and the hypervisor stole ${pct(steal)}.`);
  const failed = comparisons.filter((c) => !checkPassed([c]));
  if (failed.length === 0) {
    console.log('bench:check: passed');
    return 0;
  }
  console.log(`bench:check: failed: ${failed.map((c) => `${c.label} ${c.verdict}`).join('; ')}`);
  return 1;
}
