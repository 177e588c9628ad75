// What `orderpay serve` prints: the README's sample is what `npm start` prints on a fresh clone; a
// database without demo data says how to load it instead of printing no tokens; the request log
// keeps health probes out of the info level.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import {
  cleanUpProcessesAndDatabases,
  CLI_ENTRY,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  ROOT,
  startProcess,
  type Env,
  type StartedProcess,
} from './orderpay-process.ts';

const PORT = 29279;
const SIGN_IN_LINE = /^Sign in through OAuth: .*\n/m;

after(cleanUpProcessesAndDatabases);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for the text on stdout (the process must not exit first); then the caller stops it. */
async function printed(launched: StartedProcess, text: RegExp, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (!text.test(launched.stdout())) {
    if (launched.child.exitCode !== null) throw new Error(`exited before printing ${text}:\n${launched.stdout()}\n${launched.stderr()}`);
    if (Date.now() > deadline) throw new Error(`did not print ${text} within ${timeoutMs} ms:\n${launched.stdout()}`);
    await sleep(50);
  }
  return launched.stdout();
}

async function stop(launched: StartedProcess): Promise<void> {
  launched.child.kill('SIGTERM');
  assert.deepEqual(await launched.waitForExit(20_000), { code: 0, signal: null }, launched.stderr());
}

/** The banner of `orderpay serve` (human output), once the server listens. */
async function serveBanner(env: Env): Promise<string> {
  const launched = startProcess(process.execPath, [CLI_ENTRY, 'serve'], { ...env, PORT: String(PORT) });
  try {
    const output = await printed(launched, /^ {2}API docs: .*\n(.+\n)*/m);
    await sleep(200);
    return output;
  } finally {
    await stop(launched);
  }
}

describe('the README sample start-up output', () => {
  test('is what `npm start` prints on a fresh clone (ports, paths, times and tokens aside)', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const sample = /`npm start` prints where the API[\s\S]*?\n```\n([\s\S]*?)```\n/.exec(readme)?.[1];
    assert.ok(sample, 'the README has the sample after "`npm start` prints where the API …"');

    // A fresh clone: the embedded database in a new directory, no configuration but the port.
    const parent = await mkdtemp(path.join(tmpdir(), 'orderpay-readme-'));
    const dataDir = path.join(parent, 'data');
    try {
      const env: Env = {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        DATA_DIR: dataDir,
        PORT: String(PORT),
        NPM_CONFIG_UPDATE_NOTIFIER: 'false',
      };
      const launched = startProcess('npm', ['start'], env);
      let output: string;
      try {
        output = await printed(launched, SIGN_IN_LINE);
      } finally {
        await stop(launched);
      }
      const banner = output.slice(0, output.search(SIGN_IN_LINE) + SIGN_IN_LINE.exec(output)![0].length);
      const asDocumented = banner
        .replace(/^\n+/, '')
        .replaceAll(`127.0.0.1:${PORT}`, '127.0.0.1:3000')
        .replaceAll(dataDir, '/…/data')
        .replace(/"time":\d+,"pid":\d+,"hostname":"[^"]*"/g, '"time":…,"pid":…,"hostname":"…"')
        .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, 'eyJhbGciOiJSUzI1NiIs…');
      assert.equal(asDocumented, sample);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});

describe(`a database without demo data says how to load it (${DATABASE_LABEL})`, () => {
  test('development: no tokens, and `orderpay seed` named instead', async () => {
    const target = await createTargetDatabase();
    // PostgreSQL is not seeded by default; the embedded database is told not to be.
    const { ORDERPAY_SEED_ON_EMPTY: _seed, ...targetEnv } = target.env;
    const banner = await serveBanner(commandEnv({ ...targetEnv, ...(target.dataDir ? { ORDERPAY_SEED_ON_EMPTY: 'false' } : {}) }));
    assert.doesNotMatch(banner, /eyJ|Demo access tokens/);
    assert.match(
      banner,
      /^No demo data in this database: load it with `orderpay seed` \(in a clone: `npm run orderpay -- seed`\), then restart for demo access tokens\.$/m,
    );
  });

  test('production: no word of demo data; a first user to create', async () => {
    const target = await createTargetDatabase();
    const banner = await serveBanner(commandEnv({ ...target.env, NODE_ENV: 'production', ORDERPAY_PAYMENT_PROCESSOR: 'simulator' }));
    assert.doesNotMatch(banner, /eyJ|demo|seed/i);
    assert.match(
      banner,
      /^No users yet: add one with `orderpay users create --email … --role staff` \(it asks for the password; README: "The command"\)\.$/m,
    );
  });
});

describe(`the request log (${DATABASE_LABEL})`, () => {
  test('one line per request at info (its arrival at debug); health probes at debug', async () => {
    const target = await createTargetDatabase();
    const launched = startProcess(
      process.execPath,
      [CLI_ENTRY, 'serve', '--json'],
      commandEnv({ ...target.env, PORT: String(PORT), LOG_LEVEL: 'debug' }),
    );
    try {
      await printed(launched, /"event":"listening"/);
      const requests = { '/livez': 200, '/readyz': 200, '/openapi.json': 200, '/v1/orders': 401 };
      const ids: Record<string, string> = {};
      for (const [url, status] of Object.entries(requests)) {
        const response = await fetch(`http://127.0.0.1:${PORT}${url}`);
        assert.equal(response.status, status, url);
        ids[url] = response.headers.get('x-request-id')!;
      }
      // pino writes asynchronously and in order: once the last request's completion is out, all are.
      const last = ids['/v1/orders']!;
      await printed(launched, new RegExp(`"reqId":"${last}".*"msg":"request completed"`));
      const lines = launched
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{"level"'))
        .map((line) => JSON.parse(line) as { level: number; reqId?: string; msg: string });
      const levelsOf = (url: string) => lines.filter((line) => line.reqId === ids[url]).map(({ level, msg }) => ({ level, msg }));
      for (const probe of ['/livez', '/readyz']) {
        assert.deepEqual(levelsOf(probe), [
          { level: 20, msg: 'incoming request' },
          { level: 20, msg: 'request completed' },
        ]);
      }
      const completed = lines.find((line) => line.reqId === ids['/v1/orders'] && line.msg === 'request completed') as unknown as {
        req?: { method?: string; url?: string };
        res?: { statusCode?: number };
      };
      assert.equal(completed.req?.method, 'GET', 'the one line names the request');
      assert.equal(completed.req?.url, '/v1/orders');
      assert.equal(completed.res?.statusCode, 401);
      for (const url of ['/openapi.json', '/v1/orders']) {
        assert.deepEqual(
          levelsOf(url).filter(({ msg }) => msg === 'incoming request' || msg === 'request completed'),
          [
            { level: 20, msg: 'incoming request' },
            { level: 30, msg: 'request completed' },
          ],
          url,
        );
      }
    } finally {
      await stop(launched);
    }
  });
});
