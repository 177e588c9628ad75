// Load generation against a server on loopback: wrk (Debian's package) with a Lua script that picks
// a random path per request (with that path's own headers, if any, and counting the responses whose
// status is not the expected one, if asked), or posts one body under a fresh or a fixed
// Idempotency-Key. One bounded run each.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** What each request of a run is. */
export type RequestMix =
  /**
   * GET of one of the paths, drawn at random per request. headersByPath[i], when given, is sent
   * with paths[i] on top of the run's headers ((f)'s If-None-Match). With expectStatus, every
   * response of another status is counted in LoadResult.unexpected.
   */
  | { method: 'GET'; paths: string[]; headersByPath?: readonly Readonly<Record<string, string>>[]; expectStatus?: number }
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
  /** A response slower than this counts as an error (wrk's --timeout); 5 s by default. */
  timeoutSeconds?: number;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses with status ≥ 400 plus socket errors and timeouts: must be 0 for a valid run. */
  errors: number;
  /** Responses whose status was not the request mix's expectStatus (0 when it names none). */
  unexpected: number;
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

/**
 * done() prints the figures as one JSON line; with counting, also the responses of another status
 * than the expected one, summed over wrk's threads (each runs the script in a Lua state of its own).
 */
function reportScript(counting: boolean): string {
  const sum = counting ? '\n  for _, t in ipairs(threads) do unexpected = unexpected + t:get("unexpected") end' : '';
  return `done = function(summary, latency, requests)
  local e = summary.errors
  local unexpected = 0${sum}
  io.write(string.format('BENCH_RESULT {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"errors":%d,"unexpected":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout, unexpected))
end
`;
}

const luaTable = (entries: Readonly<Record<string, string>>) =>
  `{ ${Object.entries(entries)
    .map(([k, v]) => `[${luaString(k)}] = ${luaString(v)}`)
    .join(', ')} }`;

/**
 * Every request is formatted once, in init (after wrk has put the -H headers and Host into
 * wrk.headers), so a request costs wrk one random draw whatever headers it carries.
 */
function getScript(requests: RequestMix & { method: 'GET' }): string {
  const { paths, headersByPath, expectStatus } = requests;
  if (headersByPath && headersByPath.length !== paths.length) throw new Error('headersByPath must give one entry per path');
  const extra = headersByPath ? `local extra = {\n${headersByPath.map((h) => `  ${luaTable(h)},`).join('\n')}\n}\n` : 'local extra = {}\n';
  const counting =
    expectStatus === undefined
      ? ''
      : `threads = {}
setup = function(thread) table.insert(threads, thread) end
unexpected = 0
response = function(status, headers, body) if status ~= ${expectStatus} then unexpected = unexpected + 1 end end
`;
  return `local paths = {\n${paths.map((p) => `  ${luaString(p)},`).join('\n')}\n}
${extra}local formatted = {}
init = function(args)
  math.randomseed(os.time())
  for i, path in ipairs(paths) do
    local headers = {}
    for k, v in pairs(wrk.headers) do headers[k] = v end
    for k, v in pairs(extra[i] or {}) do headers[k] = v end
    formatted[i] = wrk.format("GET", path, headers)
  end
end
request = function() return formatted[math.random(#formatted)] end
${counting}`;
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
  if (requests.method === 'POST') return postScript(requests.path, requests.body, requests.idempotencyKey) + reportScript(false);
  return getScript(requests) + reportScript(requests.expectStatus !== undefined);
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
      const timeout = load.timeoutSeconds ?? 5;
      const args = [
        '-t1',
        `-c${load.connections}`,
        `-d${load.seconds}s`,
        '--timeout',
        `${timeout}s`,
        '-s',
        script,
        ...headerArgs,
        load.url,
      ];
      const output = await runToCompletion('wrk', args, (load.seconds + timeout + 30) * 1000);
      const line = /BENCH_RESULT (\{.*\})/.exec(output)?.[1];
      if (!line) throw new Error(`wrk printed no result:\n${output}`);
      const r = JSON.parse(line) as {
        requests: number;
        durationUs: number;
        p50Us: number;
        p99Us: number;
        errors: number;
        unexpected: number;
      };
      return {
        requests: r.requests,
        requestsPerSecond: r.requests / (r.durationUs / 1e6),
        p50Ms: r.p50Us / 1000,
        p99Ms: r.p99Us / 1000,
        errors: r.errors,
        unexpected: r.unexpected,
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
    child.on('close', (code, signal) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${command} exited with ${code ?? signal}: ${stderr || stdout}`)),
    );
  });
}

/** wrk when present (installing Debian's package as root if needed), else an explanation. */
export async function chooseLoadGenerator(log: (line: string) => void): Promise<LoadGenerator> {
  if (hasWrk() || (installWrk(log) && hasWrk())) return wrk;
  throw new Error('no load generator: install wrk (apt-get install wrk)');
}
