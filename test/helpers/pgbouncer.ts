// PgBouncer as Debian ships it (1.18), in transaction mode, in front of a PostgreSQL server: for the
// HTTP suites run through a pooler (test/pooled.ts) and the topology fault scenario. Its own
// temporary directory, a port of the caller's, every database of the server behind it; stopped and
// removed at the end. PgBouncer refuses to run as root: as root it runs as the `postgres` user.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stopChild, waitForPort } from './child-servers.ts';

export interface PgBouncerOptions {
  port: number;
  /** The PostgreSQL server behind it. */
  server: { host: string; port: number };
  /** Roles that may connect (trust authentication, as the server behind it has). */
  users: string[];
  /** Server connections per database and role. */
  poolSize?: number;
  /** The time zone of its server connections (PgBouncer sets it on each), the server's own when unset. */
  timezone?: string;
}

export interface PgBouncer {
  port: number;
  /** postgres://<user>@127.0.0.1:<port>/<database>. */
  url(user: string, database: string): string;
  /** Stops it (SIGTERM: PgBouncer's immediate shutdown, every client cut) and starts it again on the same port. */
  restart(): Promise<void>;
  /** What it logged (for failure messages). */
  log(): string;
  /** Stops it and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

export function findPgBouncer(): string {
  for (const candidate of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']) if (existsSync(candidate)) return candidate;
  throw new Error('pgbouncer is not installed (Debian: apt-get install pgbouncer; .ci/run installs it)');
}

/**
 * The settings a deployment would use (docs/deploy.md, "Connection poolers"): transaction mode,
 * only extra_float_digits ignored among the startup parameters (orderpay sends none of the others
 * PgBouncer refuses), a failed server login retried after 1 s, a client kept waiting for a server
 * connection at most 5 s (then an error orderpay answers as 503).
 */
function configuration(options: PgBouncerOptions, dir: string): string {
  return `[databases]
* = host=${options.server.host} port=${options.server.port}${options.timezone ? ` timezone=${options.timezone}` : ''}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${options.port}
unix_socket_dir =
auth_type = trust
auth_file = ${path.join(dir, 'users.txt')}
pool_mode = transaction
default_pool_size = ${options.poolSize ?? 20}
max_client_conn = 2000
ignore_startup_parameters = extra_float_digits
server_login_retry = 1
query_wait_timeout = 5
logfile = ${path.join(dir, 'pgbouncer.log')}
`;
}

function asOwner(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const binary = findPgBouncer();
  const dir = mkdtempSync(path.join(tmpdir(), 'orderpay-pgbouncer-'));
  const iniFile = path.join(dir, 'pgbouncer.ini');
  writeFileSync(iniFile, configuration(options, dir));
  writeFileSync(path.join(dir, 'users.txt'), options.users.map((user) => `"${user}" ""`).join('\n') + '\n');
  writeFileSync(path.join(dir, 'pgbouncer.log'), '');
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    for (const file of ['', 'pgbouncer.ini', 'users.txt', 'pgbouncer.log']) chownSync(path.join(dir, file), uid, gid);
  }
  let child: ChildProcess | undefined;
  const killNow = () => child?.kill('SIGKILL');
  process.once('exit', killNow);

  async function start(): Promise<void> {
    const [file, argv] = asOwner(binary, [iniFile]);
    const started = spawn(file, argv, { stdio: 'ignore' });
    child = started;
    const exited = new Promise<never>((_resolve, reject) =>
      started.once('exit', (code, signal) => reject(new Error(`pgbouncer exited (${code ?? signal}):\n${readLog()}`))),
    );
    exited.catch(() => undefined);
    await Promise.race([waitForPort(options.port, 10_000, 'pgbouncer'), exited]);
  }

  async function halt(): Promise<void> {
    const running = child;
    child = undefined;
    // runuser passes SIGTERM on to pgbouncer: its immediate shutdown.
    if (running) await stopChild(running);
  }

  const readLog = () => {
    try {
      return readFileSync(path.join(dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return '(no log)';
    }
  };

  try {
    await start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port: options.port,
    url: (user, database) => `postgres://${user}@127.0.0.1:${options.port}/${database}`,
    async restart() {
      await halt();
      await start();
    },
    log: readLog,
    async stop() {
      await halt();
      process.off('exit', killNow);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
