// The Scale section of docs/benchmarks.md: the p50 of (a), (b), (c) and the deep pages (g) at 1M
// orders beside the same at another size (10M), each from its run's results file.
import type { DeepPageResult } from './deep-pages.ts';
import { int, mark, markdownTable, ms, pct, rate } from './markdown.ts';
import type { Aggregate, BenchResults } from './report.ts';

/** Target: a p50 at the larger size at most this many times the p50 at 1M. */
const SCALE_TARGET_RATIO = 1.5;
const SCALE_KEYS = ['a', 'b', 'c'];

/** 1M, 10M, 250k: how sizes are named in the page and in the default database names. */
export const sizeLabel = (orders: number) =>
  orders % 1e6 === 0 ? `${orders / 1e6}M` : orders % 1e3 === 0 ? `${orders / 1e3}k` : String(orders);

interface ScaleRow {
  label: string;
  reference: Aggregate | undefined;
  other: Aggregate | undefined;
  /** Whether the target applies: not to the baseline, nor to the deep page by number, which is deeper at the larger size. */
  judged: boolean;
}

function deepPageRows(title: string, reference: DeepPageResult | undefined, other: DeepPageResult | undefined): ScaleRow[] {
  const pages = `page ${reference ? int(reference.page) : '—'} → ${other ? int(other.page) : '—'}`;
  return [
    { label: `(g) ${title}, page 1`, reference: reference?.columns.first, other: other?.columns.first, judged: true },
    { label: `(g) ${title}, by cursor, ${pages}`, reference: reference?.columns.cursor, other: other?.columns.cursor, judged: true },
    { label: `(g) ${title}, page=N, ${pages}`, reference: reference?.columns.offset, other: other?.columns.offset, judged: false },
  ];
}

function scaleRows(reference: BenchResults, other: BenchResults): ScaleRow[] {
  const rows: ScaleRow[] = SCALE_KEYS.flatMap((key) => {
    const [ours, theirs] = [reference, other].map((results) => results.scenarios.find((r) => r.scenario.key === key));
    return [
      { label: `(${key}) ${(ours ?? theirs)?.scenario.title ?? ''}`, reference: ours?.orderpay, other: theirs?.orderpay, judged: true },
      // The raw baseline on the same requests, for information: how much of the growth is the data's.
      { label: `(${key}) baseline`, reference: ours?.baseline, other: theirs?.baseline, judged: false },
    ];
  });
  const collections = [...new Set([...reference.deepPages, ...other.deepPages].map((r) => r.collection))];
  for (const collection of collections) {
    const [ours, theirs] = [reference, other].map((results) => results.deepPages.find((r) => r.collection === collection));
    rows.push(...deepPageRows((ours ?? theirs)!.title, ours, theirs));
  }
  return rows;
}

/** A row's verdict: met when both sizes measured it and the p50 grew by at most the target; undefined when not judged. */
function verdictOf(row: ScaleRow): boolean | undefined {
  if (!row.judged) return undefined;
  return row.reference !== undefined && row.other !== undefined && row.other.p50Ms / row.reference.p50Ms <= SCALE_TARGET_RATIO;
}

export function scaleVerdicts(reference: BenchResults, other: BenchResults): boolean[] {
  return scaleRows(reference, other)
    .map(verdictOf)
    .filter((v) => v !== undefined);
}

function scaleTable(reference: BenchResults, other: BenchResults): string {
  const [small, large] = [sizeLabel(reference.info.orders), sizeLabel(other.info.orders)];
  const figures = (a: Aggregate | undefined) => (a ? [rate(a.requestsPerSecond), ms(a.p50Ms), ms(a.p99Ms)] : ['—', '—', 'not measured']);
  const rows = scaleRows(reference, other).map((row) => {
    const verdict = verdictOf(row);
    return [
      row.label,
      ...figures(row.reference),
      ...figures(row.other),
      row.reference && row.other ? `${(row.other.p50Ms / row.reference.p50Ms).toFixed(2)}×` : '—',
      verdict === undefined ? '—' : `≤ ${SCALE_TARGET_RATIO}× ${mark(verdict)}`,
    ];
  });
  return markdownTable(
    ['scenario', `${small} req/s`, 'p50 ms', 'p99 ms', `${large} req/s`, 'p50 ms', 'p99 ms', `p50 ${large} ÷ ${small}`, 'target'],
    rows,
  );
}

function comparison(reference: BenchResults, other: BenchResults): string {
  const { info } = other;
  return `
### ${sizeLabel(reference.info.orders)} vs ${sizeLabel(info.orders)} orders

${scaleTable(reference, other)}

The ${sizeLabel(info.orders)} figures are from \`bench/results/orders-${info.orders}.json\`: \`${info.command}\` on ${info.date}
(${info.rounds} rounds of ${info.seconds} s, ${info.connections} connections; other processes used ${pct(info.interference.others)} of the
machine's CPU time during it, ${pct(reference.info.interference.others)} during the ${sizeLabel(reference.info.orders)} run).
`;
}

export function renderScaleSection(reference: BenchResults, others: BenchResults[]): string {
  const body = others.length
    ? others.map((other) => comparison(reference, other)).join('')
    : `
No results at another size yet: \`BENCH_ORDERS=10000000 BENCH_SCENARIOS=a,b,c,g npm run bench\` (on the
database \`orderpay_bench_10m\`, seeded on its first use) adds them here.
`;
  return `
## Scale

orderpay's figures at ${sizeLabel(reference.info.orders)} orders beside the same requests at another size, each run
rendered from its own results file. Target: p50 at the larger size ≤ ${SCALE_TARGET_RATIO}× p50 at ${sizeLabel(reference.info.orders)} for (a),
(b), (c), and page 1 and the cursor of (g). The deep page by number is read at the same relative
depth, so it is that many times deeper at the larger size: its growth is what the cursor avoids,
for information. A figure a run did not measure counts as a miss. The seed keeps a customer's
orders as many at every size (10,000 customers up to 1M orders, one per 100 orders beyond), so
(b)'s filter (one customer, one status, a minimum total) selects and counts as many orders on
the bigger table: what grows is the table, not the answer.
${body}`;
}
