// Scenario (h): the resident set size of each server under test, from /proc/<pid>/status (VmRSS,
// Linux, and its private part RssAnon), sampled every second from the servers' start to their stop. Each scenario gets the most
// each process held while its rounds ran and what it held when its last round ended; the whole
// bench gets each process's most, warm-ups, checks and idle moments included.
import { readFileSync } from 'node:fs';
import { mark, markdownTable, mb } from './markdown.ts';
import { type Allocator, allocatorOf, type ServerProcess } from './processes.ts';

const SAMPLE_INTERVAL_MS = 1_000;
/** Target: orderpay's resident set stays at or under this across the whole bench (on PostgreSQL). */
const RSS_TARGET_BYTES = 150e6;

/** The phase of the webhook delivery measurement, whose orderpay is sampled under the name orderpay. */
export const WEBHOOK_RSS_LABEL = 'webhook delivery';

/** One process during one scenario, in bytes. */
export interface RssFigures {
  max: number;
  end: number;
  /** The most of its resident set that was its own (RssAnon: not pages of files it maps, such as Node's binary). */
  privateMax?: number;
}

export interface RssPhase {
  /** The scenario, as its tables name it: "(a) GET /orders/{id}". */
  label: string;
  /** By server name (orderpay, baseline, orderpay-webhooks). */
  servers: Record<string, RssFigures>;
}

export interface RssReport {
  phases: RssPhase[];
  /** The most each server held over the whole bench, by server name, in bytes. */
  max: Record<string, number>;
  /** The most of it that was its own (RssAnon), by server name, in bytes. */
  privateMax?: Record<string, number>;
  /** The malloc each server ran on, by server name (absent from results before it was recorded: glibc). */
  allocators?: Record<string, Allocator>;
}

/** VmRSS of a process and its RssAnon (where the kernel reports it) in bytes, or undefined when it is gone or /proc is absent. */
export function readRss(pid: number): { rss: number; private?: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const bytes = (field: string) => {
    const kib = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  };
  const rss = bytes('VmRSS');
  return rss === undefined ? undefined : { rss, private: bytes('RssAnon') };
}

export interface RssSampler {
  /** Samples now, and counts this and the samples until end() for the scenario labelled so. */
  begin(label: string): void;
  /** Samples now (the scenario's end, as far as it knows) and stops counting for it. */
  end(): void;
  /** Stops sampling; the figures so far. */
  stop(): RssReport;
}

/** Starts sampling the servers every second. */
export function startRssSampling(servers: readonly ServerProcess[]): RssSampler {
  const phases = new Map<string, Record<string, RssFigures>>();
  const max: Record<string, number> = {};
  const privateMax: Record<string, number> = {};
  const allocators: Record<string, Allocator> = {};
  let current: Record<string, RssFigures> | undefined;
  const sample = () => {
    for (const server of servers) {
      const read = readRss(server.pid);
      if (read === undefined) continue;
      const { rss } = read;
      const allocator = allocators[server.name] ?? allocatorOf(server.pid);
      if (allocator) allocators[server.name] = allocator;
      max[server.name] = Math.max(max[server.name] ?? 0, rss);
      const own = read.private;
      if (own !== undefined) privateMax[server.name] = Math.max(privateMax[server.name] ?? 0, own);
      if (!current) continue;
      const figures = current[server.name];
      const ownMax = own === undefined ? figures?.privateMax : Math.max(figures?.privateMax ?? 0, own);
      current[server.name] = { max: Math.max(figures?.max ?? 0, rss), end: rss, ...(ownMax === undefined ? {} : { privateMax: ownMax }) };
    }
  };
  const timer = setInterval(sample, SAMPLE_INTERVAL_MS);
  timer.unref();
  sample();
  return {
    begin(label) {
      current = phases.get(label) ?? {};
      phases.set(label, current);
      sample();
    },
    end() {
      sample();
      current = undefined;
    },
    stop() {
      clearInterval(timer);
      sample();
      return { phases: [...phases].map(([label, figures]) => ({ label, servers: figures })), max, privateMax, allocators };
    },
  };
}

/** Two reports as one: the phases of both, and each server's most over both. */
export function mergeRssReports(a: RssReport, b: RssReport): RssReport {
  const most = (x: Record<string, number> = {}, y: Record<string, number> = {}) => {
    const merged = { ...x };
    for (const [name, bytes] of Object.entries(y)) merged[name] = Math.max(merged[name] ?? 0, bytes);
    return merged;
  };
  return {
    phases: [...a.phases, ...b.phases],
    max: most(a.max, b.max),
    privateMax: most(a.privateMax, b.privateMax),
    allocators: { ...a.allocators, ...b.allocators },
  };
}

export const RSS_HEADER = ['scenario', 'orderpay max MB', 'end MB', 'its own max MB', 'baseline max MB', 'end MB', 'its own max MB'];

/** Results from before RssAnon was sampled show a dash in its column. */
const orDash = (bytes: number | undefined) => (bytes === undefined ? '—' : mb(bytes));

export function rssRows(report: RssReport): string[][] {
  const cells = (figures: RssFigures | undefined) =>
    figures ? [mb(figures.max), mb(figures.end), orDash(figures.privateMax)] : ['—', '—', '—'];
  const whole = (name: string) => [orDash(report.max[name]), '', orDash(report.privateMax?.[name])];
  return [
    ...report.phases.map((phase) => [phase.label, ...cells(phase.servers.orderpay), ...cells(phase.servers.baseline)]),
    ['whole bench', ...whole('orderpay'), ...whole('baseline')],
  ];
}

/** "orderpay on jemalloc, baseline on glibc": the malloc each server ran on. */
export function allocatorsLine(report: RssReport): string {
  const names = Object.keys(report.max);
  return names.map((name) => `${name} on ${report.allocators?.[name] ?? 'glibc'}`).join(', ');
}

export const rssMet = (report: RssReport) => (report.max.orderpay ?? Infinity) <= RSS_TARGET_BYTES;

/** What the "its own" columns are, or that the run predates them. */
function ownMemoryLine(report: RssReport): string {
  if (!report.privateMax || Object.keys(report.privateMax).length === 0) return ' (This run predates the "its own" columns.)';
  return ` "Its own" is the most of the resident set that was the process's alone (\`RssAnon\`: V8's heap,
malloc, stacks): what one more process of each costs. The rest is pages of the files it maps
(\`RssFile\`), Node's binary first, which every Node process on the machine shares and the kernel can
drop and read again, and shared memory (\`RssShmem\`).`;
}

export function renderRssSection(report: RssReport): string {
  return `
## Memory (h)

${markdownTable(RSS_HEADER, rssRows(report))}

**orderpay's most across the whole bench: ${report.max.orderpay === undefined ? 'not measured' : `${mb(report.max.orderpay)} MB`}** (target ≤ ${mb(RSS_TARGET_BYTES)} MB on
PostgreSQL: ${mark(rssMet(report))}; why it stays: [decisions/0093-304-and-memory-targets.md](decisions/0093-304-and-memory-targets.md)). The resident set size (\`VmRSS\` of \`/proc/<pid>/status\`) of each server
process, sampled every second from its start to its stop: per scenario the most while its rounds
ran and the last sample, taken when its last round ended; "whole bench" is the most over every
sample, warm-ups, checks and idle moments included.${ownMemoryLine(report)} A server is sampled also during the scenarios
that load only the other.${report.phases.some((p) => p.label === WEBHOOK_RSS_LABEL) ? ` The ${WEBHOOK_RSS_LABEL} row is the orderpay of [its measurement](#webhook-delivery-j),\na process of its own, counted in orderpay's whole-bench figure.` : ''} MB = 10⁶ bytes.

orderpay runs as \`npm start\` runs it (docs/deploy.md, the Node flags and the variables); the
malloc of each: ${allocatorsLine(report)}. Where its resident set goes on PostgreSQL
under (a)'s load (\`/proc/<pid>/smaps\`, V8's heap statistics and glibc's \`malloc_stats\`, read by
hand): Node's own binary ~54 MB (file pages, shared: a bare \`node -e\` touches 30 MB of it;
OpenSSL, V8's compilers, ICU's data and the built-in modules our dependencies use, the rest); V8's
heap ~60–65 MB, of which ~37 MB live after a full collection (modules' source ~10 MB, bytecode and
compiled code ~10 MB, schemas, routes, the authorization server), the young generation (2 × 4 MB)
and garbage awaiting the next full collection; on glibc its allocator ~45 MB, of which ~20 MB in
use (Node's and V8's own structures, the compile cache's ~4 MB) and the rest freed memory glibc
keeps, most of it what V8's optimising compiler used while the load warmed up: \`malloc_trim(0)\`,
called from a debugger, gave back 25 MB (176 → 152 MB). Node cannot call it; jemalloc, which
\`scripts/node.sh\` preloads for the server where the system has it, returns freed pages by
itself: two processes side by side, one on each, held 175 MB on glibc and 150 MB on jemalloc
under the same load of lookups by id (the same requests per second), 158 and 156 MB under list
pages. The bench's peak is higher than either, and varies by some 10 MB from run to run. What 150 MB leaves:
the baseline (node:http and pg, nothing else, on Node's defaults) is in the table above; run by
hand under (a)'s load on another machine it held 165 MB with Node's defaults and 130 MB with
\`--max-semi-space-size=4\`; the authorization server's modules are ~12 MB of
orderpay's (170 MB with \`ORDERPAY_SERVERS=resource\`, 182 MB with both, on glibc). Without
\`--max-old-space-size\` the same load took orderpay to 340–370 MB (349 MB in the whole bench of
2026-11-25, before the flag): V8 sizes its heap from the machine's memory and on 24 GiB let the
old generation grow to about four times what is live before collecting, the young generation to
64 MB per semi-space. Compiling each distinct schema once and loading PGlite and ioredis only
where they are used took the live heap from ~45 to ~37 MB, and 4 MB semi-spaces instead of 16
saved ~25 MB more (224 MB in the whole bench of 2026-11-25); 8 MB, since, peaked within a run's
spread of what 4 MB did (199 MB before; 210 and 200 MB in two full runs after, on two machines)
and spare the list pages and replays a fifth of their CPU ([decisions/0121-request-path-cost.md](decisions/0121-request-path-cost.md)). What remains above 150 MB we could
lower only at a price: \`--no-concurrent-recompilation\` (~20 MB less on glibc) compiles on the
main thread (p99 up to twice as high while a load warms up); \`--optimize-for-size\` and
\`--memory-saver-mode\` cost twice the CPU per request; glibc's mmap and trim thresholds,
\`--v8-pool-size\`, \`--no-maglev\` and a smaller heap-growing factor saved nothing measurable.
`;
}
