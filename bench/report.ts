// Results: aggregation of the interleaved rounds, the console table, and docs/benchmarks.md, which
// is rendered from the results files of bench/results/ (the 1M run's, and the other sizes' in its
// Scale section).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { CHECK_SETTINGS, CHECK_TOLERANCE_PERCENT } from './check.ts';
import {
  BENCH_STATEMENT_TIMEOUT_MS,
  DEEP_PAGE_CONNECTIONS,
  deepPageRows,
  DEEP_PAGE_HEADER,
  judgeDeepPage,
  renderDeepPagesSection,
  type DeepPageResult,
} from './deep-pages.ts';
import { renderDpopSection, type DpopResults } from './dpop-report.ts';
import type { LoadResult } from './load.ts';
import { alignColumns, int, mark, markdownTable, ms, pct } from './markdown.ts';
import { renderEmbeddedMemorySection, type EmbeddedMemory } from './embedded-memory.ts';
import { allocatorsLine, renderRssSection, rssMet, rssRows, RSS_HEADER, type RssReport } from './rss.ts';
import { renderProfileSection, type ProfileRun } from './profile-report.ts';
import { renderScaleSection, scaleVerdicts } from './scale.ts';
import { customersFor } from './seed.ts';
import { P99_TARGET_MS, targetsOf } from './targets.ts';
import type { WebhookScenario } from './webhooks.ts';
import {
  renderSlowProcessorSection,
  SLOW_PROCESSOR_HEADER,
  slowProcessorMet,
  slowProcessorRows,
  type SlowProcessorResult,
} from './slow-processor.ts';

export interface Scenario {
  key: string;
  title: string;
  /** Example request as orderpay gets it and as the baseline gets it (or as the two columns get it). */
  orderpayRequest: string;
  baselineRequest: string;
  /** What the two columns are when they are not orderpay and the baseline. */
  labels?: readonly [string, string];
}

/** One bounded load run with the CPU it cost the server and PostgreSQL per request. */
export interface Measurement extends LoadResult {
  serverCpuUs: number;
  postgresCpuUs: number;
}

export interface Aggregate {
  /** Mean of the rounds. */
  requestsPerSecond: number;
  /** Median of the rounds' p50. */
  p50Ms: number;
  /** Worst of the rounds' p99 (conservative against the target). */
  p99Ms: number;
  errors: number;
  /** Mean of the rounds: CPU microseconds per request of the server process and of PostgreSQL. */
  serverCpuUs: number;
  postgresCpuUs: number;
  rounds: Measurement[];
}

export interface ScenarioResult {
  scenario: Scenario;
  orderpay: Aggregate;
  baseline: Aggregate;
}

export interface RunInfo {
  /** ISO 8601. */
  date: string;
  command: string;
  orders: number;
  connections: number;
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  loadGenerator: string;
  postgresVersion: string;
  machine: Machine;
  seedSeconds: number | undefined;
  interference: Interference;
  /** The dispatcher's throughput to local receivers, (j), when measured. */
  webhookScenarios?: WebhookScenario[];
  /** Where (j)'s figures come from when not from this run (written into the results file by hand). */
  webhookScenariosSource?: string;
  /** The Node flags orderpay ran with (npm start's at the time of the run). */
  orderpayNodeFlags: readonly string[];
}

export interface Machine {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
}

/** Everything a run measured: what its results file holds, and what the page is rendered from. */
export interface BenchResults {
  info: RunInfo;
  scenarios: ScenarioResult[];
  deepPages: DeepPageResult[];
  rss: RssReport;
  /** The embedded database's memory, measured by full runs. */
  embeddedMemory?: EmbeddedMemory[];
  /** (i): payments against a slow processor, with reads beside them. */
  slowProcessor?: SlowProcessorResult;
}

/** Shares (0–1) of the machine's CPU time during the measurements taken by other processes and by the hypervisor. */
export interface Interference {
  others: number;
  steal: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;

export function aggregate(rounds: Measurement[]): Aggregate {
  return {
    requestsPerSecond: mean(rounds.map((r) => r.requestsPerSecond)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: Math.max(...rounds.map((r) => r.p99Ms)),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    serverCpuUs: mean(rounds.map((r) => r.serverCpuUs)),
    postgresCpuUs: mean(rounds.map((r) => r.postgresCpuUs)),
    rounds,
  };
}

export interface Verdict {
  ratio: number;
  ratioMet: boolean;
  p99Met: boolean;
  /** Node CPU per request, baseline ÷ orderpay, against its target. */
  nodeRatioMet: boolean;
}

/** A run's figures against today's targets (bench/targets.ts). */
export function judge(result: ScenarioResult): Verdict {
  const ratio = result.orderpay.requestsPerSecond / result.baseline.requestsPerSecond;
  const nodeRatio = result.baseline.serverCpuUs / result.orderpay.serverCpuUs;
  const targets = targetsOf(result.scenario.key);
  return {
    ratio,
    ratioMet: targets.ratio === undefined || ratio >= targets.ratio,
    p99Met: targets.p99Ms === undefined || result.orderpay.p99Ms <= targets.p99Ms,
    nodeRatioMet: targets.nodeRatio === undefined || nodeRatio >= targets.nodeRatio,
  };
}

function resultRows(results: ScenarioResult[]): string[][] {
  return results.map((r) => {
    const v = judge(r);
    const targets = targetsOf(r.scenario.key);
    return [
      `(${r.scenario.key}) ${r.scenario.title}`,
      int(r.orderpay.requestsPerSecond),
      ms(r.orderpay.p50Ms),
      ms(r.orderpay.p99Ms),
      int(r.baseline.requestsPerSecond),
      ms(r.baseline.p50Ms),
      ms(r.baseline.p99Ms),
      `${v.ratio.toFixed(2)}×`,
      targets.ratio === undefined ? '—' : `≥ ${targets.ratio}× ${mark(v.ratioMet)}`,
      targets.p99Ms === undefined ? '—' : `≤ ${targets.p99Ms} ms ${mark(v.p99Met)}`,
    ];
  });
}

const HEADER = [
  'scenario',
  'orderpay req/s',
  'p50 ms',
  'p99 ms',
  'baseline req/s',
  'p50 ms',
  'p99 ms',
  'ratio',
  'ratio target',
  'p99 target',
];

const COST_HEADER = [
  'scenario',
  'orderpay node µs/req',
  'pg µs/req',
  'baseline node µs/req',
  'pg µs/req',
  'node ratio',
  'node ratio target',
  'node+pg ratio',
];

/** CPU per request; a ratio is baseline ÷ orderpay, comparable with the throughput ratio. */
function costRows(results: ScenarioResult[]): string[][] {
  const ratio = (ours: number, theirs: number) => `${(theirs / ours).toFixed(2)}×`;
  return results.map((result) => {
    const { scenario, orderpay: o, baseline: b } = result;
    const target = targetsOf(scenario.key).nodeRatio;
    return [
      `(${scenario.key}) ${scenario.title}`,
      int(o.serverCpuUs),
      int(o.postgresCpuUs),
      int(b.serverCpuUs),
      int(b.postgresCpuUs),
      ratio(o.serverCpuUs, b.serverCpuUs),
      target === undefined ? '—' : `≥ ${target.toFixed(2)}× ${mark(judge(result).nodeRatioMet)}`,
      ratio(o.serverCpuUs + o.postgresCpuUs, b.serverCpuUs + b.postgresCpuUs),
    ];
  });
}

export function formatConsoleTable({
  scenarios,
  deepPages,
  rss,
  slowProcessor,
}: Pick<BenchResults, 'scenarios' | 'deepPages' | 'rss' | 'slowProcessor'>): string {
  const parts = [];
  if (scenarios.length) {
    parts.push(
      alignColumns([HEADER, ...resultRows(scenarios)]),
      `CPU per request (steadier than req/s when other work shares the machine):\n${alignColumns([COST_HEADER, ...costRows(scenarios)])}`,
    );
  }
  if (deepPages.length) parts.push(`(g) deep pages:\n${alignColumns([DEEP_PAGE_HEADER, ...deepPageRows(deepPages)])}`);
  if (slowProcessor) parts.push(`(i) a slow processor:\n${alignColumns([SLOW_PROCESSOR_HEADER, ...slowProcessorRows(slowProcessor)])}`);
  parts.push(`(h) resident memory, MB (${allocatorsLine(rss)}):\n${alignColumns([RSS_HEADER, ...rssRows(rss)])}`);
  return parts.join('\n\n');
}

function cpuModel(): string {
  try {
    return /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  } catch {
    return os.cpus()[0]?.model ?? 'unknown';
  }
}

/** The machine a run measured on, recorded with its results (the page may be rendered elsewhere). */
export function describeMachine(): Machine {
  return { cores: os.cpus().length, cpuModel: cpuModel(), memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version };
}

function roundsTable(results: ScenarioResult[]): string {
  const rows = results.flatMap((r) =>
    r.orderpay.rounds.map((op, i) => {
      const base = r.baseline.rounds[i]!;
      return [
        `(${r.scenario.key})`,
        String(i + 1),
        int(op.requestsPerSecond),
        ms(op.p50Ms),
        ms(op.p99Ms),
        int(base.requestsPerSecond),
        ms(base.p50Ms),
        ms(base.p99Ms),
        `${(op.requestsPerSecond / base.requestsPerSecond).toFixed(2)}×`,
      ];
    }),
  );
  return markdownTable(['scenario', 'round', 'orderpay req/s', 'p50 ms', 'p99 ms', 'baseline req/s', 'p50 ms', 'p99 ms', 'ratio'], rows);
}

function webhookSection(scenarios: WebhookScenario[], source: string | undefined): string {
  const rows = scenarios.map(({ key, label, result }) => [
    `(${key})`,
    label,
    result.seconds.toFixed(2),
    int(result.deliveriesPerSecond),
    int(result.duplicates),
  ]);
  const alone = scenarios.find((s) => s.key === 'j3');
  const beside = scenarios.find((s) => s.key === 'j4');
  const isolation =
    alone && beside
      ? ` The healthy endpoint beside four that hang took ${(beside.result.seconds / alone.result.seconds).toFixed(2)}× as long as alone (target ≤ 1.5×).`
      : '';
  return `
## Webhook delivery (j)

Pending deliveries of \`payment.succeeded\` events, committed at once (then a \`NOTIFY\`, as an
orderpay process sends after its commits), timed until all were marked succeeded. Each receiver is
node:http on 127.0.0.1 answering 204 at once, counting each \`webhook-id\` and verifying nothing, so
the figures are what the dispatcher itself sustains: claiming, rendering, signing, sending and
recording each delivery. The hanging receivers accept each request and never answer. orderpay ran
as a process of its own on the same database (\`bench/webhooks.ts\`: NODE_ENV=development with
ORDERPAY_WEBHOOKS_ALLOW_PRIVATE=true, since production refuses loopback; the default 1 s poll),
sharing the machine's cores with PostgreSQL and the receivers. Targets: (j1) ≥ 300/s, (j2) ≥ 1,000/s.${isolation}${source ? `\n\n${source}` : ''}

${markdownTable(['scenario', 'what', 'seconds', 'deliveries/s', 'duplicates'], rows)}
`;
}

/** Every verdict of the page: the scenarios', the deep pages', memory's and, with other sizes, the scale's. */
function allTargetsMet(reference: BenchResults, others: BenchResults[]): boolean {
  return (
    reference.scenarios.map(judge).every((v) => v.ratioMet && v.p99Met && v.nodeRatioMet) &&
    reference.deepPages.every((r) => judgeDeepPage(r).met) &&
    rssMet(reference.rss) &&
    (reference.slowProcessor?.runs.every(slowProcessorMet) ?? true) &&
    others.every((other) => scaleVerdicts(reference, other).every((met) => met))
  );
}

/** What (f) and (fr), where they ran, checked of every response. */
function conditionalCheck(scenarios: ScenarioResult[]): string {
  const keys = scenarios.map((r) => r.scenario.key).filter((key) => key === 'f' || key === 'fr');
  if (keys.length === 0) return '';
  return `; in ${keys.map((key) => `(${key})`).join(' and ')} every response of the first columns was a 304 and of the second a 200 (wrk counts any other, and the bench stops on one)`;
}

function checkedLine(reference: BenchResults): string {
  const { scenarios, deepPages } = reference;
  const deepErrors = deepPages.flatMap((r) => Object.values(r.columns).map((c) => c.errors));
  if (scenarios.every((r) => r.orderpay.errors + r.baseline.errors === 0) && deepErrors.every((n) => n === 0))
    return `no errors, timeouts or responses ≥ 400 in any round${conditionalCheck(scenarios)}`;
  return `**errors occurred** (orderpay ${scenarios.map((r) => r.orderpay.errors).join('/')}, baseline ${scenarios.map((r) => r.baseline.errors).join('/')}, deep pages ${deepErrors.join('/')})`;
}

const FR_PROSE = ` (fr) is the same pair
on the raw baseline, for comparison: \`/prepared/orders/{id}\` prepares its statements as orderpay
does, answers a matching tag (spelt as orderpay's v1 tag, and sent back in its ETag) after reading
the version alone, and otherwise reads and sends (a)'s row: what a 304 saves where nothing but
node:http and pg run. Unlike orderpay, the baseline sends one query per request (no coalescing).
Why (f)'s target stays at 1.3×: [decisions/0093-304-and-memory-targets.md](decisions/0093-304-and-memory-targets.md).`;

/** What npm run bench:check runs and compares with the page, for its preamble. */
function checkParagraph(): string {
  const keys = CHECK_SETTINGS.scenarios.split(',').map((key) => `(${key})`);
  const { rounds, seconds, warmupSeconds } = CHECK_SETTINGS;
  return `Before committing a change to the request path, run \`npm run bench:check\` (under two minutes):
it runs ${keys.slice(0, -1).join(', ')} and ${keys.at(-1)} briefly (${rounds} rounds of ${seconds} s per column after a ${warmupSeconds} s warm-up) on the
bench's database and compares each one's node ratio ([CPU per request](#cpu-per-request): baseline ÷
orderpay, both measured in the same run, so the machine's speed cancels out) with this page's. It
fails when one fell by more than ${CHECK_TOLERANCE_PERCENT}%, and writes nothing
([decisions/0122-bench-check-node-ratio.md](decisions/0122-bench-check-node-ratio.md)).`;
}

/** The page: the 1M run's results (reference), and the Scale section comparing them with the other sizes'. */
export function renderBenchmarksDoc(
  reference: BenchResults,
  others: BenchResults[],
  profiles: ProfileRun[] = [],
  dpop: DpopResults | undefined = undefined,
): string {
  const { info, scenarios: results } = reference;
  const requests = results.map(({ scenario }) => {
    const [first, second] = scenario.labels ?? ['orderpay', 'baseline'];
    return `- (${scenario.key}) ${scenario.title}: ${first} \`${scenario.orderpayRequest}\`; ${second} \`${scenario.baselineRequest}\``;
  });
  return `# Benchmarks

Rendered from \`bench/results/orders-${info.orders}.json\`, the results of \`${info.command}\` on ${info.date},
and for [Scale](#scale) from the other sizes' files in \`bench/results/\`. To refresh it: \`npm run bench\`
(1M orders, every scenario) writes that file and this page; \`BENCH_ORDERS=10000000 BENCH_SCENARIOS=a,b,c,g
npm run bench\` writes \`bench/results/orders-10000000.json\` and renders the page again with it;
\`npm run bench -- --render\` renders it from the files alone.

${checkParagraph()}

Targets (bench/targets.ts; the page judges the run against today's): throughput, orderpay ≥ 0.7×
the raw baseline's for the id lookup (a) and the filtered list (b) (issue 2), ≥ 0.8× for the broad
filter (c) *with its exact \`meta.total\`* against the baseline's page *without* any count, and for
a payment under a new Idempotency-Key (d) and its replay (e) (issue 28; (d) writes its
\`payment.succeeded\` event, the baseline, in the same phases, none); p99 ≤ ${P99_TARGET_MS} ms at
${info.connections} connections for (a)–(c); orderpay's Node CPU per request at most 1.5× the
baseline's for (b)–(e) (issue 28, [CPU per request](#cpu-per-request)). Events (issue 12): a payment
written with its event ≥ 0.9× one without (dw, both on the baseline). Cost that stays flat: a
revalidated id lookup (304) ≥ 1.3× the throughput of the 200 it replaces (f); a deep page by cursor
within 1.5× the p50 of page 1 ([g](#deep-pages-g)); orderpay's resident memory ≤ 150 MB across the
whole bench ([h](#memory-h)); at 10M orders the p50 of (a), (b),
(c) and (g) within 1.5× of 1M's ([Scale](#scale)). **${allTargetsMet(reference, others) ? 'All targets met.' : 'Some targets missed (MISS below).'}**

## Results

${markdownTable(HEADER, resultRows(results))}

req/s is the mean of ${info.rounds} rounds, p50 the median of the rounds' p50, p99 the worst round's p99.
Every response was checked: ${checkedLine(reference)}.

Requests (for (a)–(c), (f) and (fr) one path drawn at random per request from a list sampled from the database;
see [Payments](#payments-d-e-dw-and-dx) for (d), (e) and (dw)):
${requests.join('\n')}

The version scenarios (av) and (bv) compare orderpay with itself on the requests of (a) and (b):
the first columns are v1 (\`/v1/…\`, produced from v2 through the version changes of
\`src/http/versions/\`), the "baseline" columns v2 (\`/v2/…\`, which loads and embeds each order's
items). Target: v1 ≥ 0.9× v2. (f) compares orderpay with itself on (a)'s ids: the first columns send
each id's current ETag in \`If-None-Match\` (read by one GET of each id before the run: the tag is per
id and API version) and get a 304 without a body, the "baseline" columns send none and get the 200.
The 304 reads the order's version alone, the 200 the whole row (both coalesced with the lookups of
the same turn: [Where the time goes](#where-the-time-goes)); on the unversioned path the bench's
token gets v1, whose order has no items, so what the 304 saves is the rest of the row, rendering
the order through the version changes and sending it. Target: 304 ≥ 1.3× 200.${results.some((r) => r.scenario.key === 'fr') ? FR_PROSE : ''} The events scenarios (dw) and (dx) compare the baseline with itself: the
first columns with the event written, the "baseline" columns without ([below](#payments-d-e-dw-and-dx)).

### CPU per request

${markdownTable(COST_HEADER, costRows(results))}

CPU time from /proc of the server process (node) and of the PostgreSQL backends of the benchmark
database (pg), divided by the requests served (mean of the rounds); ratios are baseline ÷ orderpay.
It moves much less than req/s when other processes share the cores. With the load generator, the
server and PostgreSQL on two cores the machine is CPU-bound, so the throughput ratio follows the
node+pg ratio; a server whose single Node thread saturates first would follow the node ratio.

### Per round

${roundsTable(results)}
${renderDeepPagesSection(reference.deepPages)}${renderSlowProcessorSection(reference.slowProcessor)}${renderRssSection(reference.rss)}${renderEmbeddedMemorySection(reference.embeddedMemory, info.orderpayNodeFlags)}${renderScaleSection(reference, others)}
## Set-up

| | |
| --- | --- |
| machine | ${info.machine.cores} cores, ${info.machine.cpuModel}, ${info.machine.memoryGiB} GiB memory; load generator, servers and PostgreSQL share the cores |
| other load | during the measurements other processes used ${pct(info.interference.others)} of the machine's CPU time and the hypervisor stole ${pct(info.interference.steal)}: req/s and latencies shrink and grow with them, CPU per request much less |
| software | Node.js ${info.machine.node}, ${info.postgresVersion}, ${info.loadGenerator} |
| data | ${int(info.orders)} orders (one item each) of ${int(customersFor(info.orders))} customers, created over a year; pending 20%, paid 25%, shipped 20%, delivered 30%, cancelled 5%${info.seedSeconds === undefined ? ' (reused from an earlier run)' : `; seeded in ${info.seedSeconds.toFixed(0)} s`} |
| load | ${info.connections} connections on 127.0.0.1 (the deep pages (g): ${reference.deepPages[0]?.connections ?? DEEP_PAGE_CONNECTIONS}), ${info.seconds} s per measurement after a ${info.warmupSeconds} s warm-up of each server and scenario; ${info.rounds} rounds, the columns of a scenario taking turns to go first |
| orderpay | \`node ${info.orderpayNodeFlags.join(' ')} src/cli.ts serve\` (as \`npm start\` ran it), NODE_ENV=production, LOG_LEVEL=warn, pool of 10, a staff bearer token (RS256; orders:read payments:write); rate limits on, counted in PostgreSQL, budgets of 10⁹ per minute so that the load is never refused; due webhook deliveries polled every 60 s (ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS); a statement timeout of ${BENCH_STATEMENT_TIMEOUT_MS / 1000} s instead of 15 s (ORDERPAY_DB_STATEMENT_TIMEOUT_MS), for (g)'s page by number at 10M orders |
| baseline | \`bench/raw-server.ts\`: node:http + pg Pool of 10, the same SQL and type parsing for (a)–(c), the minimal SQL of (d) (in orderpay's phases) and (e), and for (dw) and (dx) the same with orderpay's event written as orderpay writes it; for (fr) (a)'s lookup prepared, or the version alone under If-None-Match; no framework, no authentication |

## Payments (d), (e), (dw) and (dx)

(d) posts \`{"amount":1250,"currency":"EUR"}\` (no order) under an Idempotency-Key no request has used
— a random prefix per run, then wrk's thread and a counter — so every request creates a payment and
its key: what a client paying for the first time costs. (e) posts the same body under one key that
was used once before the measurement, so every request replays the stored 201 with
\`Idempotent-Replayed: true\`: what a retry costs. After every measurement the bench checks the
tables: (d), (dw) and (dx) created at least one payment per answered request, (e) none; every
payment made where the event is written (orderpay, the first column of (dw) and (dx)) has its
\`payment.succeeded\` event and no other payment has one; each such event has one webhook delivery
in (dx) and none in (d) and (dw).

The baseline (\`bench/raw-server.ts\`) does the same writes in the same phases as orderpay
(docs/payments.md, "How a payment is made"), with no authentication and no validation: for a new
key the claim (\`INSERT … ON CONFLICT DO NOTHING\`, the columns orderpay fills), committed on its
own; phase 1 — \`BEGIN\`, \`SELECT … FOR UPDATE\` of the claim, the payment \`INSERT\` (processing),
the \`UPDATE\` of the key's recovery point, \`COMMIT\`; the charge's id \`UPDATE\`d onto the payment
(the simulator names it without a call, as orderpay's does, and answers at once); phase 3 —
\`BEGIN\`, the payment's \`UPDATE\` to succeeded, the \`UPDATE\` storing the response on the key,
\`COMMIT\`: 11 round trips and four commits. For a used key one \`SELECT\` of the stored response.
It knows which keys it completed (in memory), so each scenario costs it only its own SQL.

orderpay, per request (\`src/http/idempotency.ts\`, \`src/idempotency/keyed-work.ts\`,
\`src/flows/pay.ts\`, \`src/flows/settle-payment.ts\`): the same, and in phase 1 a \`SELECT\` that the
paying user exists (a payment without an order belongs to the caller); the \`UPDATE\` storing the
response also writes the \`payment.succeeded\` event the payment put in the transaction's outbox
(\`src/db/outbox.ts\`: the event and a delivery for every enabled webhook endpoint subscribed to
it): 12 round trips against the baseline's 11. For a used key, the claim \`INSERT\` finds the
conflict and a \`SELECT\` reads the stored response: 2 round trips against the baseline's one.
orderpay's statements are prepared once per connection and the baseline's are not (see
[Where the time goes](#where-the-time-goes)), so orderpay's PostgreSQL CPU per request stays
close to the baseline's in (d) despite its extra statement; its Node CPU per request is higher.

(dw) isolates what writing the event costs a payment, on the baseline, where nothing else of
orderpay's adds to it: the first columns are \`POST /with-event/payments\`, (d)'s phases
with \`recordEvent\` itself (imported from orderpay) after the payment's \`UPDATE\` to succeeded, its
object the payment's record as orderpay's store returns it (every column it reads), written as
orderpay writes it: by the \`UPDATE\` that stores the response (orderpay's outbox statement): 11
round trips, as without the event. The "baseline" columns are \`POST /prepared/payments\`, (d)'s
phases without the event. Both sides prepare their
statements (named, planned once per connection), as orderpay does and (d)'s baseline does not: so
what separates them is writing the event, not planning a larger statement on every request. No webhook endpoint is subscribed: the event alone. (dx) is the same
comparison with one webhook endpoint subscribed to \`*\` enabled, so the event fans out to one
delivery row per payment, as it would for a merchant with one endpoint: what an endpoint adds to
each payment, for information. Nothing delivers those rows: the endpoint is
\`http://127.0.0.1:1/…\`, where nothing listens, and orderpay under NODE_ENV=production refuses
private addresses before connecting; the endpoint is enabled only during (dx)'s runs and its
deliveries are deleted after each, so no backlog is left for a dispatcher, and orderpay's own events in (d) fan out to nothing (its run measures the
event, not a dispatcher's failed attempts). After each run the bench checks that no delivery got
a response, and logs any attempt made during it.

Every run with a payment scenario starts by emptying \`payments\`, \`refunds\`, \`idempotency_keys\`, \`events\` and the
webhook tables (\`TRUNCATE\`, after the migrations and before either server starts; then (dx)'s
endpoint is created, disabled), so repeated runs measure tables of the same size; within a run,
orderpay and the baseline insert into the same tables, alternating.
${info.webhookScenarios ? webhookSection(info.webhookScenarios, info.webhookScenariosSource) : ''}
## Why the broad filter's exact total is cheap

An exact \`COUNT(*)\` over a broad filter on a million rows costs hundreds of times the page itself,
so \`meta.total\` is not counted at request time. Migration 0001 keeps counter tables —
\`customer_order_counts (customer_id, status)\` and \`order_status_counts (status, shard)\` — updated by
statement-level triggers in the same transaction as every insert, update and delete of an order,
so they are exact and never stale. The list query sums at most 16 shard rows (or a customer's five
status rows) whenever the filter has no \`minTotal\`; with \`minTotal\` the count runs on the orders
index, which the other filters keep selective. Page and total are one statement
(\`selectOrderPage\`: the total as a subquery, the page \`LEFT JOIN LATERAL\`), so they come from one
snapshot in one round trip. The 16 shards (by order id) spread concurrent
writers over several rows instead of one hot row.

## Where the time goes

The profiles below show both servers spending the largest share of their Node CPU in the socket
writes of each PostgreSQL query and of each HTTP response on loopback (one of each per request, in
both). What orderpay adds is spread thin: young-generation collections first, then pg's row
parsing for more columns, Fastify's hooks and reply, rendering a version and serialising it, the
cursor's MAC; the baseline has none of the collections to speak of (its JSON is made in one call).
Since these profiles, a page reads only the columns it shows, statements reach pg without its copy
of their config, and the latency histogram finds its series without building a key
([decisions/0124-per-request-allocations-on-the-shared-path.md](decisions/0124-per-request-allocations-on-the-shared-path.md)),
and most of those collections' cost turned out to be V8 pretenuring what requests allocate (their
objects looked long-lived with 32 requests in flight, so they were made old and left to full
collections): the server now runs with \`--no-allocation-site-pretenuring\`, 11–21% less CPU per
request on (b), (c) and (e) and the p99 of (c) and (e) about halved
([decisions/0126-no-allocation-site-pretenuring.md](decisions/0126-no-allocation-site-pretenuring.md)).
Then Linux \`perf\` (\`perf record -e cpu-clock -p <pid>\` with node's \`--perf-basic-prof\`, which
sees V8's builtins, its garbage collector, libc and the kernel that the inspector's profiles do not
separate) showed a page of orders paying ~5 µs for the compiled response serializer's rope of
small strings and Node flattening it again: responses are now written by \`JSON.stringify\`, and the
tests hold every response to what the schema's serializer would have written, byte for byte
([decisions/0127-responses-written-by-json-stringify.md](decisions/0127-responses-written-by-json-stringify.md));
in runs of (c) alone, one after the other on one machine, orderpay's Node CPU per request went
from ~160 to ~141 µs and its throughput ratio from 0.61× to 0.76× (with the token cache below
hashing a token's signature only); the full run on this page, on the same machine at another
hour, has (c) at 159 µs against the baseline's 93 and 0.79×. By \`perf\` a fifth of either server's CPU is the kernel's, most of it waking
the reader of each loopback write (PostgreSQL's backend, then the client); orderpay's share is the
larger because PostgreSQL idles while orderpay's one thread is the bottleneck, so each wake-up
finds an idle CPU. JIT-compiled functions' names in \`perf\` can be wrong (code moved by the
collector reuses addresses): native symbols and call chains through them are the reliable part.
orderpay prepares its parameterised statements once per connection (\`src/db/postgres.ts\`), so
PostgreSQL does not parse and plan them on every call (a page's LIMIT is written into the
statement so that its plan is reused: [decisions/0123-page-limit-in-the-statement.md](decisions/0123-page-limit-in-the-statement.md));
the baseline sends them unprepared, as a
plain \`pool.query(text, values)\` does, except under \`/prepared\` ((dw), (dx) and (fr)). That is why orderpay's PostgreSQL CPU per request is lower
than the baseline's and why it can exceed 1× on (a) and (b). A lookup by id ((a), (av), (f))
shares its round trip besides: the lookups asked for in one turn of the event loop go to
PostgreSQL as one statement per owner scope (\`src/db/coalesce.ts\`, [decisions/0085-lookups-by-id-coalesced.md](decisions/0085-lookups-by-id-coalesced.md)), where the
baseline sends one query per request; under 32 connections a turn holds several requests, so
each pays a fraction of a round trip, in Node as in PostgreSQL. For the broad filter orderpay still
does more work than the baseline: its one statement carries the exact total, the baseline's page
has none. What is left of (c)'s gap, where by \`perf\` it goes (orderpay's own code ~31 µs of it, the
contract's features the baseline does not have) and why the work on issue 28 stops with (c) and (e) above 1.5×:
[decisions/0128-request-cost-stops-at-the-contract.md](decisions/0128-request-cost-stops-at-the-contract.md).
${renderProfileSection(profiles)}
## Why authentication costs little per request

Verifying an RS256 signature costs about 50 µs of CPU, a large share of a ~70 µs id lookup. The
resource server's token verifier memoises the result per token until the token's \`exp\`
(bounded to 10,000 entries): a client reusing its access token pays for the signature check once,
and later requests only look the token up in a map, by its last 32 characters (its signature),
the whole token compared on a hit: V8 hashes a string key in full, and each request's token is a
new ~800-character string (\`src/http/tail-keyed-map.ts\`; the API version pinned to a token is
found the same way). It caches a pure function of the token, so a
restart or a second instance simply verifies again.
${renderDpopSection(dpop)}`;
}
