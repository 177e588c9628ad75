// Load generation against a server on loopback: wrk (Debian's package) with a Lua script that picks
// a random path per request (with that path's own headers, if any, and counting the responses whose
// status is not the expected one, if asked), sends requests read from files, each with a DPoP proof
// of its own, or posts one body under a fresh or a fixed Idempotency-Key. One bounded run each.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** What each request of a run is. */
export type RequestMix =
  | PathRequests
  | ProofRequests
  /**
   * POST of a JSON body: 'unique' gives every request an Idempotency-Key no request has used
   * (a random prefix per run, then the thread and a counter); { fixed } sends the same key each time.
   */
  | { method: 'POST'; path: string; body: string; idempotencyKey: 'unique' | { fixed: string } };

/**
 * GET of one of the paths, drawn at random per request. headersByPath[i], when given, is sent with
 * paths[i] on top of the run's headers ((f)'s If-None-Match). With expectStatus, every response of
 * another status is counted in LoadResult.unexpected.
 */
export interface PathRequests {
  method: 'GET';
  paths: string[];
  headersByPath?: readonly Readonly<Record<string, string>>[];
  expectStatus?: number;
}

/**
 * GET of the paths in proofFiles, one file per wrk thread, each line `<path> <DPoP proof>` (RFC
 * 9449): a thread sends its lines in order, each once, and stops when its file is done, so that no
 * proof is ever replayed. Every response of another status than expectStatus is counted.
 */
export interface ProofRequests {
  method: 'GET';
  /** One per wrk thread (WRK_THREADS). */
  proofFiles: readonly string[];
  expectStatus: number;
}

/**
 * Requests made anew for each run, just before it, when no two runs may send the same (DPoP
 * proofs): sized by the run's seconds and its column's fastest run so far; made says in words what
 * was made and how long it took (outside the measured time); discard once the run is over.
 */
export type RequestsPerRun = (run: {
  seconds: number;
  fastestRate: number | undefined;
}) => Promise<{ requests: RequestMix; made: string; discard(): void }>;

export const isProofRequests = (requests: RequestMix): requests is ProofRequests => 'proofFiles' in requests;

/** One wrk thread: the machine's cores are better spent on the server under test. */
export const WRK_THREADS = 1;

/** The same requests under a path prefix (an API version, a variant of the baseline's). */
export function withPrefix(requests: RequestMix, prefix: string | undefined): RequestMix {
  if (!prefix) return requests;
  if (isProofRequests(requests)) throw new Error("requests with DPoP proofs carry their paths in their proofs' files");
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
  /**
   * Set when a thread's DPoP proofs ran out before the run's time: requests/s is then over the time
   * the load lasted (the longest of the threads'), not the run's seconds.
   */
  proofsRanOut?: true;
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
 * than the expected one, summed over wrk's threads (each runs the script in a Lua state of its own);
 * with stopping (a script whose threads may stop early and record when), the time the load lasted:
 * wrk itself waits out -d whatever its threads do.
 */
function reportScript(counting: boolean, stopping = false): string {
  const sum = counting ? '\n  for _, t in ipairs(threads) do unexpected = unexpected + t:get("unexpected") end' : '';
  const lasted = stopping
    ? `
  duration = 0
  for _, t in ipairs(threads) do
    local stopped = t:get("stopped_us")
    if stopped > 0 then ranOut = ranOut + 1 end
    duration = math.max(duration, stopped > 0 and stopped - t:get("started_us") or summary.duration)
  end`
    : '';
  return `done = function(summary, latency, requests)
  local e = summary.errors
  local unexpected = 0${sum}
  local duration, ranOut = summary.duration, 0${lasted}
  io.write(string.format('BENCH_RESULT {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"errors":%d,"unexpected":%d,"ranOut":%d}\\n',
    summary.requests, duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout, unexpected, ranOut))
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
function getScript(requests: PathRequests): string {
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

/**
 * Thread n reads proofFiles[n] line by line, one line ahead so that it knows which is its last: it
 * sends that one and stops (wrk.thread:stop(), noting when, on a monotonic clock through LuaJIT's
 * ffi). The other connections' turns in the same pass of wrk's loop send nothing (an empty
 * request), so no proof is ever sent twice, and a replay would be a 401 counted as unexpected.
 * (wrk calls request() once before the run to check the script: the first line is never sent.)
 */
export function proofScript({ proofFiles, expectStatus }: ProofRequests): string {
  return `local files = { ${proofFiles.map(luaString).join(', ')} }
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock_id, bench_timespec *tp);
]]
local clock = ffi.new("bench_timespec")
local CLOCK_MONOTONIC = 1
local function now_us()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, clock)
  return tonumber(clock.tv_sec) * 1000000 + math.floor(tonumber(clock.tv_nsec) / 1000)
end
threads = {}
setup = function(thread)
  table.insert(threads, thread)
  thread:set("proof_file", files[#threads])
end
started_us, stopped_us, unexpected = 0, 0, 0
local lines, headers, following
init = function(args)
  lines = assert(io.open(proof_file, "r"))
  headers = {}
  for k, v in pairs(wrk.headers) do headers[k] = v end
  following = lines:read("*l")
end
request = function()
  if started_us == 0 then started_us = now_us() end
  if following == nil then return "" end
  local line = following
  following = lines:read("*l")
  if following == nil then
    stopped_us = now_us()
    wrk.thread:stop()
  end
  local space = string.find(line, " ", 1, true)
  headers["DPoP"] = string.sub(line, space + 1)
  return wrk.format("GET", string.sub(line, 1, space - 1), headers)
end
response = function(status, headers, body) if status ~= ${expectStatus} then unexpected = unexpected + 1 end end
`;
}

function wrkScript(requests: RequestMix): string {
  if (requests.method === 'POST') return postScript(requests.path, requests.body, requests.idempotencyKey) + reportScript(false);
  if (isProofRequests(requests)) return proofScript(requests) + reportScript(true, true);
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
      const timeout = load.timeoutSeconds ?? 5;
      if (isProofRequests(load.requests) && load.requests.proofFiles.length !== WRK_THREADS)
        throw new Error(`requests with DPoP proofs need one file per wrk thread (${WRK_THREADS})`);
      const args = [
        `-t${WRK_THREADS}`,
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
        ranOut: number;
      };
      return {
        requests: r.requests,
        requestsPerSecond: r.requests / (r.durationUs / 1e6),
        p50Ms: r.p50Us / 1000,
        p99Ms: r.p99Us / 1000,
        errors: r.errors,
        unexpected: r.unexpected,
        ...(r.ranOut > 0 ? { proofsRanOut: true as const } : {}),
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
