// Load generation against a server on loopback: wrk (Debian's package) with a Lua script that picks
// a random path per request, or posts one body under a fresh or a fixed Idempotency-Key. One
// bounded run each.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** What each request of a run is. */
export type RequestMix =
  /** GET of one of the paths, drawn at random per request. */
  | { method: 'GET'; paths: string[] }
  /**
   * POST of a JSON body: 'unique' gives every request an Idempotency-Key no request has used
   * (a random prefix per run, then the thread and a counter); { fixed } sends the same key each time.
   */
  | { method: 'POST'; path: string; body: string; idempotencyKey: 'unique' | { fixed: string } };

/** The same requests under a path prefix (an API version, a variant of the baseline's). */
export function withPrefix(requests: RequestMix, prefix: string | undefined): RequestMix {
  if (!prefix) return requests;
  return requests.method === 'GET'
    ? { ...requests, paths: requests.paths.map((path) => prefix + path) }
    : { ...requests, path: prefix + requests.path };
}

export interface LoadRun {
  /** Base URL on 127.0.0.1. */
  url: string;
  requests: RequestMix;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses with status ≥ 400 plus socket errors and timeouts: must be 0 for a valid run. */
  errors: number;
}

export interface LoadGenerator {
  name: string;
  run(load: LoadRun): Promise<LoadResult>;
}

function hasWrk(): boolean {
  return spawnSync('wrk', ['--version']).error === undefined;
}

/** Installs Debian's wrk when missing and we are root (apt-get needs it); false when it cannot. */
function installWrk(log: (line: string) => void): boolean {
  if (process.getuid?.() !== 0 || spawnSync('apt-get', ['--version']).error) return false;
  log('wrk is missing: apt-get install -y wrk');
  const install = () => spawnSync('apt-get', ['install', '-y', '-qq', 'wrk'], { stdio: ['ignore', 'ignore', 'inherit'] }).status === 0;
  if (install()) return true;
  spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] });
  return install();
}

const luaString = (s: string) => JSON.stringify(s); // ASCII paths and bodies: JSON string syntax is valid Lua

const REPORT = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCH_RESULT {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
`;

function getScript(paths: string[]): string {
  return `local paths = {\n${paths.map((p) => `  ${luaString(p)},`).join('\n')}\n}
init = function(args) math.randomseed(os.time()) end
request = function() return wrk.format("GET", paths[math.random(#paths)]) end
`;
}

// wrk.format uses wrk.headers (the -H headers) when given no headers of its own, so the key is set there.
function postScript(path: string, body: string, idempotencyKey: 'unique' | { fixed: string }): string {
  const key =
    idempotencyKey === 'unique'
      ? `${luaString(`bench-${randomUUID()}-`)} .. thread_number .. "-" .. sent`
      : luaString(idempotencyKey.fixed);
  return `local path, body = ${luaString(path)}, ${luaString(body)}
local sent = 0
local threads = 0
setup = function(thread) threads = threads + 1; thread:set("thread_number", threads) end
init = function(args) wrk.headers["Content-Type"] = "application/json" end
request = function()
  sent = sent + 1
  wrk.headers["Idempotency-Key"] = ${key}
  return wrk.format("POST", path, nil, body)
end
`;
}

function wrkScript(requests: RequestMix): string {
  const script = requests.method === 'GET' ? getScript(requests.paths) : postScript(requests.path, requests.body, requests.idempotencyKey);
  return script + REPORT;
}

const wrk: LoadGenerator = {
  name: 'wrk',
  async run(load) {
    const dir = mkdtempSync(path.join(tmpdir(), 'orderpay-bench-'));
    try {
      const script = path.join(dir, 'paths.lua');
      writeFileSync(script, wrkScript(load.requests));
      const headerArgs = Object.entries(load.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
      // One wrk thread: the machine's cores are better spent on the server under test.
      const args = ['-t1', `-c${load.connections}`, `-d${load.seconds}s`, '--timeout', '5s', '-s', script, ...headerArgs, load.url];
      const output = await runToCompletion('wrk', args, (load.seconds + 30) * 1000);
      const line = /BENCH_RESULT (\{.*\})/.exec(output)?.[1];
      if (!line) throw new Error(`wrk printed no result:\n${output}`);
      const r = JSON.parse(line) as { requests: number; durationUs: number; p50Us: number; p99Us: number; errors: number };
      return {
        requests: r.requests,
        requestsPerSecond: r.requests / (r.durationUs / 1e6),
        p50Ms: r.p50Us / 1000,
        p99Ms: r.p99Us / 1000,
        errors: r.errors,
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** Runs a command to its end (killed after timeoutMs) and returns its stdout. */
function runToCompletion(command: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    // An interrupted benchmark takes its load generator down with it.
    const killChild = () => child.kill('SIGKILL');
    process.once('exit', killChild);
    child.once('close', () => process.off('exit', killChild));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${command} exited with ${code}: ${stderr || stdout}`))));
  });
}

/** wrk when present (installing Debian's package as root if needed), else an explanation. */
export async function chooseLoadGenerator(log: (line: string) => void): Promise<LoadGenerator> {
  if (hasWrk() || (installWrk(log) && hasWrk())) return wrk;
  throw new Error('no load generator: install wrk (apt-get install wrk)');
}
