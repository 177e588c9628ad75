// The servers under test as child processes: started on a free loopback port, awaited until they
// say they listen, and always stopped (SIGTERM, then SIGKILL) — also when the benchmark fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';

export interface ServerProcess {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** A server under test as a scenario's column loads it. */
export interface Target {
  server: ServerProcess;
  /** Headers every request to it carries (orderpay's bearer token). */
  headers: Record<string, string>;
  /** A path prefix its requests carry (the API version of (av) and (bv), the event variant of (dw) and (dx)). */
  prefix?: string;
  /** Whether a payment made through it writes its payment.succeeded event (orderpay always does). */
  writesEvents: boolean;
}

/**
 * A column of a scenario that does not compare orderpay with the baseline (or both columns of
 * (f) and (fr)): which of the two servers, under which path prefix, and whether the baseline
 * writes events there.
 */
export interface Side {
  server: 'orderpay' | 'baseline';
  prefix: string;
  writesEvents?: true;
}

const running = new Set<ChildProcess>();
// Last resort: a crash of the benchmark must not leave servers behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * The Node flags npm start runs orderpay with (docs/deploy.md, the Node flags and the variables), read from package.json's
 * start script so that the bench can never measure other ones.
 */
export const ORDERPAY_NODE_FLAGS: readonly string[] = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .split(/\s+/)
  .filter((word) => word.startsWith('--'));

/**
 * `orderpay serve` as npm start runs it: through scripts/node.sh (its environment, jemalloc where the
 * system has it) with its Node flags: what (h) measures.
 */
export const ORDERPAY_SERVE_COMMAND: readonly string[] = [
  'sh',
  fileURLToPath(new URL('../scripts/node.sh', import.meta.url)),
  ...ORDERPAY_NODE_FLAGS,
  fileURLToPath(new URL('../src/cli.ts', import.meta.url)),
  'serve',
  '--json',
];

/** `node <args>`, run by the Node running the bench: the baseline's command. */
export function nodeCommand(...args: string[]): readonly string[] {
  return [process.execPath, ...args];
}

export type Allocator = 'jemalloc' | 'glibc';

/** Which malloc a process allocates with: jemalloc when it is mapped into it, else the C library's; undefined once it is gone. */
export function allocatorOf(pid: number): Allocator | undefined {
  try {
    return readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libjemalloc') ? 'jemalloc' : 'glibc';
  } catch {
    return undefined;
  }
}

export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Spawns command (executable first) and resolves once a stdout line matches ready (its first group is the URL). */
export function startServerProcess(
  name: string,
  command: readonly string[],
  /** Added to this process's environment; a variable set to undefined is left out. */
  env: Record<string, string | undefined>,
  ready: RegExp,
  { timeoutMs = 60_000, onSpawn }: { timeoutMs?: number; onSpawn?: (pid: number) => void } = {},
): Promise<ServerProcess> {
  const merged = Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, value]) => value !== undefined));
  const [executable = process.execPath, ...args] = command;
  const child = spawn(executable, args, { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid !== undefined) onSpawn?.(child.pid);
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));
  let output = '';

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killLater = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killLater);
  };

  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      void stop().then(() => reject(new Error(`${name} did not start: ${reason}\n${output.slice(-4000)}`)));
    };
    const timer = setTimeout(() => fail(`no "listening" line within ${timeoutMs} ms`), timeoutMs);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
      const url = ready.exec(output)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ name, url, pid: child.pid!, stop });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(`exited (${signal ?? code})`);
    });
  });
}
