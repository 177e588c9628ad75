// (i): payments against a processor that answers after 300 ms (the simulator with
// ORDERPAY_SIMULATOR_LATENCY_MS), 50 connections each paying under new keys, and 4 connections
// reading GET /v1/orders/{id} beside them, on PostgreSQL and on the embedded database. What it
// shows: a slow processor holds no connection and no lock, so payments are bound by the
// processor's latency and the connections paying (50 / 0.3 s ≈ 166 per second at most), and the
// reads beside them by nothing of the payments'.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { issueTokenFor } from '../src/auth/access-token.ts';
import { loadConfig } from '../src/config.ts';
import type { Db } from '../src/db/db.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPglite } from '../src/db/pglite.ts';
import type { LoadGenerator, LoadResult } from './load.ts';
import { mark, markdownTable, ms, rate } from './markdown.ts';
import { PAYMENT_BODY } from './payments.ts';
import { findFreePort, ORDERPAY_SERVE_COMMAND, startServerProcess } from './processes.ts';
import { BENCH_STAFF_EMAIL, seedBenchData } from './seed.ts';

export const SLOW_PROCESSOR_MS = 300;
export const PAYING_CONNECTIONS = 50;
export const READING_CONNECTIONS = 4;
/** Orders the embedded database is seeded with: the reads look up a few of them. */
const EMBEDDED_ORDERS = 10_000;
const BENCH_LIMIT = String(1_000_000_000);

/** One round: both loads at once. */
export interface SlowProcessorRound {
  payments: LoadResult;
  reads: LoadResult;
}

export interface SlowProcessorRun {
  database: 'postgres' | 'embedded';
  rounds: SlowProcessorRound[];
}

export interface SlowProcessorResult {
  latencyMs: number;
  payingConnections: number;
  readingConnections: number;
  runs: SlowProcessorRun[];
}

/** The targets (issue 24): on PostgreSQL ≥ 100 payments/s and reads at p99 ≤ 100 ms; on the embedded database reads at p99 ≤ 250 ms. */
export const SLOW_PROCESSOR_TARGETS = {
  postgres: { paymentsPerSecond: 100, readP99Ms: 100 },
  embedded: { paymentsPerSecond: undefined, readP99Ms: 250 },
} as const;

interface Options {
  /** The bench's PostgreSQL database, seeded; its payment tables emptied by the caller. */
  databaseUrl: string;
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  load: LoadGenerator;
  log(line: string): void;
}

/** The server's environment: production, the simulator answering after 300 ms, budgets the load never reaches. */
function serverEnv(database: Record<string, string>, port: number): Record<string, string> {
  return {
    ...database,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    ORDERPAY_PAYMENT_PROCESSOR: 'simulator',
    ORDERPAY_SIMULATOR_LATENCY_MS: String(SLOW_PROCESSOR_MS),
    ORDERPAY_RATE_LIMIT_READS: BENCH_LIMIT,
    ORDERPAY_RATE_LIMIT_WRITES: BENCH_LIMIT,
    ORDERPAY_RATE_LIMIT_PAYMENTS: BENCH_LIMIT,
    ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '60000',
  };
}

/** A staff token the server accepts (the same issuer and audience), and a few orders to read. */
async function prepare(db: Db, env: Record<string, string>): Promise<{ token: string; orderPaths: string[] }> {
  const config = loadConfig(env);
  const token = await issueTokenFor(db, config, { email: BENCH_STAFF_EMAIL }, ['orders:read', 'payments:write'], 3600);
  const { rows } = await db.query<{ id: number }>('SELECT id FROM orders WHERE deleted_at IS NULL ORDER BY id LIMIT 100');
  return { token, orderPaths: rows.map((row) => `/v1/orders/${row.id}`) };
}

/** Both loads at once: the payments and the reads beside them. */
async function loadBoth(options: Options, url: string, prepared: { token: string; orderPaths: string[] }, seconds: number) {
  const headers = { authorization: `Bearer ${prepared.token}` };
  const [payments, reads] = await Promise.all([
    options.load.run({
      url,
      requests: { method: 'POST', path: '/v1/payments', body: PAYMENT_BODY, idempotencyKey: 'unique' },
      headers,
      connections: PAYING_CONNECTIONS,
      seconds,
    }),
    options.load.run({ url, requests: { method: 'GET', paths: prepared.orderPaths }, headers, connections: READING_CONNECTIONS, seconds }),
  ]);
  return { payments, reads };
}

async function measureOn(
  database: SlowProcessorRun['database'],
  options: Options,
  env: Record<string, string>,
  prepared: { token: string; orderPaths: string[] },
): Promise<SlowProcessorRun> {
  const server = await startServerProcess(`orderpay (${database})`, ORDERPAY_SERVE_COMMAND, env, /"event":"listening","url":"([^"]+)"/);
  try {
    if (options.warmupSeconds > 0) {
      options.log(`(i) ${database}: warming up ${options.warmupSeconds} s`);
      await loadBoth(options, server.url, prepared, options.warmupSeconds);
    }
    const rounds: SlowProcessorRound[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      const measured = await loadBoth(options, server.url, prepared, options.seconds);
      const { payments, reads } = measured;
      options.log(
        `(i) ${database} round ${round}: ${payments.requestsPerSecond.toFixed(1)} payments/s (p50 ${payments.p50Ms.toFixed(0)} ms), reads p99 ${reads.p99Ms.toFixed(1)} ms`,
      );
      if (payments.errors || reads.errors) throw new Error(`(i) ${database}: ${payments.errors} payments and ${reads.errors} reads failed`);
      rounds.push(measured);
    }
    return { database, rounds };
  } finally {
    await server.stop();
  }
}

export async function measureSlowProcessor(db: Db, options: Options): Promise<SlowProcessorResult> {
  const postgresEnv = serverEnv({ DATABASE_URL: options.databaseUrl }, await findFreePort());
  const onPostgres = await measureOn('postgres', options, postgresEnv, await prepare(db, postgresEnv));

  const dir = mkdtempSync(path.join(tmpdir(), 'orderpay-bench-embedded-'));
  try {
    const embeddedEnv = serverEnv({ DATA_DIR: path.join(dir, 'data'), ORDERPAY_SEED_ON_EMPTY: 'false' }, await findFreePort());
    // Seeded and its token issued before the server opens the data directory (one process at a time).
    const embedded = await openPglite(embeddedEnv.DATA_DIR!);
    let prepared: { token: string; orderPaths: string[] };
    try {
      await migrate(embedded);
      await seedBenchData(embedded, { orders: EMBEDDED_ORDERS, reseed: true, onProgress: () => undefined, onStep: () => undefined });
      prepared = await prepare(embedded, embeddedEnv);
    } finally {
      await embedded.close();
    }
    const onEmbedded = await measureOn('embedded', options, embeddedEnv, prepared);
    return {
      latencyMs: SLOW_PROCESSOR_MS,
      payingConnections: PAYING_CONNECTIONS,
      readingConnections: READING_CONNECTIONS,
      runs: [onPostgres, onEmbedded],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A database's rounds together: payments/s and reads/s the mean of the rounds, p50 the median, p99 the worst round's. */
function summarize(run: SlowProcessorRun) {
  const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const of = (pick: (round: SlowProcessorRound) => LoadResult) => ({
    perSecond: mean(run.rounds.map((r) => pick(r).requestsPerSecond)),
    p50Ms: median(run.rounds.map((r) => pick(r).p50Ms)),
    p99Ms: Math.max(...run.rounds.map((r) => pick(r).p99Ms)),
  });
  return { payments: of((r) => r.payments), reads: of((r) => r.reads) };
}

/** Whether a database's figures meet its targets. */
export function slowProcessorMet(run: SlowProcessorRun): boolean {
  const { payments, reads } = summarize(run);
  const target = SLOW_PROCESSOR_TARGETS[run.database];
  return reads.p99Ms <= target.readP99Ms && (target.paymentsPerSecond === undefined || payments.perSecond >= target.paymentsPerSecond);
}

export const SLOW_PROCESSOR_HEADER = ['(i) database', 'payments/s', 'p50 ms', 'p99 ms', 'reads/s', 'p50 ms', 'p99 ms', 'target', ''];

export function slowProcessorRows(result: SlowProcessorResult): string[][] {
  return result.runs.map((run) => {
    const { payments, reads } = summarize(run);
    const target = SLOW_PROCESSOR_TARGETS[run.database];
    const wanted = `${target.paymentsPerSecond === undefined ? '' : `≥ ${target.paymentsPerSecond}/s, `}reads p99 ≤ ${target.readP99Ms} ms`;
    return [
      run.database === 'postgres' ? 'PostgreSQL' : 'embedded (PGlite)',
      rate(payments.perSecond),
      ms(payments.p50Ms),
      ms(payments.p99Ms),
      rate(reads.perSecond),
      ms(reads.p50Ms),
      ms(reads.p99Ms),
      wanted,
      mark(slowProcessorMet(run)),
    ];
  });
}

export function renderSlowProcessorSection(result: SlowProcessorResult | undefined): string {
  if (!result) return '';
  return `
## A slow processor (i)

${markdownTable(SLOW_PROCESSOR_HEADER, slowProcessorRows(result))}

orderpay with the simulator answering each call after ${result.latencyMs} ms
(\`ORDERPAY_SIMULATOR_LATENCY_MS\`), NODE_ENV=production, as above; ${result.payingConnections} connections post
\`POST /v1/payments\` under a new Idempotency-Key each, while ${result.readingConnections} connections read
\`GET /v1/orders/{id}\` beside them (100 ids), both at once, ${result.runs[0]?.rounds.length ?? 0} rounds after a warm-up;
payments/s and reads/s are the mean of the rounds, p50 the median, p99 the worst round's. On
PostgreSQL the bench's database; embedded, a new data directory with ${EMBEDDED_ORDERS.toLocaleString('en-US')} orders. The processor is
asked with no transaction open (docs/payments.md, "How a payment is made"), so a payment holds a
connection only for its two short transactions: payments are bound by the connections paying and
the processor's latency (${result.payingConnections} ÷ ${(result.latencyMs / 1000).toFixed(1)} s ≈ ${Math.round(result.payingConnections / (result.latencyMs / 1000))}/s at most) and the machine's
cores. The embedded database is one connection in the server's thread: it runs each statement on
a turn of the event loop of its own and the work of reads first ([decisions/0099-reads-first-on-embedded-database.md](decisions/0099-reads-first-on-embedded-database.md)), so its payments are bound by PGlite's speed and its reads stay
served. Before the phases, with the processor call inside the payment's transaction, the same
load made 32 payments/s on PostgreSQL with reads at p99 2.6 s, and 3.1 payments/s on the embedded
database with no read served in 10 s.
`;
}
