// scripts/node.sh, through which npm start, npm test and the bench run node, sets two memory
// settings its processes inherit (docs/deploy.md, "Memory"): Node's compile cache, which keeps the
// TypeScript already stripped so that a second start does not load the type stripper, and glibc's
// MALLOC_ARENA_MAX. A value already in the environment is kept.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));
const launcher = path.join(root, 'scripts/node.sh');
const scratch = mkdtempSync(path.join(tmpdir(), 'orderpay-node-launcher-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `sh scripts/node.sh <args>` with this environment less the two variables, plus `env`. */
async function runNode(args: string[], env: Record<string, string> = {}): Promise<string> {
  const { NODE_COMPILE_CACHE: _cache, MALLOC_ARENA_MAX: _arenas, ...inherited } = process.env;
  const { stdout } = await promisify(execFile)('sh', [launcher, ...args], { env: { ...inherited, ...env } });
  return stdout.trim();
}

const SHOW_SETTINGS =
  "const { getCompileCacheDir } = await import('node:module'); console.log(JSON.stringify({ cache: process.env.NODE_COMPILE_CACHE, arenas: process.env.MALLOC_ARENA_MAX, enabled: getCompileCacheDir() !== undefined }))";

test('node.sh sets the compile cache under .node/ and two malloc arenas, and Node uses the cache', async () => {
  const settings = JSON.parse(await runNode(['--input-type=module', '-e', SHOW_SETTINGS]));
  assert.deepEqual(settings, { cache: path.join(root, '.node/compile-cache'), arenas: '2', enabled: true });
});

test('node.sh keeps values already set', async () => {
  const cache = path.join(scratch, 'chosen-cache');
  const settings = JSON.parse(
    await runNode(['--input-type=module', '-e', SHOW_SETTINGS], { NODE_COMPILE_CACHE: cache, MALLOC_ARENA_MAX: '4' }),
  );
  assert.deepEqual(settings, { cache, arenas: '4', enabled: true });
});

test('from the second start on, TypeScript comes stripped from the cache: the type stripper is not loaded', async () => {
  const file = path.join(scratch, 'typed.ts');
  writeFileSync(
    file,
    "const loaded: string[] = process.moduleLoadList.filter((m) => m.includes('amaro'));\nconsole.log(JSON.stringify(loaded));\n",
  );
  const env = { NODE_COMPILE_CACHE: path.join(scratch, 'cache') };
  const first = JSON.parse(await runNode([file], env));
  assert.ok(first.length > 0, 'the first start strips the types itself');
  assert.deepEqual(JSON.parse(await runNode([file], env)), []);
});
