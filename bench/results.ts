// The results files, one per number of orders (bench/results/orders-<N>.json, committed), and the
// page rendered from them: docs/benchmarks.md is the 1M run's, with the other sizes in its Scale
// section and (ap)'s figures, kept apart by the last run at 1M that measured it
// (bench/results/dpop.json), in its DPoP section. Each file holds all its page needs (the machine
// too), so any run can render the page.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DpopResults } from './dpop-report.ts';
import { readProfileRuns } from './profile-report.ts';
import { renderBenchmarksDoc, type BenchResults } from './report.ts';

/** The size docs/benchmarks.md shows; the other sizes appear in its Scale section. */
export const REFERENCE_ORDERS = 1_000_000;

const RESULTS_DIR = new URL('./results/', import.meta.url);
const DOC = new URL('../docs/benchmarks.md', import.meta.url);

const resultsFile = (orders: number) => new URL(`orders-${orders}.json`, RESULTS_DIR);

/** Writes the run's file (replacing the previous run at its size); returns its path. */
export function writeResults(results: BenchResults): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = resultsFile(results.info.orders);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return fileURLToPath(file);
}

const parseResults = (file: URL) => JSON.parse(readFileSync(file, 'utf8')) as BenchResults;

const DPOP_FILE = new URL('dpop.json', RESULTS_DIR);

/** Writes (ap)'s figures (replacing the previous ones); returns the file's path. */
export function writeDpopResults(results: DpopResults): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(DPOP_FILE, `${JSON.stringify(results, null, 2)}\n`);
  return fileURLToPath(DPOP_FILE);
}

const readDpopResults = () => (existsSync(DPOP_FILE) ? (JSON.parse(readFileSync(DPOP_FILE, 'utf8')) as DpopResults) : undefined);

/** The committed results at a size, if there are any. */
export function readResults(orders: number): BenchResults | undefined {
  const file = resultsFile(orders);
  return existsSync(file) ? parseResults(file) : undefined;
}

function readAllResults(): BenchResults[] {
  if (!existsSync(RESULTS_DIR)) return [];
  return readdirSync(RESULTS_DIR)
    .filter((name) => /^orders-\d+\.json$/.test(name))
    .map((name) => parseResults(new URL(name, RESULTS_DIR)))
    .sort((a, b) => a.info.orders - b.info.orders);
}

/**
 * Renders docs/benchmarks.md from the results files; returns false (and leaves the page) when
 * there is no 1M file to render it from.
 */
export function renderDocFromResults(): boolean {
  const all = readAllResults();
  const reference = all.find((results) => results.info.orders === REFERENCE_ORDERS);
  if (!reference) return false;
  writeFileSync(
    DOC,
    renderBenchmarksDoc(
      reference,
      all.filter((results) => results !== reference),
      readProfileRuns(),
      readDpopResults(),
    ),
  );
  return true;
}
