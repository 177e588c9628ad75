// Profiles kept for the page: a BENCH_PROFILE run with BENCH_PROFILE_NAME writes its summaries to
// bench/results/profile-<name>.json (committed), and docs/benchmarks.md shows every kept profile
// side by side, per scenario: where orderpay's CPU per request goes, and the baseline's beside it.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { int, markdownTable } from './markdown.ts';
import type { ProfileLine, ProfileSummary } from './profile.ts';

/** One profiled run: what it ran on, and each scenario's summaries by column (orderpay, baseline). */
export interface ProfileRun {
  name: string;
  date: string;
  /** The commit profiled (and whether the tree held changes beside it). */
  commit: string;
  command: string;
  scenarios: Record<string, Record<string, ProfileSummary>>;
}

const RESULTS_DIR = new URL('./results/', import.meta.url);

/** Rows shown per table: the largest of any run. */
const ROWS = 12;
/** The scenarios the page shows profiles of (issue 28's), in order. */
const PROFILED = ['b', 'c', 'd', 'e'];

function describeCommit(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: new URL('..', import.meta.url), encoding: 'utf8' }).trim();
  try {
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? ' with changes' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** Keeps the summaries a BENCH_PROFILE run left in dir (<scenario>-<column>.json) as bench/results/profile-<name>.json. */
export function keepProfileRun(name: string, dir: string, command: string): string {
  const scenarios: ProfileRun['scenarios'] = {};
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const [scenario, column] = file.slice(0, -'.json'.length).split('-', 2) as [string, string];
    const columns = scenarios[scenario] ?? {};
    columns[column] = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8')) as ProfileSummary;
    scenarios[scenario] = columns;
  }
  const run: ProfileRun = { name, date: new Date().toISOString(), commit: describeCommit(), command, scenarios };
  const file = new URL(`profile-${name}.json`, RESULTS_DIR);
  writeFileSync(file, `${JSON.stringify(run, null, 2)}\n`);
  return file.pathname;
}

export function readProfileRuns(): ProfileRun[] {
  if (!existsSync(RESULTS_DIR)) return [];
  return readdirSync(RESULTS_DIR)
    .filter((file) => /^profile-[\w-]+\.json$/.test(file))
    .map((file) => JSON.parse(readFileSync(new URL(file, RESULTS_DIR), 'utf8')) as ProfileRun)
    .sort((a, b) => a.date.localeCompare(b.date));
}

const us = (value: number | undefined) => (value === undefined ? '—' : value >= 10 ? int(value) : value.toFixed(1));

/** One table: the lines largest in any of the columns, each column's µs per request. */
function comparison(header: string, columns: { label: string; lines: ProfileLine[] | undefined }[]): string {
  const names = new Map<string, number>();
  for (const { lines } of columns) for (const line of lines ?? []) names.set(line.name, Math.max(names.get(line.name) ?? 0, line.us));
  const rows = [...names]
    .sort((a, b) => b[1] - a[1])
    .slice(0, ROWS)
    .map(([name]) => [
      name.startsWith('(') ? name : `\`${name}\``,
      ...columns.map(({ lines }) => us(lines?.find((l) => l.name === name)?.us)),
    ]);
  return markdownTable([header, ...columns.map((c) => c.label)], rows);
}

function scenarioTables(key: string, runs: ProfileRun[]): string {
  const orderpay = runs.map((run) => ({ label: `orderpay, ${run.name}`, summary: run.scenarios[key]?.orderpay }));
  const latest = runs.at(-1)!.scenarios[key]?.baseline;
  const places = [
    ...orderpay.map(({ label, summary }) => ({ label, lines: summary?.places })),
    { label: 'baseline', lines: latest?.places },
  ];
  const totals = [...orderpay.map(({ summary }) => us(summary?.totalUs)), us(latest?.totalUs)].join(' / ');
  return `### (${key})

Node CPU per request (${[...orderpay.map((o) => o.label), 'baseline'].join(' / ')}): ${totals} µs.

${comparison('where (self time)', places)}

${comparison(
  'step (inclusive)',
  orderpay.map(({ label, summary }) => ({ label, lines: summary?.steps })),
)}`;
}

/** The section of the page; empty without kept profiles. */
export function renderProfileSection(runs: ProfileRun[]): string {
  if (runs.length === 0) return '';
  const shown = PROFILED.filter((key) => runs.some((run) => run.scenarios[key]));
  const sources = runs.map((run) => `- ${run.name}: \`${run.command}\` at ${run.commit}; ${run.date}`).join('\n');
  return `### Profiles

Where each request's Node CPU goes, in microseconds per request: V8's sampling profiler on the
server's main thread during the measured run (bench/profile.ts), each sample counted the same, the
shares scaled to the CPU per request the run measured from /proc. "Where" is self time by the
package, \`src/\` file or part of Node the sampled function belongs to (a builtin counts for its
caller: a socket write for \`node:stream_base_commons\`); a "step" is one of orderpay's functions
with all it calls, up to Fastify's hook runner (async functions count between their awaits).
Profiled runs cost the servers some CPU and are not this page's figures, and one run differs from
the next by some 15%. \`BENCH_PROFILE=<dir> npm run bench\` profiles a run (its \`.cpuprofile\`
files open in Chrome's DevTools or speedscope); with \`BENCH_PROFILE_NAME=<name>\` too, its
summaries are kept for this page as \`bench/results/profile-<name>.json\`
([decisions/0121-request-path-cost.md](decisions/0121-request-path-cost.md)). The runs:

${sources}

${shown.map((key) => scenarioTables(key, runs)).join('\n\n')}
`;
}
