// A PostgreSQL cluster of the fault suite's own (initdb + pg_ctl from the machine's PostgreSQL),
// so restarts and connection limits touch nothing else on the machine. initdb refuses to run as
// root: as root (CI), the binaries run as the `postgres` user through runuser, over a temporary
// directory that user owns. The cluster is stopped and its directory removed at the end, also
// when the test fails or the process exits early.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  openSync,
  closeSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

/** The port of the suite's cluster (its own, beside the machine's PostgreSQL on 5432). */
export const CLUSTER_PORT = Number(process.env.ORDERPAY_FAULTS_PG_PORT || 25439);

const DIR_PREFIX = 'orderpay-faults-pg-';

export type ShutdownMode = 'fast' | 'immediate';

export interface PostgresCluster {
  port: number;
  /** postgres://postgres@… (the superuser) to the named database. */
  adminUrl(database?: string): string;
  /** postgres://<user>@… to the named database. */
  url(user: string, database: string): string;
  /** pg_ctl restart -m <mode>: returns once the server accepts connections again. */
  restart(mode: ShutdownMode): Promise<void>;
  /** pg_ctl stop -m <mode>: returns once the server has stopped. */
  stop(mode: ShutdownMode): Promise<void>;
  /** pg_ctl start: returns once the server accepts connections. */
  start(): Promise<void>;
  /** The server's log so far (for failure messages). */
  log(): string;
  /** Stops the server (immediate: nothing in it is kept) and removes its directory, synchronously. Idempotent. */
  destroy(): void;
}

/** The bin directory of the newest PostgreSQL under /usr/lib/postgresql, or ORDERPAY_FAULTS_PG_BIN. */
export function findPostgresBin(): string {
  const chosen = process.env.ORDERPAY_FAULTS_PG_BIN;
  if (chosen) return chosen;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+(\.\d+)?$/.test(name) && existsSync(path.join(root, name, 'bin/initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(`no PostgreSQL server binaries under ${root}/<version>/bin (install postgresql, or set ORDERPAY_FAULTS_PG_BIN)`);
  }
  return path.join(root, versions[0]!, 'bin');
}

/** As root, the command runs as the postgres user (initdb and postgres refuse root). */
function asClusterOwner(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

/** Runs a pg_ctl-like command with its output (and that of a postmaster it starts) appended to the log. */
function runLogged(command: string, args: string[], logFile: string, timeoutMs = 60_000): Promise<void> {
  const [file, argv] = asClusterOwner(command, args);
  const fd = openSync(logFile, 'a');
  return new Promise<void>((resolve, reject) => {
    const child = spawn(file, argv, { stdio: ['ignore', fd, fd] });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(command)} ${args.join(' ')} ended with ${code ?? signal}; log:\n${tail(logFile)}`));
    });
  }).finally(() => closeSync(fd));
}

function tail(logFile: string, lines = 40): string {
  try {
    return readFileSync(logFile, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Stops a postmaster left by an earlier run that was killed before its cleanup, if it holds our port. */
function removeStaleClusters(bin: string, port: number): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = path.join(tmpdir(), name);
    const pidFile = path.join(dir, 'data/postmaster.pid');
    // postmaster.pid: line 4 is the port.
    const stalePort = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[3]) : undefined;
    // Without a postmaster: a directory an interrupted run left, unless another run is creating it now.
    const abandoned = stalePort === undefined && Date.now() - statSync(dir).mtimeMs > 3_600_000;
    if (stalePort !== port && !abandoned) continue;
    if (stalePort === port) {
      const [file, argv] = asClusterOwner(path.join(bin, 'pg_ctl'), ['stop', '-D', path.join(dir, 'data'), '-m', 'immediate', '-w']);
      spawnSync(file, argv, { stdio: 'ignore', timeout: 30_000 });
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ClusterDir {
  bin: string;
  dir: string;
  dataDir: string;
  logFile: string;
}

/** A temporary directory for one server, owned by the user that runs it. */
function makeClusterDir(bin: string): ClusterDir {
  const dir = mkdtempSync(path.join(tmpdir(), DIR_PREFIX));
  const logFile = path.join(dir, 'postgres.log');
  writeFileSync(logFile, '');
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    chownSync(logFile, uid, gid);
  }
  return { bin, dir, dataDir: path.join(dir, 'data'), logFile };
}

/** Settings appended to postgresql.conf, so a restart keeps them. */
function writeSettings(cluster: ClusterDir, port: number, settings: Record<string, string | number>): void {
  const conf = {
    port,
    listen_addresses: "'127.0.0.1'",
    unix_socket_directories: `'${cluster.dir}'`,
    shared_buffers: "'32MB'",
    max_connections: 100,
    ...settings,
  };
  const lines = Object.entries(conf).map(([name, value]) => `${name} = ${value}`);
  writeFileSync(path.join(cluster.dataDir, 'postgresql.conf'), `\n# orderpay fault suite\n${lines.join('\n')}\n`, { flag: 'a' });
}

/**
 * Creates the server's data directory with create(), configures and starts it on port; the
 * handle stops it and removes the directory at the end, also when the process exits early.
 */
async function startServer(
  bin: string,
  port: number,
  settings: Record<string, string | number>,
  create: (cluster: ClusterDir) => Promise<void>,
): Promise<PostgresCluster> {
  removeStaleClusters(bin, port);
  const cluster = makeClusterDir(bin);
  const { dir, dataDir, logFile } = cluster;
  const pgCtl = path.join(bin, 'pg_ctl');
  let destroyed = false;
  const destroySync = () => {
    if (destroyed) return;
    destroyed = true;
    if (existsSync(path.join(dataDir, 'postmaster.pid'))) {
      const [file, argv] = asClusterOwner(pgCtl, ['stop', '-D', dataDir, '-m', 'immediate', '-w']);
      spawnSync(file, argv, { stdio: 'ignore', timeout: 30_000 });
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // After hooks run on failure too; this covers an exit that skips them.
  process.once('exit', destroySync);
  const start = () => runLogged(pgCtl, ['start', '-D', dataDir, '-w', '-t', '60'], logFile);
  try {
    await create(cluster);
    writeSettings(cluster, port, settings);
    await start();
  } catch (error) {
    destroySync();
    throw error;
  }
  const url = (user: string, database: string) => `postgres://${user}@127.0.0.1:${port}/${database}`;
  return {
    port,
    adminUrl: (database = 'postgres') => url('postgres', database),
    url,
    restart: (mode) => runLogged(pgCtl, ['restart', '-D', dataDir, '-m', mode, '-w', '-t', '60'], logFile),
    stop: (mode) => runLogged(pgCtl, ['stop', '-D', dataDir, '-m', mode, '-w', '-t', '60'], logFile),
    start,
    log: () => readFileSync(logFile, 'utf8'),
    destroy() {
      process.off('exit', destroySync);
      destroySync();
    },
  };
}

/**
 * initdb (trust authentication, the given server settings) and start on CLUSTER_PORT (or port),
 * listening on 127.0.0.1 only. initdb's pg_hba.conf lets local replication connections in, so
 * the cluster can have a standby (startStandby).
 */
export function startCluster(settings: Record<string, string | number> = {}, port = CLUSTER_PORT): Promise<PostgresCluster> {
  const bin = findPostgresBin();
  return startServer(bin, port, settings, (cluster) =>
    runLogged(
      path.join(bin, 'initdb'),
      ['-D', cluster.dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'],
      cluster.logFile,
    ),
  );
}

/**
 * A streaming replica of primary on port: pg_basebackup of the running primary (-R writes
 * standby.signal and primary_conninfo), then started as a hot standby.
 */
export function startStandby(
  primary: PostgresCluster,
  port: number,
  settings: Record<string, string | number> = {},
): Promise<PostgresCluster> {
  const bin = findPostgresBin();
  return startServer(bin, port, { hot_standby: 'on', ...settings }, (cluster) =>
    runLogged(
      path.join(bin, 'pg_basebackup'),
      ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', cluster.dataDir, '-R', '-X', 'stream', '--no-sync'],
      cluster.logFile,
      120_000,
    ),
  );
}

/** Runs statements on the cluster as the superuser, one connection for the lot. */
export async function adminQuery(cluster: PostgresCluster, sql: string[], database = 'postgres'): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.adminUrl(database) });
  await client.connect();
  try {
    for (const statement of sql) await client.query(statement);
  } finally {
    await client.end();
  }
}
