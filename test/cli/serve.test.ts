// `orderpay serve` as a real process on a real socket: first start on an empty database, demo
// tokens, one process per embedded data directory, graceful shutdown on SIGTERM, production mode.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { serverUrl } from '../helpers/db.ts';
import {
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  parseJsonOutput,
  PUBLIC_URL,
  runOrderpay,
  startServe,
  type Env,
  type ServeProcess,
  type TargetDatabase,
} from './orderpay-process.ts';

const ALICE = 'alice@example.com';
const STAFF = 'staff@example.com';
const STATUSES = ['cancelled', 'delivered', 'paid', 'pending', 'shipped'];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

after(cleanUpProcessesAndDatabases);

interface OrderList {
  data: { id: number; status: string; customerId: number }[];
  meta: { total: number; page: number; pageSize: number; totalPages: number };
}

async function listOrders(server: ServeProcess, token: string, query = ''): Promise<{ response: Response; body: OrderList }> {
  const response = await fetch(`${server.listening.url}/v1/orders${query}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(response.status, 200, await response.clone().text());
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  return { response, body: (await response.json()) as OrderList };
}

/** SIGTERM, then a clean exit (code 0, nothing on stderr) that released the data directory. */
async function stopCleanly(server: ServeProcess, target: TargetDatabase): Promise<void> {
  assert.deepEqual(await server.stop('SIGTERM', 10_000), { code: 0, signal: null });
  assert.equal(server.stderr(), '');
  if (target.dataDir) assert.equal(existsSync(`${target.dataDir}.lock`), false, 'the lock file is removed');
}

describe(`orderpay serve on an empty database (${DATABASE_LABEL})`, () => {
  let target: TargetDatabase;
  let env: Env;
  let seededTotal: number;
  before(async () => {
    target = await createTargetDatabase();
    env = commandEnv(target.env);
  });

  test('migrates, seeds, prints one "listening" line with demo tokens, and serves on a real socket', async () => {
    const server = await startServe(env);
    try {
      const { listening } = server;
      assert.deepEqual(Object.keys(listening).sort(), ['database', 'demoTokens', 'event', 'publicUrl', 'url']);
      assert.equal(listening.event, 'listening');
      assert.match(listening.url, /^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
      assert.equal(listening.publicUrl, PUBLIC_URL);
      assert.equal(listening.database, target.kind);
      assert.deepEqual(Object.keys(listening.demoTokens).sort(), [ALICE, STAFF]);
      const aliceClaims = decodeJwt(listening.demoTokens[ALICE]!);
      assert.equal(aliceClaims.aud, PUBLIC_URL);
      assert.equal(aliceClaims.exp! - aliceClaims.iat!, 3600);

      const live = await fetch(`${listening.url}/livez`);
      assert.equal(live.status, 200);
      assert.equal(live.headers.get('cache-control'), 'no-store');
      assert.deepEqual(await live.json(), { status: 'ok' });
      const ready = await fetch(`${listening.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ok' });

      // The demo customer sees exactly their own orders, one in every status.
      const alice = await listOrders(server, listening.demoTokens[ALICE]!);
      assert.deepEqual(Object.keys(alice.body).sort(), ['data', 'meta']);
      assert.deepEqual(alice.body.meta, {
        total: alice.body.data.length,
        page: 1,
        pageSize: 20,
        totalPages: 1,
        nextCursor: null,
        prevCursor: null,
      });
      assert.ok(alice.body.data.every((order) => order.customerId === Number(aliceClaims.sub)));
      assert.deepEqual([...new Set(alice.body.data.map((order) => order.status))].sort(), STATUSES);
      assert.match(alice.response.headers.get('link') ?? '', /rel="first"/);

      // Staff see every customer's orders.
      const staff = await listOrders(server, listening.demoTokens[STAFF]!, '?pageSize=100');
      assert.ok(staff.body.meta.total > alice.body.meta.total);
      assert.ok(new Set(staff.body.data.map((order) => order.customerId)).size > 1);
      seededTotal = staff.body.meta.total;

      const anonymous = await fetch(`${listening.url}/v1/orders`);
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer/);
    } finally {
      await stopCleanly(server, target);
    }
  });

  test('a second start keeps the data and does not seed again', async () => {
    assert.ok(seededTotal > 0, 'the first start ran');
    const server = await startServe(env);
    try {
      assert.deepEqual(Object.keys(server.listening.demoTokens).sort(), [ALICE, STAFF]);
      const staff = await listOrders(server, server.listening.demoTokens[STAFF]!, '?pageSize=100');
      assert.equal(staff.body.meta.total, seededTotal);
    } finally {
      await stopCleanly(server, target);
    }
    const seed = await runOrderpay(['seed', '--json'], env);
    assert.equal(seed.code, 0, seed.stderr);
    assert.deepEqual(parseJsonOutput(seed.stdout), { seeded: false, users: 0, products: 0, orders: 0 });
  });

  test('a token from `orderpay tokens issue` is accepted by the server', async () => {
    const issued = await runOrderpay(['tokens', 'issue', '--client-id', 'svc', '--scope', 'orders:read', '--json'], env);
    assert.equal(issued.code, 0, issued.stderr);
    const token = parseJsonOutput(issued.stdout).access_token as string;
    const server = await startServe(env);
    try {
      const orders = await listOrders(server, token, '?pageSize=100');
      assert.equal(orders.body.meta.total, seededTotal);
    } finally {
      await stopCleanly(server, target);
    }
  });

  if (serverUrl) {
    test('other processes share the PostgreSQL database while the server runs', async () => {
      const first = await startServe(env);
      try {
        const migrate = await runOrderpay(['migrate', '--json'], env);
        assert.equal(migrate.code, 0, migrate.stderr);
        assert.deepEqual(parseJsonOutput(migrate.stdout), { applied: [] });
        const second = await startServe(env);
        try {
          assert.notEqual(second.listening.url, first.listening.url);
          for (const server of [first, second]) assert.equal((await fetch(`${server.listening.url}/livez`)).status, 200);
        } finally {
          await stopCleanly(second, target);
        }
      } finally {
        await stopCleanly(first, target);
      }
    });
  } else {
    test('a second server on the same data directory exits 2 while the first runs; commands go through the first', async () => {
      const lockPath = `${target.dataDir}.lock`;
      const first = await startServe(env);
      try {
        assert.equal(readFileSync(lockPath, 'utf8'), String(first.child.pid));
        const inUse = new RegExp(
          `^the embedded database ${escapeRegExp(target.dataDir!)} is in use by another orderpay process \\(pid ${first.child.pid}\\)`,
        );
        const second = await runOrderpay(['serve', '--json'], { ...env, PORT: '0' }, { timeoutMs: 30_000 });
        assert.equal(second.code, 2, second.stderr);
        assert.equal(second.stdout, '');
        assert.match(parseJsonOutput(second.stderr).error as string, inUse);
        // Commands reach the database through the running server (test/cli/commands-while-serving.test.ts).
        for (const [args, output] of [
          [['migrate', '--json'], { applied: [] }],
          [['seed', '--json'], { seeded: false, users: 0, products: 0, orders: 0 }],
        ] as const) {
          const command = await runOrderpay([...args], env, { timeoutMs: 30_000 });
          assert.equal(command.code, 0, `${args.join(' ')}: ${command.stderr}`);
          assert.deepEqual(parseJsonOutput(command.stdout), output);
        }
        // The refused server and the commands left the first one's lock and server alone.
        assert.equal(readFileSync(lockPath, 'utf8'), String(first.child.pid));
        assert.equal((await fetch(`${first.listening.url}/livez`)).status, 200);
      } finally {
        await stopCleanly(first, target);
      }
    });

    test('the lock of a killed process is taken over by the next one', async () => {
      const lockPath = `${target.dataDir}.lock`;
      const crashed = await startServe(env);
      assert.deepEqual(await crashed.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
      assert.equal(readFileSync(lockPath, 'utf8'), String(crashed.child.pid), 'a killed process cannot remove its lock');

      const migrate = await runOrderpay(['migrate', '--json'], env);
      assert.equal(migrate.code, 0, migrate.stderr);
      assert.deepEqual(parseJsonOutput(migrate.stdout), { applied: [] });
      assert.equal(existsSync(lockPath), false);
    });
  }

  test('SIGTERM lets in-flight requests finish, then exits 0', async () => {
    const server = await startServe(env);
    try {
      const token = server.listening.demoTokens[STAFF]!;
      // A burst on separate connections keeps the server busy; the signal goes with the first answer,
      // while the rest are still being served.
      const outcomes = Array.from({ length: 60 }, async () => {
        try {
          const response = await fetch(`${server.listening.url}/v1/orders?pageSize=100`, { headers: { authorization: `Bearer ${token}` } });
          const body = (await response.json()) as Partial<OrderList>;
          return { status: response.status, total: body.meta?.total, at: performance.now() };
        } catch (error) {
          // Refused or closed before the request was read: a clean refusal during shutdown.
          return { status: 0, error: String((error as Error).cause ?? error), at: performance.now() };
        }
      });
      await Promise.race(outcomes);
      const stopped = server.stop('SIGTERM', 10_000);
      const signalledAt = performance.now();
      const results = await Promise.all(outcomes);

      assert.deepEqual(
        results.filter((r) => r.status >= 500),
        [],
        'no request gets a 5xx during shutdown',
      );
      const answered = results.filter((r) => r.status !== 0);
      assert.ok(
        answered.every((r) => r.status === 200 && r.total === seededTotal),
        JSON.stringify(answered),
      );
      assert.ok(
        answered.some((r) => r.at > signalledAt),
        'requests in flight when the signal came were answered',
      );
      assert.deepEqual(await stopped, { code: 0, signal: null });
    } finally {
      await stopCleanly(server, target);
    }
  });
});

describe(`orderpay serve with NODE_ENV=production (${DATABASE_LABEL})`, () => {
  test('an empty database is migrated but not seeded, and no demo tokens are printed', async () => {
    const target = await createTargetDatabase();
    const env = commandEnv(target.env);
    const server = await startServe({ ...env, NODE_ENV: 'production', ORDERPAY_PAYMENT_PROCESSOR: 'simulator' });
    try {
      assert.deepEqual(server.listening.demoTokens, {});
      assert.doesNotMatch(server.stdout(), /eyJ/, 'no token anywhere in the output');
      assert.equal((await fetch(`${server.listening.url}/livez`)).status, 200);
    } finally {
      await stopCleanly(server, target);
    }
    // Nothing was seeded: the demo data goes in now, for the first time.
    const seed = await runOrderpay(['seed', '--json'], env);
    assert.equal(seed.code, 0, seed.stderr);
    assert.equal(parseJsonOutput(seed.stdout).seeded, true);
  });
});
