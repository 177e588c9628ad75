// CPU time spent per request by a server process and by the PostgreSQL backends of the benchmark
// database, from /proc (Linux). Throughput moves with whatever else runs on the machine; CPU per
// request much less, so it is the steadier way to compare orderpay with the baseline.
import { readdirSync, readFileSync } from 'node:fs';

// USER_HZ: the unit of utime/stime in /proc/<pid>/stat, 100 on every Linux architecture we run on.
const TICKS_PER_SECOND = 100;

/** utime + stime of a process in seconds, or undefined when it is gone or /proc is absent. */
function processCpuSeconds(pid: number | string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at ")"; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** CPU seconds per pid of the PostgreSQL backends serving `database` (found by process title). */
function backendCpuSeconds(database: string): Map<string, number> {
  const cpu = new Map<string, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return cpu;
  }
  for (const pid of pids) {
    try {
      // Title of a backend: "postgres: [cluster: ]user database host(port) state".
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!title.startsWith('postgres: ') || !title.includes(` ${database} `)) continue;
      const seconds = processCpuSeconds(pid);
      if (seconds !== undefined) cpu.set(pid, seconds);
    } catch {
      // the process ended while we looked
    }
  }
  return cpu;
}

export interface CpuSample {
  server: number | undefined;
  backends: Map<string, number>;
}

export function sampleCpu(serverPid: number, database: string): CpuSample {
  return { server: processCpuSeconds(serverPid), backends: backendCpuSeconds(database) };
}

/** Microseconds of server and PostgreSQL CPU per request between two samples (NaN without /proc). */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): { serverUs: number; postgresUs: number } {
  const server = before.server !== undefined && after.server !== undefined ? after.server - before.server : NaN;
  let postgres = 0;
  for (const [pid, seconds] of after.backends) postgres += seconds - (before.backends.get(pid) ?? 0);
  if (after.backends.size === 0) postgres = NaN;
  return { serverUs: (server / requests) * 1e6, postgresUs: (postgres / requests) * 1e6 };
}

export interface MachineCpu {
  /** Seconds of all cores: busy (user, nice, system, irq, softirq), stolen by the hypervisor, total. */
  busy: number;
  steal: number;
  total: number;
  /** This process and its waited-for children (wrk): utime + stime + cutime + cstime. */
  ours: number;
}

export function sampleMachineCpu(): MachineCpu | undefined {
  try {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .split(/\s+/)
      .slice(1, 9)
      .map(Number) as number[];
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    return {
      busy: (user! + nice! + system! + irq! + softirq!) / TICKS_PER_SECOND,
      steal: steal! / TICKS_PER_SECOND,
      total: (user! + nice! + system! + idle! + iowait! + irq! + softirq! + steal!) / TICKS_PER_SECOND,
      ours: (fields[11]! + fields[12]! + fields[13]! + fields[14]!) / TICKS_PER_SECOND,
    };
  } catch {
    return undefined;
  }
}

/**
 * Shares of the machine's CPU time between two samples taken by other processes (anything but the
 * benchmark, its load generator, the servers and their PostgreSQL backends) and by the hypervisor.
 */
export function interference(
  before: MachineCpu | undefined,
  after: MachineCpu | undefined,
  benchmarkedSeconds: number,
): { others: number; steal: number } {
  if (!before || !after) return { others: NaN, steal: NaN };
  const total = after.total - before.total;
  const others = after.busy - before.busy - (after.ours - before.ours) - benchmarkedSeconds;
  return { others: Math.max(0, others) / total, steal: (after.steal - before.steal) / total };
}
