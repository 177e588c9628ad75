// npm run bench: seed PostgreSQL with BENCH_ORDERS orders (a million by default), start orderpay and
// the raw baseline, load both on loopback in interleaved rounds, print the figures, write the run's
// results file and render docs/benchmarks.md from the results files.
// Usage: npm run bench [-- --reseed | --render | --check]
//   --reseed  seeds again even when the database holds BENCH_ORDERS orders already
//   --render  runs nothing: renders docs/benchmarks.md from bench/results/*.json
//   --check   (npm run bench:check) a short run compared with the committed CPU per request
//             (bench/check.ts: 3 rounds of 2 s, 2 s warm-up, a,b,c,d,e by default; BENCH_CHECK_TOLERANCE,
//             in percent); writes nothing
// Environment (defaults below): BENCH_ORDERS, BENCH_DATABASE_URL (orderpay_bench for 1M orders,
// orderpay_bench_<size> for another size, e.g. orderpay_bench_10m, so sizes never reseed each
// other), BENCH_ROUNDS, BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS, BENCH_SCENARIOS
// (keys among a, b, c, av, bv, f, fr, ap, g, d, e, dw, dx, i, e.g. "d,dw"; all by default; (h), the servers'
// memory, is sampled during whichever run, so "h" selects nothing; (i) runs servers of its own, after the rest),
// BENCH_POOLER (pgbouncer: both servers reach PostgreSQL through PgBouncer in transaction mode,
// test/helpers/pgbouncer.ts; the figures are printed, never written), BENCH_REPLICA (standby: the
// bench runs on a PostgreSQL primary of its own with a streaming standby, test/faults/postgres-cluster.ts,
// seeded afresh, and prints the standby's replay lag during each payments run; printed, never written),
// BENCH_PROFILE (a directory: both servers run with their inspector on, and each measured run is
// profiled (bench/profile.ts): <scenario>-<column>.cpuprofile and its summary, µs per request by step
// and by place, there and in the log; a later round's profile replaces an earlier one's; with
// BENCH_PROFILE_NAME=<name> too, the summaries are kept as bench/results/profile-<name>.json, which
// docs/benchmarks.md shows beside the other kept profiles).
// The page: a full run at 1M orders writes bench/results/orders-1000000.json, the page's figures;
// a run at another size, full or not (BENCH_ORDERS=10000000 BENCH_SCENARIOS=a,b,c,g is what the
// page's Scale section compares), writes bench/results/orders-<N>.json. Either then renders
// docs/benchmarks.md from the 1M file and the others' (when the 1M file exists). A partial run at
// 1M prints its figures and writes nothing, but for (ap)'s (DPoP): any run at 1M that measured it
// (BENCH_SCENARIOS=ap is one) keeps them in bench/results/dpop.json, the page's "What DPoP costs",
// and no run puts them in an orders file.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { issueTokenFor } from '../src/auth/access-token.ts';
import { loadConfig } from '../src/config.ts';
import type { Db } from '../src/db/db.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { CHECK_SETTINGS, CHECK_TOLERANCE_PERCENT, committedScenarios, reportCheck } from './check.ts';
import { BENCH_STATEMENT_TIMEOUT_MS } from './deep-pages.ts';
import { measureEmbeddedMemory, type EmbeddedMemory } from './embedded-memory.ts';
import { DPOP_SCENARIO, isDpopWorkload, resetDpopProofs } from './dpop.ts';
import { chooseLoadGenerator } from './load.ts';
import { measure } from './measure.ts';
import { resetPaymentTables } from './payments.ts';
import {
  findFreePort,
  nodeCommand,
  ORDERPAY_NODE_FLAGS,
  ORDERPAY_SERVE_COMMAND,
  startServerProcess,
  type ServerProcess,
  type Target,
} from './processes.ts';
import { describeMachine, formatConsoleTable, type BenchResults } from './report.ts';
import { readResults, REFERENCE_ORDERS, renderDocFromResults, writeDpopResults, writeResults } from './results.ts';
import { countStandbys } from './replica-lag.ts';
import { connectProfiler, type Profiler } from './profile.ts';
import { keepProfileRun } from './profile-report.ts';
import { mergeRssReports, startRssSampling, WEBHOOK_RSS_LABEL, type RssReport } from './rss.ts';
import { startCluster, startStandby } from '../test/faults/postgres-cluster.ts';
import { startPgBouncer } from '../test/helpers/pgbouncer.ts';
import { sizeLabel } from './scale.ts';
import { measureSlowProcessor, type SlowProcessorResult } from './slow-processor.ts';
import { BENCH_STAFF_EMAIL, seedBenchData } from './seed.ts';
import { measureWebhookScenarios, startDeliveringOrderpay, type WebhookScenario } from './webhooks.ts';
import { chooseWorkloads, isPaymentWorkload, prepareWorkloads, toResults, verifyResponses, type Workload } from './workloads.ts';

interface Options {
  databaseUrl: string;
  orders: number;
  reseed: boolean;
  render: boolean;
  /** Compare the run's node ratios with the committed ones, by this many percent at most. */
  check: boolean;
  checkTolerance: number;
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** Scenario keys to run; undefined runs them all. */
  scenarios: Set<string> | undefined;
  /** Both servers through PgBouncer in transaction mode. */
  pooler: 'pgbouncer' | undefined;
  /** A primary of the bench's own with a streaming standby, whose lag is sampled. */
  replica: 'standby' | undefined;
  /** Where the measured runs leave their CPU profiles and summaries (BENCH_PROFILE). */
  profileDir: string | undefined;
  /** Keeps the summaries for the page as bench/results/profile-<name>.json (BENCH_PROFILE_NAME). */
  profileName: string | undefined;
}

const log = (line: string) => console.error(`bench: ${line}`);

/** orderpay_bench for 1M orders, orderpay_bench_10m for 10M, orderpay_bench_250k for 250k … */
function defaultDatabaseUrl(orders: number): string {
  const suffix = orders === REFERENCE_ORDERS ? '' : `_${sizeLabel(orders).toLowerCase()}`;
  return `postgres://postgres@127.0.0.1:5432/orderpay_bench${suffix}`;
}

function readScenarios(value: string | undefined): Set<string> | undefined {
  if (!value) return undefined;
  const keys = new Set(value.split(',').map((key) => key.trim()));
  if (keys.delete('h')) log('(h) memory is sampled during every scenario run: "h" selects nothing of its own');
  if (!keys.size) throw new Error('BENCH_SCENARIOS names no scenario to run');
  return keys;
}

/** (i) runs its own servers: not a workload of the orderpay/baseline pair. */
const runsSlowProcessor = (scenarios: Set<string> | undefined) => !scenarios || scenarios.has('i');
const pairScenarios = (scenarios: Set<string> | undefined) => {
  if (!scenarios) return undefined;
  const pair = new Set(scenarios);
  pair.delete('i');
  return pair;
};

function readOptions(argv: string[], env: NodeJS.ProcessEnv): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      reseed: { type: 'boolean', default: false },
      render: { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
    },
  });
  const check = values.check ?? false;
  const defaults = check ? CHECK_SETTINGS : { rounds: 3, seconds: 10, warmupSeconds: 5, scenarios: undefined };
  const int = (name: string, fallback: number, min: number, max: number) => {
    const value = env[name] === undefined || env[name] === '' ? fallback : Number(env[name]);
    if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be a whole number ${min}–${max}`);
    return value;
  };
  const orders = int('BENCH_ORDERS', REFERENCE_ORDERS, 1_000, 100_000_000);
  return {
    databaseUrl: env.BENCH_DATABASE_URL || defaultDatabaseUrl(orders),
    orders,
    reseed: values.reseed ?? false,
    render: values.render ?? false,
    check,
    checkTolerance: int('BENCH_CHECK_TOLERANCE', CHECK_TOLERANCE_PERCENT, 1, 99),
    rounds: int('BENCH_ROUNDS', defaults.rounds, 1, 20),
    seconds: int('BENCH_SECONDS', defaults.seconds, 1, 300),
    warmupSeconds: int('BENCH_WARMUP_SECONDS', defaults.warmupSeconds, 0, 300),
    connections: int('BENCH_CONNECTIONS', 32, 1, 1_000),
    scenarios: readScenarios(env.BENCH_SCENARIOS || defaults.scenarios),
    pooler: readPooler(env.BENCH_POOLER),
    replica: readReplica(env.BENCH_REPLICA),
    profileDir: env.BENCH_PROFILE || undefined,
    profileName: readProfileName(env.BENCH_PROFILE_NAME, env.BENCH_PROFILE),
  };
}

function readProfileName(name: string | undefined, dir: string | undefined): string | undefined {
  if (!name) return undefined;
  if (!dir) throw new Error('BENCH_PROFILE_NAME needs BENCH_PROFILE (the directory the profiles go to)');
  if (!/^[\w-]+$/.test(name)) throw new Error('BENCH_PROFILE_NAME must be letters, digits, - and _');
  return name;
}

function readReplica(value: string | undefined): 'standby' | undefined {
  if (!value) return undefined;
  if (value !== 'standby') throw new Error('BENCH_REPLICA must be standby (or unset)');
  return value;
}

/**
 * With BENCH_REPLICA: a primary and a streaming standby of the bench's own (initdb and
 * pg_basebackup into temporary directories, as the fault suite's topology), the bench database on
 * the primary. Without: the URL as given.
 */
async function startReplicatedCluster(options: Options): Promise<{ url: string; stop(): void }> {
  if (!options.replica) return { url: options.databaseUrl, stop: () => {} };
  const settings = { shared_buffers: "'256MB'", max_connections: 200 };
  const primary = await startCluster(settings, await findFreePort());
  try {
    const standby = await startStandby(primary, await findFreePort(), settings);
    log(`the bench database is on a primary of its own (port ${primary.port}) with a streaming standby (port ${standby.port})`);
    const name = decodeURIComponent(new URL(options.databaseUrl).pathname.slice(1));
    return {
      url: primary.adminUrl(name),
      stop: () => {
        standby.destroy();
        primary.destroy();
      },
    };
  } catch (error) {
    primary.destroy();
    throw error;
  }
}

function readPooler(value: string | undefined): 'pgbouncer' | undefined {
  if (!value) return undefined;
  if (value !== 'pgbouncer') throw new Error('BENCH_POOLER must be pgbouncer (or unset)');
  return value;
}

/** PgBouncer in front of the bench database's server, when BENCH_POOLER asks for it: the URL the servers use. */
async function startPooler(options: Options): Promise<{ url: string; stop(): Promise<void> }> {
  if (!options.pooler) return { url: options.databaseUrl, stop: async () => {} };
  const direct = new URL(options.databaseUrl);
  const user = decodeURIComponent(direct.username || 'postgres');
  const pooler = await startPgBouncer({
    port: await findFreePort(),
    server: { host: direct.hostname, port: Number(direct.port || 5432) },
    users: [user],
    // Both servers' pools (10 each) are measured one at a time: each can have all of its connections.
    poolSize: 20,
  });
  log(`servers reach PostgreSQL through PgBouncer (transaction mode) on port ${pooler.port}`);
  return { url: pooler.url(user, decodeURIComponent(direct.pathname.slice(1))), stop: () => pooler.stop() };
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

/** Requests per minute per caller: the most the configuration allows, far above what a run sends. */
const BENCH_RATE_LIMIT = 1_000_000_000;

/** A server's command with the inspector on inspectPort, when the runs are profiled; skip: the words before Node's flags. */
function inspected(command: readonly string[], skip: number, inspectPort: number | undefined): readonly string[] {
  if (inspectPort === undefined) return command;
  return [...command.slice(0, skip), `--inspect=127.0.0.1:${inspectPort}`, ...command.slice(skip)];
}

async function startServers(
  options: Options,
  serverUrl: string,
  orderpayPort: number,
  payerUserId: number,
  inspectPorts: [number, number] | undefined,
): Promise<ServerProcess[]> {
  const pooled = options.pooler ? { ORDERPAY_DB_POOLER: 'transaction' } : {};
  const servers: ServerProcess[] = [];
  try {
    servers.push(
      await startServerProcess(
        'orderpay',
        // sh scripts/node.sh <Node's flags> src/cli.ts serve
        inspected(ORDERPAY_SERVE_COMMAND, 2, inspectPorts?.[0]),
        {
          DATABASE_URL: serverUrl,
          ...pooled,
          PORT: String(orderpayPort),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          NODE_ENV: 'production',
          ORDERPAY_PAYMENT_PROCESSOR: 'simulator',
          // The limiter stays on and counts every request (in PostgreSQL, as by default), with
          // budgets the load cannot reach: a 429 would count as an error and void the run.
          ORDERPAY_RATE_LIMIT_READS: String(BENCH_RATE_LIMIT),
          ORDERPAY_RATE_LIMIT_WRITES: String(BENCH_RATE_LIMIT),
          ORDERPAY_RATE_LIMIT_PAYMENTS: String(BENCH_RATE_LIMIT),
          // The slowest poll for due webhook deliveries: the only ones are (dx)'s, never to be
          // delivered (bench/webhooks.ts), and this process idles while (dw) and (dx) load the baseline.
          ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '60000',
          // (g) reads a page by number near the end of the orders: tens of seconds at 10M.
          ORDERPAY_DB_STATEMENT_TIMEOUT_MS: String(BENCH_STATEMENT_TIMEOUT_MS),
        },
        /"event":"listening","url":"([^"]+)"/,
      ),
    );
    servers.push(
      await startServerProcess(
        'baseline',
        inspected(nodeCommand(fileURLToPath(new URL('./raw-server.ts', import.meta.url))), 1, inspectPorts?.[1]),
        {
          DATABASE_URL: serverUrl,
          ...(options.pooler ? { POOLER: 'transaction' } : {}),
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

async function findStaffUserId(db: Db): Promise<number> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM users WHERE email = $1', [BENCH_STAFF_EMAIL]);
  return rows[0]!.id;
}

function commandLine(options: Options): string {
  const overrides = [
    'BENCH_ORDERS',
    'BENCH_SCENARIOS',
    'BENCH_ROUNDS',
    'BENCH_SECONDS',
    'BENCH_WARMUP_SECONDS',
    'BENCH_CONNECTIONS',
    'BENCH_POOLER',
    'BENCH_REPLICA',
    'BENCH_PROFILE',
    'BENCH_PROFILE_NAME',
  ]
    .filter((name) => process.env[name])
    .map((name) => `${name}=${process.env[name]} `)
    .join('');
  return `${overrides}npm run bench${options.reseed ? ' -- --reseed' : ''}`;
}

/** The webhook dispatcher's throughput, (j): an orderpay of its own that may deliver to loopback, its memory sampled as orderpay's. */
async function measureWebhooks(db: Db, databaseUrl: string): Promise<{ scenarios: WebhookScenario[]; rss: RssReport }> {
  const server = await startDeliveringOrderpay(databaseUrl);
  const rss = startRssSampling([{ ...server, name: 'orderpay' }]);
  try {
    rss.begin(WEBHOOK_RSS_LABEL);
    const scenarios = await measureWebhookScenarios(db, server.url, log);
    rss.end();
    return { scenarios, rss: rss.stop() };
  } catch (error) {
    rss.stop();
    throw error;
  } finally {
    await server.stop();
  }
}

/** Writes the results file where the run makes one, then renders the page from the files. */
function publish(options: Options, results: BenchResults): void {
  if (options.pooler || options.replica) {
    log(
      `${options.pooler ? 'BENCH_POOLER' : 'BENCH_REPLICA'}: the figures are printed, not written (the page shows direct connections to one server)`,
    );
    return;
  }
  if (options.profileDir) {
    log(`BENCH_PROFILE: the figures are printed, not written (the profiler costs the servers CPU); profiles in ${options.profileDir}`);
    if (options.profileName) {
      log(`kept the summaries in ${keepProfileRun(options.profileName, options.profileDir, commandLine(options))}`);
      if (renderDocFromResults()) log('rendered docs/benchmarks.md');
    }
    return;
  }
  // (ap)'s figures are kept apart, at 1M orders only: (ap) alone is a short run, every scenario a long one.
  const dpop = results.scenarios.find((r) => r.scenario.key === DPOP_SCENARIO);
  const rest = { ...results, scenarios: results.scenarios.filter((r) => r !== dpop) };
  const reference = options.orders === REFERENCE_ORDERS;
  if (dpop && reference) log(`wrote ${writeDpopResults({ info: results.info, result: dpop })}`);
  else if (dpop)
    log(`(${DPOP_SCENARIO}) is printed, not written: its figures are kept at ${REFERENCE_ORDERS.toLocaleString('en-US')} orders only`);
  const onlyDpop = dpop && rest.scenarios.length === 0 && rest.deepPages.length === 0 && !rest.slowProcessor;
  if ((options.scenarios && reference) || onlyDpop) {
    log(`BENCH_SCENARIOS ran only some scenarios: no bench/results/orders-${options.orders}.json`);
    if (!(dpop && reference)) {
      log('docs/benchmarks.md left as it was');
      return;
    }
  } else log(`wrote ${writeResults(rest)}`);
  if (renderDocFromResults()) log('rendered docs/benchmarks.md');
  else log(`docs/benchmarks.md left as it was: it needs bench/results/orders-${REFERENCE_ORDERS}.json (npm run bench)`);
}

const allAnswered = ({ scenarios, deepPages }: BenchResults) =>
  scenarios.every((r) => r.orderpay.errors + r.baseline.errors === 0) &&
  deepPages.every((r) => Object.values(r.columns).every((c) => c.errors === 0));

async function main(): Promise<number> {
  const options = readOptions(process.argv.slice(2), process.env);
  if (options.render) {
    if (!renderDocFromResults()) throw new Error(`no bench/results/orders-${REFERENCE_ORDERS}.json to render docs/benchmarks.md from`);
    log('rendered docs/benchmarks.md');
    return 0;
  }
  if (options.check) committedScenarios(readResults(options.orders), options);
  const cluster = await startReplicatedCluster(options);
  try {
    return await runBench({ ...options, databaseUrl: cluster.url });
  } finally {
    cluster.stop();
  }
}

async function runBench(options: Options): Promise<number> {
  const generator = await chooseLoadGenerator(log);
  await ensureDatabase(options.databaseUrl);
  // One connection is all the seed needs; its statements may run long (building an index of 10M
  // orders takes minutes).
  const db = await openPostgres(options.databaseUrl, {
    pooler: 'none',
    poolMax: 1,
    connectTimeoutMs: 10_000,
    statementTimeoutMs: 1_800_000,
    idleInTransactionTimeoutMs: 60_000,
  });
  let servers: ServerProcess[] = [];
  let profilers: Record<string, Profiler> | undefined;
  const pooler = await startPooler(options);
  const stopServers = () => Promise.all(servers.map((s) => s.stop()));
  const interrupt = () => void stopServers().finally(() => void pooler.stop().finally(() => process.exit(130)));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    await migrate(db);
    const seedSeconds = await seedDatabase(db, options);
    const orderpayPort = await findFreePort();
    const config = loadConfig({
      DATABASE_URL: options.databaseUrl,
      PORT: String(orderpayPort),
      NODE_ENV: 'production',
      ORDERPAY_PAYMENT_PROCESSOR: 'simulator',
    });
    // Four hours: every scenario at 10M orders takes over half an hour ((g)'s pages by number).
    const issueToken = (jkt?: string) =>
      issueTokenFor(db, config, { email: BENCH_STAFF_EMAIL }, ['orders:read', 'payments:write'], 14_400, jkt);
    const token = await issueToken();
    const pair = pairScenarios(options.scenarios);
    let workloads: Workload[] = pair?.size === 0 ? [] : await chooseWorkloads(db, pair);
    // Migrated above, before either server starts: the baseline writes the tables of 0004_payments
    // and 0008_events_webhooks. A run without payments leaves them alone.
    if (workloads.some(isPaymentWorkload)) await resetPaymentTables(db);
    if (workloads.some(isDpopWorkload)) await resetDpopProofs(db);
    const inspectPorts: [number, number] | undefined = options.profileDir ? [await findFreePort(), await findFreePort()] : undefined;
    servers = await startServers(options, pooler.url, orderpayPort, await findStaffUserId(db), inspectPorts);
    if (inspectPorts) profilers = { orderpay: await connectProfiler(inspectPorts[0]), baseline: await connectProfiler(inspectPorts[1]) };
    const rss = startRssSampling(servers);
    const [orderpay, baseline] = servers as [ServerProcess, ServerProcess];
    const targets: Target[] = [
      { server: orderpay, headers: { authorization: `Bearer ${token}` }, writesEvents: true },
      { server: baseline, headers: {}, writesEvents: false },
    ];
    workloads = await prepareWorkloads(workloads, targets, { orders: options.orders, dpop: { publicUrl: config.publicUrl, issueToken } });
    await verifyResponses(db, workloads, targets);
    log(`${generator.name}: ${options.connections} connections, ${options.rounds} rounds × ${options.seconds} s per column and scenario`);
    const replicaLag = options.replica !== undefined && (await countStandbys(db)) > 0;
    if (options.replica && !replicaLag) throw new Error('BENCH_REPLICA: the standby is not streaming from the primary');
    const profiling = profilers && options.profileDir ? { profilers, dir: options.profileDir } : undefined;
    if (profiling) mkdirSync(profiling.dir, { recursive: true });
    const measured = await measure(db, generator, { ...options, replicaLag, profiling }, workloads, targets, rss, log);
    let memory = rss.stop();
    await stopServers();
    servers = [];
    let webhookScenarios: WebhookScenario[] | undefined;
    let embeddedMemory: EmbeddedMemory[] | undefined;
    if (!options.scenarios) {
      const webhooks = await measureWebhooks(db, options.databaseUrl);
      webhookScenarios = webhooks.scenarios;
      memory = mergeRssReports(memory, webhooks.rss);
      embeddedMemory = await measureEmbeddedMemory(log);
    }
    let slowProcessor: SlowProcessorResult | undefined;
    if (runsSlowProcessor(options.scenarios)) {
      await resetPaymentTables(db);
      slowProcessor = await measureSlowProcessor(db, { ...options, load: generator, log });
    }
    const postgresVersion = (await db.query<{ v: string }>("SELECT 'PostgreSQL ' || current_setting('server_version') AS v")).rows[0]!.v;
    const results: BenchResults = {
      info: {
        date: new Date().toISOString(),
        command: commandLine(options),
        orders: options.orders,
        connections: options.connections,
        rounds: options.rounds,
        seconds: options.seconds,
        warmupSeconds: options.warmupSeconds,
        loadGenerator: generator.name,
        postgresVersion,
        machine: describeMachine(),
        seedSeconds,
        interference: measured.interference,
        webhookScenarios,
        orderpayNodeFlags: ORDERPAY_NODE_FLAGS,
      },
      ...toResults(workloads, measured.columns),
      rss: memory,
      embeddedMemory,
      slowProcessor,
    };
    if (options.check) return reportCheck(results, readResults(options.orders), options);
    console.log(`\n${formatConsoleTable(results)}\n`);
    publish(options, results);
    return allAnswered(results) ? 0 : 1;
  } finally {
    for (const profiler of Object.values(profilers ?? {})) profiler.close();
    await stopServers();
    await pooler.stop();
    await db.close();
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
}

process.exitCode = await main().catch((error: unknown) => {
  console.error('bench:', error instanceof Error ? error.message : error);
  return 1;
});
