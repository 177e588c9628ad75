// The typed client (clients/typescript/) as a project gets it: packed by `npm pack` (whose prepare
// script builds it), installed into a temporary project and run against a live server on a real
// socket. On Node 20, which cannot run TypeScript, its README's example runs as written and a
// consumer module walks a collection by cursor and is refused with typed problems; the same module
// runs in Chromium, which proves the package imports no Node module; and a consumer's TypeScript
// compiles against the packed declarations, a misspelt problem code not.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ROOT } from '../cli/orderpay-process.ts';
import { createCustomer } from '../helpers/actors.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { launchChromium, withChromium } from '../helpers/browser.ts';
import { closeServer, startProjectServer } from '../helpers/project-server.ts';
import { createOrder, createProduct, createUser } from '../helpers/factories.ts';
import { NODE_20, readNode20Version, withNode20 } from '../helpers/node20.ts';
import { CLIENT_DIR, packClient, type PackedClient } from '../helpers/packed-client.ts';

// Ports 29820–29829 belong to this file.
const API_PORT = 29_820;
const PAGE_PORT = 29_821;
const SERVER_URL = `http://127.0.0.1:${API_PORT}`;
const PAGE_ORIGIN = `http://127.0.0.1:${PAGE_PORT}`;
const FIXTURES = path.join(ROOT, 'test/fixtures/typescript-client');
const run = promisify(execFile);

/** What test/fixtures/typescript-client/consumer.js reports. */
interface Exercised {
  pages: { ids: number[]; meta: { total: number; page: number; pageSize: number; nextCursor: string | null } }[];
  orders: { id: number; total: number }[];
  returnedProblem: { status: number; contentType: string | null; code?: string; instance?: string };
  thrownByUnwrap: Record<string, unknown> | null;
  thrownByPager: Record<string, unknown> | null;
}

describe('the typed client as a package: packed, on Node 20, in a browser, and to the type checker', () => {
  let t: TestApp;
  let packed: PackedClient;
  before(async () => {
    t = await startTestApp({ cors: { origins: [PAGE_ORIGIN], anyLoopbackOrigin: false } });
    await t.app.listen({ host: '127.0.0.1', port: API_PORT });
    packed = await packClient();
    copyFileSync(path.join(FIXTURES, 'consumer.js'), path.join(packed.projectDir, 'consumer.js'));
  });
  after(async () => {
    packed?.remove();
    await t?.close();
  });

  /** Seven orders of one customer (totals 10.00 to 16.00) and two of another; the walk asks for five of them. */
  async function createWalkableOrders() {
    const { user, token } = await createCustomer(t);
    const orders = [];
    for (let i = 0; i < 7; i++) orders.push(await createOrder(t.db, user.id, { price: 1000 + 100 * i }));
    const other = await createUser(t.db);
    for (const price of [5000, 6000]) await createOrder(t.db, other.id, { price });
    const walked = orders
      .filter((order) => order.total >= 1200)
      .sort((a, b) => b.total - a.total)
      .map((order) => ({ id: order.id, total: order.total }));
    return { accessToken: token, query: { minTotal: 1200, sort: '-total', pageSize: 2 }, walked };
  }

  function assertExercised(seen: Exercised, walked: { id: number; total: number }[]): void {
    const ids = walked.map((order) => order.id);
    assert.deepEqual(
      seen.pages.map((page) => page.ids),
      [ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)],
      'three pages of the filter and sort given, by cursor',
    );
    assert.deepEqual(
      seen.pages.map(({ meta }) => [meta.page, meta.pageSize, meta.total, meta.nextCursor === null]),
      [
        [1, 2, 5, false],
        [2, 2, 5, false],
        [3, 2, 5, true],
      ],
    );
    assert.deepEqual(seen.orders, walked, 'every order once, in the order asked for');
    const instance = '/v3/orders/2000000000';
    const contentType = 'application/problem+json; charset=utf-8';
    assert.deepEqual(seen.returnedProblem, { status: 404, contentType, code: 'ORDER_NOT_FOUND', instance });
    assert.match(String(seen.thrownByUnwrap?.message), /^404 ORDER_NOT_FOUND: /);
    const thrown = { isOrderpayProblem: true, isError: true, name: 'OrderpayProblem', status: 404, code: 'ORDER_NOT_FOUND', instance };
    assert.deepEqual({ ...seen.thrownByUnwrap, message: undefined }, { ...thrown, message: undefined });
    assert.deepEqual(
      { ...seen.thrownByPager, message: undefined },
      { ...thrown, status: 400, code: 'QUERY_UNKNOWN_PARAMETER', instance: '/v3/orders', message: undefined },
    );
  }

  test('npm pack ships the built JavaScript, its declarations, the README and the licence; not the TypeScript sources', () => {
    const built = ['client', 'pages', 'problem', 'schema'].flatMap((name) => [`dist/${name}.d.ts`, `dist/${name}.js`]);
    assert.deepEqual(packed.files, ['LICENSE', 'README.md', ...built, 'package.json']);
    const { name, private: isPrivate, type, sideEffects, engines, exports, dependencies } = packed.manifest;
    assert.deepEqual(
      { name, isPrivate, type, sideEffects, engines, exports, dependencies: Object.keys(dependencies ?? {}) },
      {
        name: '@orderpay/client',
        isPrivate: undefined,
        type: 'module',
        sideEffects: false,
        engines: { node: '>=20' },
        exports: { '.': { types: './dist/client.d.ts', import: './dist/client.js', default: './dist/client.js' } },
        dependencies: ['openapi-fetch'],
      },
    );
  });

  withNode20('the built client on Node 20', () => {
    test("the README's example runs as written on Node 20: the order placed, paid and read back, the retry replayed, the orders listed", async () => {
      const { user, token } = await createCustomer(t);
      await createProduct(t.db, { price: 990 });
      const { stdout } = await run(NODE_20, ['clients/typescript/example.js'], {
        cwd: ROOT,
        env: { ...process.env, ORDERPAY_URL: SERVER_URL, ORDERPAY_TOKEN: token },
        timeout: 60_000,
      });
      const lines = stdout.trim().split('\n');
      assert.equal(lines.length, 4, stdout);
      const [, orderId] = /^order (\d+): \d+ [A-Z]{3}, pending$/.exec(lines[0]!) ?? assert.fail(lines[0]);
      const [, paymentId] = /^payment (\d+): succeeded; the order is now paid$/.exec(lines[1]!) ?? assert.fail(lines[1]);
      assert.equal(lines[2], `retry with the same key: payment ${paymentId}, replayed: true`);
      assert.equal(lines[3], 'your orders, all pages: 1');
      const { rows } = await t.db.query<{ customer_id: number; status: string; payments: number[] }>(
        `SELECT o.customer_id, o.status, array_agg(p.id ORDER BY p.id)::int[] AS payments
           FROM orders o JOIN payments p ON p.order_id = o.id WHERE o.id = $1 GROUP BY o.id`,
        [Number(orderId)],
      );
      assert.deepEqual(rows, [{ customer_id: user.id, status: 'paid', payments: [Number(paymentId)] }], 'the retry charged nothing');
    });

    test('a module importing the package by name pages a collection by cursor, every order once, and catches typed problems', async () => {
      const { walked, ...args } = await createWalkableOrders();
      const script = `import { exerciseClient } from './consumer.js';
        console.log(JSON.stringify(await exerciseClient(JSON.parse(process.argv[1]))));`;
      const { stdout } = await run(NODE_20, ['--input-type=module', '-e', script, JSON.stringify({ serverUrl: SERVER_URL, ...args })], {
        cwd: packed.projectDir,
        timeout: 60_000,
      });
      assertExercised(JSON.parse(stdout) as Exercised, walked);
    });

    // Node loads ES modules with require() from 20.19 on.
    const [, minor] = (readNode20Version() ?? '').split('.');
    const beforeRequireOfModules = Number(minor) < 19 && `${readNode20Version()} cannot require() ES modules`;
    test('CommonJS code requires the package on Node 20.19 and later', { skip: beforeRequireOfModules }, async () => {
      const script = "console.log(Object.keys(require('@orderpay/client')).sort().join(' '))";
      const { stdout } = await run(NODE_20, ['-e', script], { cwd: packed.projectDir });
      assert.equal(stdout.trim(), 'API_VERSION OrderpayProblem OrderpayResponseError createOrderpayClient unwrap');
    });
  });

  withChromium('the built client in a browser', () => {
    test('in Chromium the same module, the package mapped by its exports, does the same across origins', async () => {
      const { walked, ...args } = await createWalkableOrders();
      const pageServer = await startProjectServer(packed.projectDir, PAGE_PORT, ['@orderpay/client', 'openapi-fetch']);
      let browser: Browser | undefined;
      try {
        browser = await launchChromium();
        const page = await browser.newPage();
        const failedRequests: string[] = [];
        page.on('requestfailed', (request) => failedRequests.push(request.url()));
        await page.goto(`${PAGE_ORIGIN}/`);
        const seen = await page.evaluate(
          async (options) => {
            const consumer = '/consumer.js';
            const { exerciseClient } = await import(consumer);
            return exerciseClient(options);
          },
          { serverUrl: SERVER_URL, ...args },
        );
        assertExercised(seen as Exercised, walked);
        assert.deepEqual(failedRequests, []);
      } finally {
        await browser?.close();
        await closeServer(pageServer);
      }
    });
  });

  test("a problem's code is typed: a consumer's TypeScript compiles against the packed declarations, a misspelt code does not", async () => {
    const tsc = createRequire(path.join(CLIENT_DIR, 'package.json')).resolve('typescript/bin/tsc');
    const source = readFileSync(path.join(FIXTURES, 'consumer-types.ts'), 'utf8');
    const file = path.join(packed.projectDir, 'consumer-types.ts');
    const compilerOptions = { strict: true, module: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], types: [], noEmit: true };
    writeFileSync(path.join(packed.projectDir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer-types.ts'] }));
    const compile = () =>
      run(process.execPath, [tsc, '-p', packed.projectDir], { cwd: packed.projectDir }).then(
        () => '',
        (error) => error.stdout,
      );

    writeFileSync(file, source);
    assert.equal(await compile(), '', 'the consumer compiles, and each @ts-expect-error marks an error');

    // Without the markers, exactly the lines they marked fail.
    const lines = source.split('\n');
    const isMarker = (line: string) => /^\s*\/\/ @ts-expect-error /.test(line);
    const marked = lines.flatMap((line, i) => (isMarker(line) ? [i + 2] : []));
    assert.ok(marked.length >= 6, `${marked.length} marked lines`);
    writeFileSync(file, lines.map((line) => (isMarker(line) ? '' : line)).join('\n'));
    const errors = await compile();
    const failing = [...errors.matchAll(/^consumer-types\.ts\((\d+),\d+\): error TS\d+/gm)].map((match) => Number(match[1]));
    assert.deepEqual([...new Set(failing)], marked, errors);
    assert.match(errors, /'"ORDER_NOT_FOUD"' is not assignable to type|types '.*' and '"ORDER_NOT_FOUD"' have no overlap/);
  });
});
