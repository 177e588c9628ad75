// SIGTERM and SIGINT reach the server whichever way it was started (docs/deploy.md, "Signals"):
// `npm start` (real npm: it forwards the signal to its script), `npm run orderpay -- serve`,
// bin/orderpay.js and `node src/cli.ts`, signalled alone as a supervisor signals its main process,
// or as a whole process group as a terminal's Ctrl-C or systemd's default KillMode do. Each time
// the server shuts down cleanly: the launcher exits 0, no process of the tree is left, the port
// refuses connections and the embedded database's lock is gone.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { commandLine, isRunning, processTree } from '../helpers/process-tree.ts';
import {
  BIN_ENTRY,
  cleanUpProcessesAndDatabases,
  CLI_ENTRY,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  startProcess,
  withTargetDatabase,
  type StartedProcess,
  type TargetDatabase,
} from './orderpay-process.ts';

const PORTS = { npmStart: 29270, npmRunOrderpay: 29271, bin: 29272, cli: 29273, startUp: 29274 };
const LISTENING = 'orderpay listening on http://127.0.0.1:';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Every process a test started, so that none survives it, whatever it asserted. */
const started = new Set<number>();
afterEach(async () => {
  const left = [...started].filter(isRunning);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  started.clear();
  await until('the killed processes to end', () => !left.some(isRunning), 10_000);
});
after(cleanUpProcessesAndDatabases);

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

interface Launch {
  title: string;
  command: string;
  args: string[];
  port: number;
}

const LAUNCHES = {
  npmStart: { title: '`npm start`', command: 'npm', args: ['start'], port: PORTS.npmStart },
  npmRunOrderpay: {
    title: '`npm run orderpay -- serve`',
    command: 'npm',
    args: ['run', 'orderpay', '--', 'serve'],
    port: PORTS.npmRunOrderpay,
  },
  bin: { title: '`bin/orderpay.js serve`', command: process.execPath, args: [BIN_ENTRY, 'serve'], port: PORTS.bin },
  cli: { title: '`node src/cli.ts serve`', command: process.execPath, args: [CLI_ENTRY, 'serve'], port: PORTS.cli },
} satisfies Record<string, Launch>;

function launch(target: TargetDatabase, how: Launch): StartedProcess {
  const env = commandEnv({ ...target.env, PORT: String(how.port), LOG_LEVEL: 'info', NPM_CONFIG_UPDATE_NOTIFIER: 'false' });
  // Detached: the launcher leads a process group of its own, as under a supervisor or a terminal.
  const launched = startProcess(how.command, how.args, env, { detached: true });
  started.add(launched.child.pid!);
  return launched;
}

/** The node process running src/cli.ts, among the launcher and its descendants. */
function serverOf(tree: number[]): number | undefined {
  return tree.find((pid) => commandLine(pid).includes('src/cli.ts') || commandLine(pid).includes('bin/orderpay.js'));
}

/** Sends the signal to the launcher alone, or to its whole process group; then checks the clean end. */
async function signalAndCheckCleanExit(
  launched: StartedProcess,
  target: TargetDatabase,
  port: number,
  signal: NodeJS.Signals,
  to: 'launcher' | 'group',
): Promise<void> {
  const launcher = launched.child.pid!;
  const tree = processTree(launcher);
  for (const pid of tree) started.add(pid);
  assert.ok(serverOf(tree), `the server runs under the launcher: ${tree.map(commandLine).join(' | ')}`);

  process.kill(to === 'group' ? -launcher : launcher, signal);
  assert.deepEqual(await launched.waitForExit(20_000), { code: 0, signal: null }, launched.stderr());
  await until('every process of the tree to exit', () => tree.every((pid) => !isRunning(pid)), 10_000).catch(() => {
    const left = tree.filter(isRunning).map((pid) => `${pid}: ${commandLine(pid)}`);
    assert.fail(`still running after ${signal} to the ${to}: ${left.join('; ')}`);
  });
  assert.equal(await acceptsConnections(port), false, 'the port is free');
  if (target.dataDir) assert.equal(existsSync(`${target.dataDir}.lock`), false, "the data directory's lock is released");
  const shutdowns = launched.stdout().match(/"msg":"shutting down"/g) ?? [];
  assert.equal(shutdowns.length, 1, `the server shut down gracefully, once:\n${launched.stdout()}`);
}

async function listening(launched: StartedProcess, port: number): Promise<void> {
  await until(`"${LISTENING}${port}"`, () => {
    if (launched.child.exitCode !== null || launched.child.signalCode !== null) {
      throw new Error(`exited before listening:\n${launched.stdout()}\n${launched.stderr()}`);
    }
    return launched.stdout().includes(`${LISTENING}${port}`);
  });
}

describe(`signals reach the server however it was started (${DATABASE_LABEL})`, () => {
  const cases: { how: Launch; signal: NodeJS.Signals; to: 'launcher' | 'group' }[] = [
    { how: LAUNCHES.npmStart, signal: 'SIGTERM', to: 'launcher' },
    { how: LAUNCHES.npmStart, signal: 'SIGINT', to: 'launcher' },
    { how: LAUNCHES.npmStart, signal: 'SIGTERM', to: 'group' },
    { how: LAUNCHES.npmStart, signal: 'SIGINT', to: 'group' },
    { how: LAUNCHES.npmRunOrderpay, signal: 'SIGTERM', to: 'launcher' },
    { how: LAUNCHES.bin, signal: 'SIGTERM', to: 'launcher' },
    { how: LAUNCHES.bin, signal: 'SIGINT', to: 'group' },
    { how: LAUNCHES.cli, signal: 'SIGINT', to: 'launcher' },
    { how: LAUNCHES.cli, signal: 'SIGTERM', to: 'group' },
  ];
  // One database for these: after the first start, each start is quick (migrated and seeded).
  let shared: TargetDatabase;
  before(async () => {
    shared = await createTargetDatabase();
  });
  for (const { how, signal, to } of cases) {
    test(`${how.title}: ${signal} to the ${to === 'group' ? 'process group' : 'launcher alone'} stops the server cleanly`, async () => {
      const launched = launch(shared, how);
      await listening(launched, how.port);
      await signalAndCheckCleanExit(launched, shared, how.port, signal, to);
    });
  }

  test('`npm start`: SIGTERM while the server is still starting stops it once it is up, not halfway', async () => {
    // A new database: the server has migrations and seeding ahead of it when the signal comes.
    const target = await createTargetDatabase();
    const launched = launch(target, { ...LAUNCHES.npmStart, port: PORTS.startUp });
    // The server has begun opening its database (so it listens for signals): the embedded one is
    // locked, or PostgreSQL has a session from it (by its application_name: an autovacuum worker
    // on the new database is a session too). Migrations and seeding are still to come.
    await until('the server to open its database', async () => {
      if (target.dataDir) return existsSync(`${target.dataDir}.lock`);
      return withTargetDatabase(target, async (db) => {
        const { rows } = await db.query<{ sessions: number }>(
          `SELECT count(*)::int AS sessions FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'orderpay'`,
        );
        return rows[0]!.sessions > 0;
      });
    });
    await signalAndCheckCleanExit(launched, target, PORTS.startUp, 'SIGTERM', 'launcher');
  });
});
