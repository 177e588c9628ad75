// scripts/node.sh, through which npm start, npm test and the bench run node, sets two memory
// settings its processes inherit (docs/deploy.md, the Node flags): Node's compile cache, which keeps the
// TypeScript already stripped so that a second start does not load the type stripper, and glibc's
// MALLOC_ARENA_MAX. A value already in the environment is kept. The server (`serve`) alone
// allocates through jemalloc where the system has it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  const { NODE_COMPILE_CACHE: _cache, MALLOC_ARENA_MAX: _arenas, LD_PRELOAD: _preload, MALLOC_CONF: _conf, ...inherited } = process.env;
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

// Where Debian and Ubuntu's libjemalloc2 puts it on this architecture (the first path node.sh tries here).
const JEMALLOC = `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu/libjemalloc.so.2`;
const SHOW_MALLOC =
  "console.log(JSON.stringify({ jemalloc: require('node:fs').readFileSync('/proc/self/maps', 'utf8').includes('libjemalloc'), conf: process.env.MALLOC_CONF }))";
const noJemalloc = existsSync(JEMALLOC) ? undefined : `${JEMALLOC} is missing (Debian: apt-get install libjemalloc2)`;
if (noJemalloc && process.env.CI === 'true') throw new Error(`CI runs the server on jemalloc: ${noJemalloc}`);
if (noJemalloc) console.log(`# skipping the jemalloc tests: ${noJemalloc}`);

test('the server (serve) allocates through jemalloc where the system has it', { skip: noJemalloc }, async () => {
  assert.deepEqual(JSON.parse(await runNode(['-e', SHOW_MALLOC, 'serve'])), {
    jemalloc: true,
    conf: 'background_thread:true,narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0',
  });
});

test('other commands, and the server with ORDERPAY_MALLOC=glibc, keep glibc', { skip: noJemalloc }, async () => {
  assert.deepEqual(JSON.parse(await runNode(['-e', SHOW_MALLOC, 'migrate'])), { jemalloc: false });
  assert.deepEqual(JSON.parse(await runNode(['-e', SHOW_MALLOC, 'serve'], { ORDERPAY_MALLOC: 'glibc' })), { jemalloc: false });
});
