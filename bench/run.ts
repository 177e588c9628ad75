// npm run bench: seed PostgreSQL with a million orders, start orderpay and the raw baseline, load
// both on loopback in interleaved rounds, print the figures and write docs/benchmarks.md.
// Usage: npm run bench [-- --reseed]   Environment: BENCH_DATABASE_URL, BENCH_ORDERS, BENCH_ROUNDS,
// BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS (defaults below), BENCH_SCENARIOS (keys to
// run among a, b, c, av, bv, d, e, dw, dx, e.g. "d,dw"; all by default; a partial run prints its
// figures but leaves the doc alone).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { issueTokenFor } from '../src/auth/access-token.ts';
import { loadConfig } from '../src/config.ts';
import type { Db } from '../src/db/db.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { cpuPerRequest, interference, sampleCpu, sampleMachineCpu } from './cpu.ts';
import { chooseLoadGenerator, withPrefix, type LoadGenerator, type RequestMix } from './load.ts';
import {
  finishPaymentRun,
  paymentWorkloads,
  resetPaymentTables,
  startPaymentRun,
  verifyPaymentResponses,
  type PaymentWorkload,
} from './payments.ts';
import { findFreePort, startServerProcess, type ServerProcess, type Side, type Target } from './processes.ts';
import {
  aggregate,
  formatConsoleTable,
  P99_TARGET_MS,
  renderBenchmarksDoc,
  type Interference,
  type Measurement,
  type Scenario,
  type ScenarioResult,
} from './report.ts';
import { BENCH_STAFF_EMAIL, seedBenchData } from './seed.ts';
import { measureWebhookThroughput, startDeliveringOrderpay, type WebhookThroughput } from './webhooks.ts';

/** Deliveries the webhook throughput is measured on. */
const WEBHOOK_DELIVERIES = 10_000;

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/orderpay_bench';
const SAMPLE_SIZE = 5_000;
const MIN_TOTALS = [2_000, 5_000, 10_000, 20_000];

interface Options {
  databaseUrl: string;
  orders: number;
  reseed: boolean;
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** Scenario keys to run; undefined runs them all. */
  scenarios: Set<string> | undefined;
}

interface OrdersWorkload {
  scenario: Scenario;
  requests: RequestMix & { method: 'GET' };
  /**
   * Set for the version scenarios: both columns are orderpay, the first under /v1 (rendered from
   * v2 through the version changes), the second under /v2; the paths are prefixed with each.
   */
  sides?: readonly [Side, Side];
}
type Workload = OrdersWorkload | PaymentWorkload;
const isPaymentWorkload = (workload: Workload): workload is PaymentWorkload => 'paymentsPerRequest' in workload;

const log = (line: string) => console.error(`bench: ${line}`);

function readOptions(argv: string[], env: NodeJS.ProcessEnv): Options {
  const { values } = parseArgs({ args: argv, options: { reseed: { type: 'boolean', default: false } } });
  const int = (name: string, fallback: number, min: number, max: number) => {
    const value = env[name] === undefined || env[name] === '' ? fallback : Number(env[name]);
    if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be a whole number ${min}–${max}`);
    return value;
  };
  return {
    databaseUrl: env.BENCH_DATABASE_URL || DEFAULT_DATABASE_URL,
    orders: int('BENCH_ORDERS', 1_000_000, 1_000, 100_000_000),
    reseed: values.reseed ?? false,
    rounds: int('BENCH_ROUNDS', 3, 1, 20),
    seconds: int('BENCH_SECONDS', 10, 1, 300),
    warmupSeconds: int('BENCH_WARMUP_SECONDS', 5, 0, 300),
    connections: int('BENCH_CONNECTIONS', 32, 1, 1_000),
    scenarios: env.BENCH_SCENARIOS ? new Set(env.BENCH_SCENARIOS.split(',').map((key) => key.trim())) : undefined,
  };
}

/** Creates the benchmark database when it does not exist yet (through the server's postgres db). */
async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      log(`creating database ${name}`);
      await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    }
  } finally {
    await admin.end();
  }
}

function progressBar(label: string): (done: number, total: number) => void {
  const started = Date.now();
  const tty = process.stderr.isTTY;
  return (done, total) => {
    const width = 30;
    const filled = Math.round((done / total) * width);
    const line = `${label} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${Math.floor((done / total) * 100)}% ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${((Date.now() - started) / 1000).toFixed(1)} s`;
    process.stderr.write(tty ? `\r${line}${done === total ? '\n' : ''}` : `${line}\n`);
  };
}

async function seedDatabase(db: Db, options: Options): Promise<number | undefined> {
  const started = Date.now();
  const { seeded } = await seedBenchData(db, {
    orders: options.orders,
    reseed: options.reseed,
    onProgress: progressBar('seeding orders'),
    onStep: (step) => log(step),
  });
  if (!seeded) log(`database already holds ${options.orders.toLocaleString('en-US')} orders; reusing it (--reseed to start over)`);
  return seeded ? (Date.now() - started) / 1000 : undefined;
}

/** Request paths sampled from the data, so every id exists and every filter matches real rows. */
async function sampleOrdersWorkloads(db: Db): Promise<OrdersWorkload[]> {
  const ids = await db.query<{ id: number }>('SELECT id FROM orders WHERE deleted_at IS NULL ORDER BY random() LIMIT $1', [SAMPLE_SIZE]);
  const pairs = await db.query<{ customerId: number; status: string }>(
    'SELECT customer_id AS "customerId", status FROM customer_order_counts WHERE n > 0 ORDER BY random() LIMIT $1',
    [SAMPLE_SIZE],
  );
  const filtered = pairs.rows.map(
    (p, i) => `/orders?status=${p.status}&customerId=${p.customerId}&minTotal=${MIN_TOTALS[i % MIN_TOTALS.length]}&sort=-createdAt,status`,
  );
  const byId = ids.rows.map((r) => `/orders/${r.id}`);
  const versionSides = [
    { server: 'orderpay', prefix: '/v1' },
    { server: 'orderpay', prefix: '/v2' },
  ] as const;
  return [
    {
      scenario: {
        key: 'a',
        title: 'GET /orders/{id}',
        orderpayRequest: 'GET /orders/{id} + bearer token',
        baselineRequest: 'GET /orders/{id}',
        targetRatio: 0.7,
        p99TargetMs: P99_TARGET_MS,
      },
      requests: { method: 'GET', paths: byId },
    },
    {
      scenario: {
        key: 'b',
        title: 'filtered list',
        targetRatio: 0.7,
        p99TargetMs: P99_TARGET_MS,
        orderpayRequest: 'GET /orders?status=…&customerId=…&minTotal=…&sort=-createdAt,status (page + exact meta.total)',
        baselineRequest: 'same page query + count(*)',
      },
      requests: { method: 'GET', paths: filtered },
    },
    {
      scenario: {
        key: 'c',
        title: 'broad status=pending',
        targetRatio: 0.5,
        p99TargetMs: P99_TARGET_MS,
        orderpayRequest: 'GET /orders?status=pending (page 1 + exact meta.total)',
        baselineRequest: 'same page query, no count',
      },
      requests: { method: 'GET', paths: ['/orders?status=pending'] },
    },
    {
      scenario: {
        key: 'av',
        title: 'v1 vs v2: GET /orders/{id}',
        targetRatio: 0.9,
        orderpayRequest: 'GET /v1/orders/{id} (v2 rendered back through the version changes)',
        baselineRequest: 'GET /v2/orders/{id} on the same server (the latest, its items embedded)',
      },
      requests: { method: 'GET', paths: byId },
      sides: versionSides,
    },
    {
      scenario: {
        key: 'bv',
        title: 'v1 vs v2: filtered list',
        targetRatio: 0.9,
        orderpayRequest: 'GET /v1/orders?status=…&customerId=…&minTotal=…&sort=-createdAt,status',
        baselineRequest: 'the same under /v2 on the same server (items of the page loaded and embedded)',
      },
      requests: { method: 'GET', paths: filtered },
      sides: versionSides,
    },
  ];
}

/** The scenarios asked for, in order: the orders' a–c (and av, bv), then the payments' d, e, dw and dx. */
async function chooseWorkloads(db: Db, options: Options): Promise<Workload[]> {
  const all: Workload[] = [...(await sampleOrdersWorkloads(db)), ...paymentWorkloads()];
  const unknown = [...(options.scenarios ?? [])].filter((key) => !all.some((w) => w.scenario.key === key));
  if (unknown.length)
    throw new Error(`BENCH_SCENARIOS: no scenario ${unknown.join(', ')} (known: ${all.map((w) => w.scenario.key).join(', ')})`);
  return all.filter((w) => !options.scenarios || options.scenarios.has(w.scenario.key));
}

/** Requests per minute per caller: the most the configuration allows, far above what a run sends. */
const BENCH_RATE_LIMIT = 1_000_000_000;

async function startServers(options: Options, orderpayPort: number, payerUserId: number): Promise<ServerProcess[]> {
  const servers: ServerProcess[] = [];
  try {
    servers.push(
      await startServerProcess(
        'orderpay',
        [fileURLToPath(new URL('../src/cli.ts', import.meta.url)), 'serve', '--json'],
        {
          DATABASE_URL: options.databaseUrl,
          PORT: String(orderpayPort),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          NODE_ENV: 'production',
          // The limiter stays on and counts every request (in PostgreSQL, as by default), with
          // budgets the load cannot reach: a 429 would count as an error and void the run.
          ORDERPAY_RATE_LIMIT_READS: String(BENCH_RATE_LIMIT),
          ORDERPAY_RATE_LIMIT_WRITES: String(BENCH_RATE_LIMIT),
          ORDERPAY_RATE_LIMIT_PAYMENTS: String(BENCH_RATE_LIMIT),
          // The slowest poll for due webhook deliveries: the only ones are (dx)'s, never to be
          // delivered (bench/webhooks.ts), and this process idles while (dw) and (dx) load the baseline.
          ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '60000',
        },
        /"event":"listening","url":"([^"]+)"/,
      ),
    );
    servers.push(
      await startServerProcess(
        'baseline',
        [fileURLToPath(new URL('./raw-server.ts', import.meta.url))],
        {
          DATABASE_URL: options.databaseUrl,
          PORT: String(await findFreePort()),
          PAYER_USER_ID: String(payerUserId),
        },
        /listening (http:\/\/\S+)/,
      ),
    );
    return servers;
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    throw error;
  }
}

async function getJson(
  url: string,
  headers: Record<string, string>,
): Promise<{ data?: { id: number }[]; meta?: { total?: number }; id?: number }> {
  const response = await fetch(url, { headers });
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as never;
}

/** Both sides answer the first path of each scenario alike, and orderpay's totals are exact. */
async function verifyOrdersResponses(db: Db, workloads: OrdersWorkload[], targetsOf: (workload: Workload) => Target[]): Promise<void> {
  for (const workload of workloads) {
    const {
      scenario,
      requests: { paths },
    } = workload;
    const [ours, theirs] = await Promise.all(
      targetsOf(workload).map((target) => getJson(target.server.url + (target.prefix ?? '') + paths[0], target.headers)),
    );
    if (!ours || !theirs) throw new Error(`(${scenario.key}) needs two sides`);
    const ids = (body: typeof ours) => JSON.stringify(body.data?.map((o) => o.id) ?? body.id);
    if (ids(ours) !== ids(theirs)) throw new Error(`(${scenario.key}) orderpay and the baseline disagree on ${paths[0]}`);
    if (scenario.key === 'b' && ours.meta?.total !== theirs.meta?.total)
      throw new Error(`(b) meta.total ${ours.meta?.total} ≠ baseline's ${theirs.meta?.total}`);
    if (scenario.key === 'c') {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*) AS n FROM orders WHERE status = 'pending' AND deleted_at IS NULL`);
      if (ours.meta?.total !== rows[0]!.n) throw new Error(`(c) meta.total ${ours.meta?.total} is not the exact count ${rows[0]!.n}`);
    }
  }
}

async function verifyResponses(db: Db, workloads: Workload[], targets: Target[]): Promise<void> {
  const targetsOf = sidesOf(targets);
  const orders = workloads.filter((w): w is OrdersWorkload => !isPaymentWorkload(w));
  await verifyOrdersResponses(db, orders, targetsOf);
  const payments = workloads.filter(isPaymentWorkload);
  if (payments.length)
    await verifyPaymentResponses(
      db,
      payments.map((workload) => ({ workload, sides: targetsOf(workload) })),
      targets[0]!,
    );
}

/**
 * The two columns of a scenario: orderpay and the baseline, or one of them under two prefixes —
 * (av) and (bv) orderpay under /v1 and /v2, (dw) and (dx) the baseline with the event and without.
 */
function sidesOf(targets: Target[]): (workload: Workload) => Target[] {
  return (workload) =>
    workload.sides?.map((side) => {
      const target = targets[side.server === 'orderpay' ? 0 : 1]!;
      return { ...target, prefix: side.prefix, writesEvents: target.writesEvents || side.writesEvents === true };
    }) ?? targets;
}

/** Warm-up, then rounds alternating which server goes first; every run is bounded by its duration. */
async function measure(
  db: Db,
  generator: LoadGenerator,
  options: Options,
  workloads: Workload[],
  targets: Target[],
): Promise<{ results: ScenarioResult[]; interference: Interference }> {
  const database = decodeURIComponent(new URL(options.databaseUrl).pathname.slice(1));
  const machineBefore = sampleMachineCpu();
  let benchmarkedSeconds = 0; // server and PostgreSQL CPU of every run, to tell other processes' share
  const run = async (target: Target, workload: Workload, seconds: number): Promise<Measurement> => {
    const rowsBefore = isPaymentWorkload(workload) ? await startPaymentRun(db, workload) : undefined;
    const before = sampleCpu(target.server.pid, database);
    const result = await generator.run({
      url: target.server.url,
      requests: withPrefix(workload.requests, target.prefix),
      headers: target.headers,
      connections: options.connections,
      seconds,
    });
    const cpu = cpuPerRequest(before, sampleCpu(target.server.pid, database), result.requests);
    if (isPaymentWorkload(workload) && rowsBefore) {
      const warning = await finishPaymentRun(db, workload, target, rowsBefore, result.requests - result.errors);
      if (warning) log(warning);
    }
    benchmarkedSeconds += ((cpu.serverUs + cpu.postgresUs) * result.requests) / 1e6;
    return { ...result, serverCpuUs: cpu.serverUs, postgresCpuUs: cpu.postgresUs };
  };
  const targetsOf = sidesOf(targets);
  if (options.warmupSeconds > 0) {
    for (const workload of workloads) {
      for (const target of targetsOf(workload)) {
        log(`warm-up (${workload.scenario.key}) ${target.server.name}`);
        await run(target, workload, options.warmupSeconds);
      }
    }
  }
  const rounds = workloads.map(() => ({ orderpay: [] as Measurement[], baseline: [] as Measurement[] }));
  for (let round = 0; round < options.rounds; round++) {
    for (const [i, workload] of workloads.entries()) {
      const { scenario } = workload;
      const pair = targetsOf(workload);
      for (const target of round % 2 === 0 ? pair : [...pair].reverse()) {
        const result = await run(target, workload, options.seconds);
        log(
          `round ${round + 1}/${options.rounds} (${scenario.key}) ${target.server.name}${target.prefix ?? ''}: ${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, node ${Math.round(result.serverCpuUs)} µs/req, pg ${Math.round(result.postgresCpuUs)} µs/req${result.errors ? `, ${result.errors} errors` : ''}`,
        );
        rounds[i]![target === pair[0] ? 'orderpay' : 'baseline'].push(result);
      }
    }
  }
  return {
    results: workloads.map(({ scenario }, i) => ({
      scenario,
      orderpay: aggregate(rounds[i]!.orderpay),
      baseline: aggregate(rounds[i]!.baseline),
    })),
    interference: interference(machineBefore, sampleMachineCpu(), benchmarkedSeconds),
  };
}

async function findStaffUserId(db: Db): Promise<number> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM users WHERE email = $1', [BENCH_STAFF_EMAIL]);
  return rows[0]!.id;
}

function commandLine(options: Options): string {
  const overrides = ['BENCH_ORDERS', 'BENCH_ROUNDS', 'BENCH_SECONDS', 'BENCH_WARMUP_SECONDS', 'BENCH_CONNECTIONS']
    .filter((name) => process.env[name])
    .map((name) => `${name}=${process.env[name]} `)
    .join('');
  return `${overrides}npm run bench${options.reseed ? ' -- --reseed' : ''}`;
}

async function main(): Promise<number> {
  const options = readOptions(process.argv.slice(2), process.env);
  const generator = await chooseLoadGenerator(log);
  await ensureDatabase(options.databaseUrl);
  // One connection is all the seed needs; its statements may run long.
  const db = await openPostgres(options.databaseUrl, {
    poolMax: 1,
    connectTimeoutMs: 10_000,
    statementTimeoutMs: 1_800_000,
    idleInTransactionTimeoutMs: 60_000,
  });
  let servers: ServerProcess[] = [];
  const stopServers = () => Promise.all(servers.map((s) => s.stop()));
  const interrupt = () => void stopServers().finally(() => process.exit(130));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    await migrate(db);
    const seedSeconds = await seedDatabase(db, options);
    const orderpayPort = await findFreePort();
    const config = loadConfig({ DATABASE_URL: options.databaseUrl, PORT: String(orderpayPort), NODE_ENV: 'production' });
    const token = await issueTokenFor(db, config, { email: BENCH_STAFF_EMAIL }, ['orders:read', 'payments:write'], 3_600);
    const workloads = await chooseWorkloads(db, options);
    // Migrated above, before either server starts: the baseline writes the tables of 0004_payments
    // and 0008_events_webhooks.
    await resetPaymentTables(db);
    servers = await startServers(options, orderpayPort, await findStaffUserId(db));
    const [orderpay, baseline] = servers as [ServerProcess, ServerProcess];
    const targets: Target[] = [
      { server: orderpay, headers: { authorization: `Bearer ${token}` }, writesEvents: true },
      { server: baseline, headers: {}, writesEvents: false },
    ];
    await verifyResponses(db, workloads, targets);
    log(`${generator.name}: ${options.connections} connections, ${options.rounds} rounds × ${options.seconds} s per server and scenario`);
    const { results, interference: others } = await measure(db, generator, options, workloads, targets);
    await stopServers();
    // The webhook dispatcher's throughput, on a full run: an orderpay of its own that may deliver to loopback.
    let webhookThroughput: WebhookThroughput | undefined;
    if (!options.scenarios) {
      servers = [await startDeliveringOrderpay(options.databaseUrl)];
      webhookThroughput = await measureWebhookThroughput(db, servers[0]!.url, WEBHOOK_DELIVERIES);
      log(
        `webhooks: ${WEBHOOK_DELIVERIES} deliveries in ${webhookThroughput.seconds.toFixed(2)} s, ${Math.round(webhookThroughput.deliveriesPerSecond)}/s, ${webhookThroughput.duplicates} duplicates`,
      );
      await stopServers();
    }

    console.log(`\n${formatConsoleTable(results)}\n`);
    if (options.scenarios) {
      log('BENCH_SCENARIOS ran only some scenarios: docs/benchmarks.md left as it was');
      return results.every((r) => r.orderpay.errors + r.baseline.errors === 0) ? 0 : 1;
    }
    const postgresVersion = (await db.query<{ v: string }>("SELECT 'PostgreSQL ' || current_setting('server_version') AS v")).rows[0]!.v;
    const doc = renderBenchmarksDoc(
      {
        date: new Date(),
        command: commandLine(options),
        orders: options.orders,
        connections: options.connections,
        rounds: options.rounds,
        seconds: options.seconds,
        warmupSeconds: options.warmupSeconds,
        loadGenerator: generator.name,
        postgresVersion,
        seedSeconds,
        interference: others,
        webhookThroughput,
      },
      results,
    );
    writeFileSync(new URL('../docs/benchmarks.md', import.meta.url), doc);
    log('wrote docs/benchmarks.md');
    return results.every((r) => r.orderpay.errors + r.baseline.errors === 0) ? 0 : 1;
  } finally {
    await stopServers();
    await db.close();
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
}

process.exitCode = await main().catch((error: unknown) => {
  console.error('bench:', error instanceof Error ? error.message : error);
  return 1;
});
