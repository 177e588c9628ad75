// The measurement: a warm-up of every column, then rounds in which each scenario's columns take
// turns to go first; every run is bounded by its duration (or by its DPoP proofs), costed in CPU
// from /proc, and checked (payments against the tables, expected statuses against wrk's count),
// while the servers' memory is sampled per scenario.
import { writeFileSync } from 'node:fs';
import type { Db } from '../src/db/db.ts';
import { cpuPerRequest, interference, sampleCpu, sampleMachineCpu } from './cpu.ts';
import type { LoadGenerator, RequestMix } from './load.ts';
import { finishPaymentRun, startPaymentRun } from './payments.ts';
import type { Target } from './processes.ts';
import { aggregate, type Aggregate, type Interference, type Measurement } from './report.ts';
import { sampleReplicaLag } from './replica-lag.ts';
import type { RssSampler } from './rss.ts';
import { formatSummary, saveProfile, summariseProfile, type CpuProfile, type Profiler } from './profile.ts';
import { columnsOf, isPaymentWorkload, keyOf, labelOf, type Column, type Workload } from './workloads.ts';

export interface MeasureOptions {
  databaseUrl: string;
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** The database's server has a streaming standby: its lag is sampled during each payments run. */
  replicaLag?: boolean;
  /** BENCH_PROFILE: the measured runs are profiled (a profiler per server name), and summarised in dir. */
  profiling?: { profilers: Record<string, Profiler>; dir: string };
}

/** The longest the bench waits for statements a run left behind (a deep page by number at 10M orders). */
const LEFTOVER_TIMEOUT_MS = 330_000;

/**
 * Waits until the statements of requests in flight when the run ended have finished: wrk drops
 * those requests when its time is up, but the server's statements run on (a deep page by number
 * for seconds) and would load the next run. Counts the database's active statements other than
 * ours that started before the run ended.
 */
async function waitForLeftoverStatements(db: Db, database: string, ended: Date, log: (line: string) => void): Promise<void> {
  const deadline = Date.now() + LEFTOVER_TIMEOUT_MS;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*) AS n FROM pg_stat_activity
        WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid() AND query_start < $2`,
      [database, ended],
    );
    if (rows[0]!.n === 0) return;
    if (Date.now() > deadline) return log(`${rows[0]!.n} statements still run ${LEFTOVER_TIMEOUT_MS / 1000} s after a run ended`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Saves a run's profile and its summary in dir; returns the summary as the log prints it. */
function keepProfile(dir: string, name: string, profile: CpuProfile, requests: number, cpuUs: number): string {
  const file = name.replace(/[^\w.-]+/g, '_');
  const summary = summariseProfile(profile, requests, cpuUs);
  saveProfile(`${dir}/${file}.cpuprofile`, profile);
  writeFileSync(`${dir}/${file}.json`, `${JSON.stringify(summary, null, 2)}\n`);
  return formatSummary(`profile (${name})`, summary);
}

/** Round r runs the columns rotated by r: A/B then B/A for two, A/B/C, B/C/A, C/A/B for three. */
const rotate = <T>(items: T[], by: number) => items.map((_, i) => items[(i + by) % items.length]!);

export async function measure(
  db: Db,
  generator: LoadGenerator,
  options: MeasureOptions,
  workloads: Workload[],
  targets: Target[],
  rss: RssSampler,
  log: (line: string) => void,
): Promise<{ columns: Aggregate[][]; interference: Interference }> {
  const database = decodeURIComponent(new URL(options.databaseUrl).pathname.slice(1));
  const machineBefore = sampleMachineCpu();
  let benchmarkedSeconds = 0; // server and PostgreSQL CPU of every run, to tell other processes' share
  const fastest = new Map<Column, number>(); // each column's best req/s so far: how many DPoP proofs a run needs
  const run = async (workload: Workload, column: Column, seconds: number, measured = true): Promise<Measurement> => {
    // Made before the run's CPU is sampled: their making is not the servers' work.
    const made = typeof column.requests === 'function' ? await column.requests({ seconds, fastestRate: fastest.get(column) }) : undefined;
    if (made) log(`(${keyOf(workload)}) ${column.name}: ${made.made}`);
    try {
      const result = await loadColumn(workload, column, made?.requests ?? (column.requests as RequestMix), seconds, measured);
      if (result.proofsRanOut)
        log(`(${keyOf(workload)}) ${column.name}: its proofs ran out before ${seconds} s; its figures are over the requests made`);
      if (result.requests > 0) fastest.set(column, Math.max(fastest.get(column) ?? 0, result.requestsPerSecond));
      return result;
    } finally {
      made?.discard();
    }
  };
  const loadColumn = async (
    workload: Workload,
    column: Column,
    requests: RequestMix,
    seconds: number,
    measured: boolean,
  ): Promise<Measurement> => {
    const { target } = column;
    const rowsBefore = isPaymentWorkload(workload) ? await startPaymentRun(db, workload) : undefined;
    const before = sampleCpu(target.server.pid, database);
    const lag = options.replicaLag && rowsBefore ? sampleReplicaLag(db) : undefined;
    const profiled = measured ? await options.profiling?.profilers[target.server.name]?.start() : undefined;
    const result = await generator.run({
      url: target.server.url,
      requests,
      headers: target.headers,
      connections: column.connections ?? options.connections,
      seconds,
      timeoutSeconds: column.timeoutSeconds,
    });
    const cpu = cpuPerRequest(before, sampleCpu(target.server.pid, database), result.requests);
    if (profiled)
      log(keepProfile(options.profiling!.dir, `${keyOf(workload)}-${column.name}`, await profiled.stop(), result.requests, cpu.serverUs));
    const replica = await lag?.();
    if (replica) {
      log(
        `(${keyOf(workload)}) ${column.name}: standby replay lag p50 ${replica.p50Ms.toFixed(1)} ms, p99 ${replica.p99Ms.toFixed(1)} ms, max ${replica.maxMs.toFixed(1)} ms, at most ${replica.maxBytes.toLocaleString('en-US')} bytes behind (${replica.samples} samples)`,
      );
    }
    await waitForLeftoverStatements(db, database, new Date(), log);
    const fail = (what: string) => new Error(`(${keyOf(workload)}) ${column.name}: ${what}`);
    if (result.unexpected > 0 && requests.method === 'GET')
      throw fail(`${result.unexpected} of ${result.requests} responses were not ${requests.expectStatus}`);
    if (isPaymentWorkload(workload) && rowsBefore) {
      const warning = await finishPaymentRun(db, workload, target, rowsBefore, result.requests - result.errors);
      if (warning) log(warning);
    }
    // A warm-up of a deep page by number may end before any response: its CPU is then unknown.
    if (result.requests > 0) benchmarkedSeconds += ((cpu.serverUs + cpu.postgresUs) * result.requests) / 1e6;
    return { ...result, serverCpuUs: cpu.serverUs, postgresCpuUs: cpu.postgresUs };
  };
  const columns = workloads.map((workload) => columnsOf(workload, targets));
  if (options.warmupSeconds > 0) {
    for (const [i, workload] of workloads.entries()) {
      for (const column of columns[i]!) {
        log(`warm-up (${keyOf(workload)}) ${column.name}`);
        await run(workload, column, options.warmupSeconds, false);
      }
    }
  }
  const measured = workloads.map((_, i) => columns[i]!.map(() => [] as Measurement[]));
  for (let round = 0; round < options.rounds; round++) {
    for (const [i, workload] of workloads.entries()) {
      rss.begin(labelOf(workload));
      for (const column of rotate(columns[i]!, round)) {
        const seconds = Math.max(options.seconds, column.minSeconds ?? 0);
        const result = await run(workload, column, seconds);
        if (result.requests === 0) throw new Error(`(${keyOf(workload)}) ${column.name}: no response within ${seconds} s`);
        log(
          `round ${round + 1}/${options.rounds} (${keyOf(workload)}) ${column.name}: ${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, node ${Math.round(result.serverCpuUs)} µs/req, pg ${Math.round(result.postgresCpuUs)} µs/req${result.errors ? `, ${result.errors} errors` : ''}`,
        );
        measured[i]![columns[i]!.indexOf(column)]!.push(result);
      }
      rss.end();
    }
  }
  return {
    columns: measured.map((byColumn) => byColumn.map(aggregate)),
    interference: interference(machineBefore, sampleMachineCpu(), benchmarkedSeconds),
  };
}
