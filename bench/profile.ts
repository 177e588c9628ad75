// Where orderpay's time goes (BENCH_PROFILE): V8's sampling CPU profiler of the orderpay process,
// driven through its inspector (orderpay then runs with --inspect on a loopback port), started and
// stopped around each measured orderpay run so that the profile holds the requests of that run
// alone — not start-up, warm-up, or the baseline's turn. Each profile is summarised as
// microseconds per request: by step (orderpay's own functions and hooks, inclusive of what they
// call) and by where the code lives (a package, a file of src/, Node's internals, GC), self time.
// The Chrome DevTools Protocol's Profiler domain: https://chromedevtools.github.io/devtools-protocol/tot/Profiler/
import { writeFileSync } from 'node:fs';

/** V8's .cpuprofile: the call tree's nodes, the sampled node of each tick and the time between ticks. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One line of a summary: a step or a place, and its microseconds per request. */
export interface ProfileLine {
  name: string;
  us: number;
}

export interface ProfileSummary {
  requests: number;
  /** The process's CPU per request (/proc), or the samples' time where /proc is absent. */
  totalUs: number;
  /** orderpay's functions, inclusive (each sample counted once per function on its stack, up to Fastify's hook runner). */
  steps: ProfileLine[];
  /** Self time by package, src/ file, Node's internals, GC. */
  places: ProfileLine[];
}

/** Every 500 µs: thousands of samples in a run of seconds, at a cost of a few per cent of orderpay's CPU. */
const SAMPLING_INTERVAL_US = 500;
/** Lines kept per table. */
const TOP = 25;

interface Inspector {
  send(method: string, params?: object): Promise<unknown>;
  close(): void;
}

/** A session on the inspector of the process listening for it at 127.0.0.1:port. */
async function connectInspector(port: number): Promise<Inspector> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let nextId = 1;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const waiting = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id!);
    if (message.error) waiting.reject(new Error(message.error.message));
    else waiting.resolve(message.result);
  });
  return {
    send(method, params = {}) {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    },
    close: () => socket.close(),
  };
}

export interface Profiler {
  /** Starts sampling; stop returns the profile of what ran since. */
  start(): Promise<{ stop(): Promise<CpuProfile> }>;
  close(): void;
}

export async function connectProfiler(port: number): Promise<Profiler> {
  const inspector = await connectInspector(port);
  await inspector.send('Profiler.enable');
  await inspector.send('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
  return {
    async start() {
      await inspector.send('Profiler.start');
      return { stop: async () => ((await inspector.send('Profiler.stop')) as { profile: CpuProfile }).profile };
    },
    close: () => inspector.close(),
  };
}

type Frame = CpuProfile['nodes'][number]['callFrame'];

/** Where a function lives: a package, a file of src/, a part of Node, or V8's own entries. */
export function placeOf({ url, functionName }: Frame): string | undefined {
  if (!url) {
    if (functionName.startsWith('(')) return functionName;
    // fast-json-stringify's serializers and Ajv's validators, compiled with new Function.
    if (/^(anonymous|validate)\d*$/.test(functionName)) return '(compiled serializers and validators)';
    // A builtin (a socket write, a string decoding): its caller's place.
    return undefined;
  }
  const inPackage = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (inPackage) return inPackage[1]!;
  const own = /\/((?:src|bench)\/.+)$/.exec(url);
  if (own) return own[1]!;
  // node:internal/streams/writable → node:streams
  const node = /^node:(?:internal\/)?([^/]+)/.exec(url);
  return node ? `node:${node[1]}` : url;
}

/** A function of the server's own (src/, or bench/ for the baseline), as a step: its name and file (and line, when it has no name). */
function stepOf(frame: Frame): string | undefined {
  const own = /\/((?:src|bench)\/.+)$/.exec(frame.url);
  if (!own) return undefined;
  return frame.functionName ? `${frame.functionName} (${own[1]})` : `(anonymous) (${own[1]}:${frame.lineNumber + 1})`;
}

/**
 * Fastify's hook runner: a hook that calls its done runs the rest of the request (the next hooks,
 * the handler, the send) inside it, so above this frame the stack is the hook that went on, not
 * the step that spends the time.
 */
const isContinuation = (frame: Frame) => frame.url.endsWith('/fastify/lib/hooks.js');

/**
 * The profile per request. Each sample counts the same: the time between two samples is wall time,
 * and stretches while the process waits for a core (the load generator and PostgreSQL share them),
 * so the samples give each step's share of the main thread's work, and cpuUsPerRequest (the
 * process's CPU by /proc, all threads) what that share is in microseconds. Without it, samples ×
 * the sampling interval.
 */
export function summariseProfile(profile: CpuProfile, requests: number, cpuUsPerRequest: number): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (totals: Map<string, number>, name: string) => totals.set(name, (totals.get(name) ?? 0) + 1);
  let busy = 0;
  for (const id of profile.samples) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    busy++;
    let place: string | undefined;
    const seen = new Set<string>();
    let continued = false;
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at)!.callFrame;
      place ??= placeOf(frame);
      continued ||= isContinuation(frame);
      const step = continued ? undefined : stepOf(frame);
      if (step && !seen.has(step)) {
        seen.add(step);
        add(inclusive, step);
      }
    }
    add(self, place ?? '(program)');
  }
  const usPerSample = Number.isFinite(cpuUsPerRequest) && busy > 0 ? (cpuUsPerRequest * requests) / busy : SAMPLING_INTERVAL_US;
  const perRequest = (totals: Map<string, number>): ProfileLine[] =>
    [...totals]
      .map(([name, samples]) => ({ name, us: (samples * usPerSample) / requests }))
      .sort((a, b) => b.us - a.us)
      .slice(0, TOP);
  return { requests, totalUs: (busy * usPerSample) / requests, steps: perRequest(inclusive), places: perRequest(self) };
}

/** The profile as a file Chrome's DevTools (Performance → Load profile) or speedscope opens. */
export function saveProfile(file: string, profile: CpuProfile): void {
  writeFileSync(file, JSON.stringify(profile));
}

const fixed = (us: number) => (us >= 10 ? us.toFixed(0) : us.toFixed(1));

export function formatSummary(label: string, summary: ProfileSummary): string {
  const lines = [`${label}: ${fixed(summary.totalUs)} µs/req (${summary.requests.toLocaleString('en-US')} requests)`];
  lines.push('  where (self):', ...summary.places.map((line) => `    ${fixed(line.us).padStart(7)}  ${line.name}`));
  lines.push('  steps (inclusive):', ...summary.steps.map((line) => `    ${fixed(line.us).padStart(7)}  ${line.name}`));
  return lines.join('\n');
}
