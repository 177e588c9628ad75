// The embedded database's memory, part of (h): orderpay as a newcomer runs it (no DATABASE_URL, a
// new data directory, NODE_ENV unset), started twice on the same directory — the first start
// creates the database and migrates it, the second opens it — once under Node's defaults and once
// as npm start runs it (its flags, the compile cache and malloc arenas of scripts/node.sh). The
// resident set is sampled from the spawn on: the most while starting, and what it holds idle.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdownTable, mb } from './markdown.ts';
import { type Allocator, allocatorOf, findFreePort, nodeCommand, ORDERPAY_SERVE_COMMAND, startServerProcess } from './processes.ts';
import { readRss } from './rss.ts';

const SAMPLE_INTERVAL_MS = 250;
/** How long a started server is left idle before its idle figure is read. */
const IDLE_SECONDS = 10;

/** One start, in bytes and seconds. */
export interface StartMemory {
  /** The most from the spawn until the idle figure was read. */
  peak: number;
  /** IDLE_SECONDS after it said it listens. */
  idle: number;
  /** From the spawn to "listening". */
  startSeconds: number;
  /** The malloc it ran on (absent from results before it was recorded: glibc). */
  allocator?: Allocator;
}

export interface EmbeddedMemory {
  /** How node ran: "Node's defaults" or "npm start". */
  node: string;
  first: StartMemory;
  restart: StartMemory;
}

const CLI_ARGS = [fileURLToPath(new URL('../src/cli.ts', import.meta.url)), 'serve', '--json'];

const VARIANTS: { node: string; command: readonly string[]; env: Record<string, string | undefined> }[] = [
  {
    node: "Node's defaults",
    command: nodeCommand(...CLI_ARGS),
    env: { NODE_COMPILE_CACHE: undefined, MALLOC_ARENA_MAX: undefined, LD_PRELOAD: undefined, MALLOC_CONF: undefined },
  },
  // What scripts/node.sh sets comes from running through it, as npm start does.
  { node: 'npm start', command: ORDERPAY_SERVE_COMMAND, env: {} },
];

async function measureStart(command: readonly string[], env: Record<string, string | undefined>): Promise<StartMemory> {
  let peak = 0;
  let pid: number | undefined;
  const sample = () => {
    const rss = pid === undefined ? undefined : readRss(pid)?.rss;
    if (rss !== undefined) peak = Math.max(peak, rss);
    return rss;
  };
  const timer = setInterval(sample, SAMPLE_INTERVAL_MS);
  const started = Date.now();
  try {
    const server = await startServerProcess(
      'orderpay (embedded)',
      command,
      { ...env, PORT: String(await findFreePort()) },
      /"event":"listening","url":"([^"]+)"/,
      {
        onSpawn: (spawned) => (pid = spawned),
      },
    );
    const startSeconds = (Date.now() - started) / 1000;
    try {
      await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
      const idle = sample() ?? 0;
      return { peak, idle, startSeconds, allocator: allocatorOf(server.pid) };
    } finally {
      await server.stop();
    }
  } finally {
    clearInterval(timer);
  }
}

export async function measureEmbeddedMemory(log: (line: string) => void): Promise<EmbeddedMemory[]> {
  const results: EmbeddedMemory[] = [];
  for (const variant of VARIANTS) {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'orderpay-bench-embedded-'));
    try {
      const env = { ...variant.env, DATA_DIR: dataDir, DATABASE_URL: undefined, NODE_ENV: undefined, HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
      const first = await measureStart(variant.command, env);
      const restart = await measureStart(variant.command, env);
      log(
        `embedded database, ${variant.node}: first start peak ${mb(first.peak)} MB, idle ${mb(first.idle)} MB; restart peak ${mb(restart.peak)} MB, idle ${mb(restart.idle)} MB`,
      );
      results.push({ node: variant.node, first, restart });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return results;
}

export function renderEmbeddedMemorySection(rows: EmbeddedMemory[] | undefined, nodeFlags: readonly string[]): string {
  if (!rows?.length) return '';
  const cells = (s: StartMemory) => [mb(s.peak), mb(s.idle), s.startSeconds.toFixed(1)];
  return `
### The embedded database

${markdownTable(
  ['node', 'first start: peak MB', 'idle MB', 'start s', 'restart: peak MB', 'idle MB', 'start s'],
  rows.map((row) => [row.node, ...cells(row.first), ...cells(row.restart)]),
)}

orderpay as \`npm install && npm start\` runs it: no \`DATABASE_URL\`, a new data directory, started
twice on it (the first start creates the database in PGlite and migrates it; the restart opens
it), idle for ${IDLE_SECONDS} s after it listens, the resident set sampled every ${SAMPLE_INTERVAL_MS} ms from the
spawn on. "Node's defaults" is \`node src/cli.ts serve\`; "npm start" adds its flags
(\`${nodeFlags.join(' ')}\`) and what \`scripts/node.sh\`
sets (\`NODE_COMPILE_CACHE\`, warm here from the servers above, \`MALLOC_ARENA_MAX=2\`, and
jemalloc where the system has it: ${rows.find((row) => row.node === 'npm start')?.first.allocator ?? 'glibc'} here).
Where it goes: PGlite is PostgreSQL compiled to WebAssembly, and under Node's defaults V8
recompiles its hot functions with TurboFan, which holds some 250 MB more for no speed we could
measure (\`--liftoff-only\` keeps them in the baseline compiler); the rest of the difference is V8's
heap sizing, as on PostgreSQL above, and the type stripper the compile cache leaves unloaded. Both
rows start PGlite with 16 MB of shared buffers instead of its default 128 MB: they live in its
WebAssembly memory, which never shrinks, and the data files are in the OS page cache anyway
(before that change and the flags, a first start peaked near 1.2 GB and idled near 590 MB). What
stays is PGlite's WebAssembly memory (the PostgreSQL server's own: catalog caches, buffers, work
memory) and its compiled code, beside Node and orderpay.
`;
}
