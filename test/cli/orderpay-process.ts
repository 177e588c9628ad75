// The orderpay command as a black box: spawn it as a real process over a fresh database (an
// embedded data directory, or a new PostgreSQL database when TEST_DATABASE_URL is set), read what
// it prints, and make sure no process outlives the test file.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Db } from '../../src/db/db.ts';
import { createEmptyServerDatabase, DB_OPTIONS, serverPooler, serverUrl } from '../helpers/db.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI_ENTRY = path.join(ROOT, 'src/cli.ts');
export const BIN_ENTRY = path.join(ROOT, 'bin/orderpay.js');
/** Fixed so that token issuers and audiences do not depend on the port a server happens to get. */
export const PUBLIC_URL = 'http://orderpay.test';

export type Env = Record<string, string>;

export interface TargetDatabase {
  kind: 'pglite' | 'postgres';
  /** Environment that points the command at this database. */
  env: Env;
  /** The embedded data directory (pglite only). */
  dataDir: string | undefined;
  drop(): Promise<void>;
}

/** The database the commands run against, as test titles name it. */
export const DATABASE_LABEL = serverUrl ? 'PostgreSQL' : 'embedded PGlite';

/** Databases created by this file, dropped by cleanUpProcessesAndDatabases. */
const created: TargetDatabase[] = [];

/** A fresh, empty (not migrated) database for one group of commands. */
export async function createTargetDatabase(): Promise<TargetDatabase> {
  const target = await createEmptyTarget();
  created.push(target);
  return target;
}

async function createEmptyTarget(): Promise<TargetDatabase> {
  if (serverUrl) {
    const empty = await createEmptyServerDatabase();
    // The embedded database seeds on an empty `serve` by default; ask PostgreSQL for the same.
    const env = { DATABASE_URL: empty.url, ORDERPAY_SEED_ON_EMPTY: 'true', ORDERPAY_DB_POOLER: serverPooler };
    return { kind: 'postgres', env, dataDir: undefined, drop: empty.drop };
  }
  const parent = await mkdtemp(path.join(tmpdir(), 'orderpay-cli-'));
  const dataDir = path.join(parent, 'data');
  return {
    kind: 'pglite',
    env: { DATA_DIR: dataDir },
    dataDir,
    drop: () => rm(parent, { recursive: true, force: true }),
  };
}

/**
 * Opens the target database in this process for the length of fn, to write or read rows around the
 * commands. The embedded one admits one process: call it only while no command runs on it.
 */
export async function withTargetDatabase<T>(target: TargetDatabase, fn: (db: Db) => Promise<T>): Promise<T> {
  // Named apart from the server's own sessions (application_name orderpay), which tests look for.
  const databaseUrl = target.env.DATABASE_URL && withApplicationName(target.env.DATABASE_URL, 'orderpay-test');
  const db = await createDatabase({ databaseUrl, dataDir: target.dataDir ?? '', db: DB_OPTIONS });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

function withApplicationName(url: string, name: string): string {
  const named = new URL(url);
  named.searchParams.set('application_name', name);
  return named.toString();
}

/** What a terminal has of its own: no DATABASE_URL, PORT or NODE_ENV leaks in from the runner. */
export function inheritedEnv(): Env {
  const env: Env = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Only what a process needs from ours, with the fixed PUBLIC_URL. */
export function commandEnv(extra: Env): Env {
  return { PUBLIC_URL, LOG_LEVEL: 'warn', ...inheritedEnv(), ...extra };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Node's flags of a command as scripts/node.sh starts it (`npm run orderpay`, `npm start`): PGlite's
 * WebAssembly stays in the baseline compiler (docs/decisions/0133-liftoff-for-every-process.md).
 */
const NODE_FLAGS = ['--liftoff-only'];

/** Processes spawned by this file that have not ended yet, with the promise of their end. */
const running = new Map<ChildProcess, Promise<Exit>>();

/**
 * Spawns `command <args>` in the repository (its stdin: `input`, else none; detached: leading a
 * process group of its own); `closed` settles once it has exited and its output streams ended.
 */
function spawnTracked(
  command: string,
  args: string[],
  env: Env,
  options: { detached?: boolean; input?: string } = {},
): { child: ChildProcess; closed: Promise<Exit> } {
  const child = spawn(command, args, {
    cwd: ROOT,
    env,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    detached: options.detached,
  });
  child.stdin?.end(options.input);
  const closed = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
    // A process that could not be spawned emits 'error' and maybe never 'close'.
    child.once('error', () => {
      running.delete(child);
      resolve({ code: null, signal: null });
    });
  });
  running.set(child, closed);
  return { child, closed };
}

/** Resolves with the exit, or kills the process and rejects once the deadline passes. */
async function exitWithin(child: ChildProcess, closed: Promise<Exit>, timeoutMs: number, what: string): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not exit within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([closed, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function collect(child: ChildProcess): { stdout(): string; stderr(): string } {
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return { stdout: () => stdout, stderr: () => stderr };
}

export interface CommandResult extends Exit {
  stdout: string;
  stderr: string;
}

/** Runs `orderpay <args>` to completion (src/cli.ts unless another entry is given), `input` on its stdin. */
export async function runOrderpay(
  args: string[],
  env: Env,
  options: { entry?: string; timeoutMs?: number; input?: string } = {},
): Promise<CommandResult> {
  const { child, closed } = spawnTracked(process.execPath, [...NODE_FLAGS, options.entry ?? CLI_ENTRY, ...args], env, {
    input: options.input,
  });
  const output = collect(child);
  const exit = await exitWithin(child, closed, options.timeoutMs ?? 60_000, `orderpay ${args.join(' ')}`);
  return { ...exit, stdout: output.stdout(), stderr: output.stderr() };
}

/** The single JSON object a `--json` command printed on stdout. */
export function parseJsonOutput(text: string): Record<string, unknown> {
  const lines = text.trim().split('\n');
  if (lines.length !== 1) throw new Error(`expected one JSON line, got:\n${text}`);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

export interface ListeningEvent {
  event: 'listening';
  url: string;
  publicUrl: string;
  database: 'pglite' | 'postgres';
  demoTokens: Record<string, string>;
}

export interface ServeProcess {
  child: ChildProcess;
  /** Settles when the process has ended. */
  closed: Promise<Exit>;
  listening: ListeningEvent;
  stdout(): string;
  stderr(): string;
  /** Sends the signal (the first call only) and waits, bounded, for the exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
  /** Waits, bounded, for an exit the process brings about itself (SIGKILLed past the deadline). */
  waitForExit(timeoutMs?: number): Promise<Exit>;
}

function findListeningEvent(stdout: string): ListeningEvent | undefined {
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const parsed = JSON.parse(line) as { event?: string };
    if (parsed.event === 'listening') return parsed as ListeningEvent;
  }
  return undefined;
}

/** Starts `orderpay serve --json` on any free port and waits for its "listening" line. */
export async function startServe(env: Env, timeoutMs = 60_000): Promise<ServeProcess> {
  const { child, closed } = spawnTracked(process.execPath, [...NODE_FLAGS, CLI_ENTRY, 'serve', '--json'], { PORT: '0', ...env });
  const output = collect(child);
  const deadline = Date.now() + timeoutMs;
  let listening = findListeningEvent(output.stdout());
  while (!listening) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`serve exited (${child.exitCode ?? child.signalCode}) before listening:\n${output.stderr()}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve did not listen within ${timeoutMs} ms:\n${output.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    listening = findListeningEvent(output.stdout());
  }
  let stopping: Promise<Exit> | undefined;
  return {
    child,
    closed,
    listening,
    stdout: output.stdout,
    stderr: output.stderr,
    // Signals once: the server ignores a repeated signal, so a second would test nothing more.
    stop: (signal = 'SIGTERM', stopTimeoutMs = 10_000) =>
      (stopping ??= (() => {
        child.kill(signal);
        return exitWithin(child, closed, stopTimeoutMs, `serve after ${signal}`);
      })()),
    waitForExit: (exitTimeoutMs = 10_000) => exitWithin(child, closed, exitTimeoutMs, 'serve'),
  };
}

export interface StartedProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Waits, bounded, for the exit (SIGKILLed past the deadline). */
  waitForExit(timeoutMs?: number): Promise<Exit>;
}

/** Starts any command (npm, a launcher) as the tests' processes are started, tracked for clean-up. */
export function startProcess(command: string, args: string[], env: Env, options: { detached?: boolean } = {}): StartedProcess {
  const { child, closed } = spawnTracked(command, args, env, options);
  const output = collect(child);
  return {
    child,
    stdout: output.stdout,
    stderr: output.stderr,
    waitForExit: (timeoutMs = 10_000) => exitWithin(child, closed, timeoutMs, `${command} ${args.join(' ')}`),
  };
}

/** Kills whatever this file spawned and did not end: for after(), so a failure leaves nothing running. */
export async function killRemaining(): Promise<void> {
  await Promise.all(
    [...running].map(([child, closed]) => {
      child.kill('SIGKILL');
      return closed;
    }),
  );
}

/** killRemaining, then drops every database createTargetDatabase made for this file: for after(). */
export async function cleanUpProcessesAndDatabases(): Promise<void> {
  await killRemaining();
  await Promise.all(created.splice(0).map((target) => target.drop()));
}
