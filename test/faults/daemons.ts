// The topology scenario's other servers, from Debian's packages: a Redis of its own and HAProxy
// balancing the orderpay processes with health checks on /readyz. Each runs in the foreground as
// a child of the test, in a temporary directory, and is killed at the end (or at exit).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stopChild, waitForPort } from '../helpers/child-servers.ts';

export interface Daemon {
  url: string;
  /** Stops it (SIGTERM, then SIGKILL) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

function findBinary(name: string, packageName: string): string {
  for (const dir of ['/usr/sbin', '/usr/bin']) if (existsSync(path.join(dir, name))) return path.join(dir, name);
  throw new Error(`${name} is not installed (Debian: apt-get install ${packageName}; .ci/run installs it)`);
}

async function runDaemon(name: string, command: string, args: string[], port: number, dir: string, url: string): Promise<Daemon> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4000);
  });
  const killNow = () => child.kill('SIGKILL');
  process.once('exit', killNow);
  const stop = async () => {
    process.off('exit', killNow);
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, 10_000, name, () => child.exitCode !== null || child.signalCode !== null);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}: ${errors}`);
  }
  return { url, stop };
}

export function startRedis(port: number): Promise<Daemon> {
  const dir = mkdtempSync(path.join(tmpdir(), 'orderpay-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  return runDaemon('redis-server', findBinary('redis-server', 'redis-server'), args, port, dir, `redis://127.0.0.1:${port}`);
}

/**
 * What the balancer answers when no process can (all down, or one that died mid-request): the
 * same 503 problem with Retry-After that orderpay sends, so a client sees one contract
 * (docs/deploy.md, "Load balancer").
 */
function unavailableAnswer(): string {
  const body = JSON.stringify({
    type: 'about:blank',
    title: 'Service unavailable',
    status: 503,
    detail: 'No orderpay process could answer; retry shortly.',
    code: 'SERVICE_UNAVAILABLE',
  });
  return [
    'HTTP/1.1 503 Service Unavailable',
    'content-type: application/problem+json; charset=utf-8',
    'retry-after: 1',
    'cache-control: no-store',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * HAProxy in front of the orderpay processes on ports: round robin, a health check on /readyz
 * every 200 ms (two failures take a process out, one success puts it back), a request that could
 * not reach a process sent to another (never one that reached it: a POST is not repeated), and
 * its own 502/503/504 answered as orderpay's 503 problem; its stats on statsPort.
 */
export interface Balancer extends Daemon {
  /** Whether the balancer sends requests to the process on ports[index] (its health check passed), from its stats. */
  isUp(index: number): Promise<boolean>;
}

export async function startHaproxy(port: number, statsPort: number, ports: number[]): Promise<Balancer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'orderpay-haproxy-'));
  const answerFile = path.join(dir, 'unavailable.http');
  writeFileSync(answerFile, unavailableAnswer());
  const servers = ports.map((p, i) => `  server orderpay${i + 1} 127.0.0.1:${p} check inter 200 fall 2 rise 1`).join('\n');
  writeFileSync(
    path.join(dir, 'haproxy.cfg'),
    `global
  maxconn 2000

defaults
  mode http
  timeout connect 1s
  timeout client 30s
  timeout server 30s
  retries 3
  option redispatch 1
  retry-on conn-failure
  errorfile 502 ${answerFile}
  errorfile 503 ${answerFile}
  errorfile 504 ${answerFile}

frontend api
  bind 127.0.0.1:${port}
  default_backend orderpay

frontend stats
  bind 127.0.0.1:${statsPort}
  stats enable
  stats uri /stats

backend orderpay
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
${servers}
`,
  );
  const daemon = await runDaemon(
    'haproxy',
    findBinary('haproxy', 'haproxy'),
    ['-db', '-f', path.join(dir, 'haproxy.cfg')],
    port,
    dir,
    `http://127.0.0.1:${port}`,
  );
  return {
    ...daemon,
    async isUp(index) {
      // The stats page as CSV: a header line "# pxname,svname,…,status,…", then a line per proxy and server.
      const [header, ...rows] = (await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text()).trim().split('\n');
      const columns = header!.replace(/^# /, '').split(',');
      const status = columns.indexOf('status');
      const row = rows.map((line) => line.split(',')).find((cells) => cells[0] === 'orderpay' && cells[1] === `orderpay${index + 1}`);
      return row?.[status] === 'UP';
    },
  };
}
