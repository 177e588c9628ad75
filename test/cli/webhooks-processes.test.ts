// Webhooks at least once, across real `orderpay serve` processes (docs/webhooks.md "Delivery"): a
// process SIGKILLed in the middle of a delivery (before sending, and after the endpoint answered
// but before the answer was recorded), then restarted on the same database; and two processes on
// one PostgreSQL database sharing the deliveries, none sent by both at once. Every delivery a
// receiver gets is verified with `standardwebhooks`.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import type { FailpointName } from '../../src/core/failpoints.ts';
import { UNREACHED_RATE_LIMITS } from '../helpers/app.ts';
import { serverUrl } from '../helpers/db.ts';
import { createOrder, createProduct, createUser } from '../helpers/factories.ts';
import { insertWebhookEndpoint, type Receiver, startReceiver, type TestEndpoint, verifyDelivery } from '../helpers/webhooks.ts';
import {
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  parseJsonOutput,
  runOrderpay,
  startServe,
  withTargetDatabase,
  type Env,
  type ServeProcess,
  type TargetDatabase,
} from './orderpay-process.ts';

// This file's share of the ports, so suites running beside it never collide.
const PORTS = {
  beforeRecord: { serve: [29480, 29481], receiver: 29482 },
  beforeSend: { serve: [29483, 29484], receiver: 29485 },
  shared: { serve: [29486, 29487], receiver: 29488 },
};
const PRICE = 4200;
const ORDERS = 24;

after(cleanUpProcessesAndDatabases);

function serveEnv(target: TargetDatabase, port: number, extra: Env = {}): Env {
  return commandEnv({
    ...target.env,
    NODE_ENV: 'test',
    PORT: String(port),
    ...UNREACHED_RATE_LIMITS,
    ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
    ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '50',
    ...extra,
  });
}

interface Shop {
  endpoint: TestEndpoint;
  customerId: number;
  orderId: number;
  productId: number;
  token: string;
}

/** A migrated database with a customer, a pending order, a product, an endpoint for `events` at the receiver, and a token. */
async function openShop(target: TargetDatabase, receiver: Receiver, events: string[]): Promise<Shop> {
  const shop = await withTargetDatabase(target, async (db) => {
    await migrate(db);
    const user = await createUser(db);
    const order = await createOrder(db, user.id, { price: PRICE, currency: 'EUR' });
    const product = await createProduct(db, { price: PRICE, currency: 'EUR' });
    // Sealed with the key the processes will find in the database (no ORDERPAY_WEBHOOKS_SECRET_KEY).
    const endpoint = await insertWebhookEndpoint(db, loadConfig({ NODE_ENV: 'test' }), { url: receiver.url, enabledEvents: events });
    return { endpoint, customerId: user.id, orderId: order.id, productId: product.id, email: user.email };
  });
  const issued = await runOrderpay(
    ['tokens', 'issue', '--email', shop.email, '--scope', 'orders:write payments:write', '--expires-in', '3600', '--json'],
    commandEnv(target.env),
  );
  assert.equal(issued.code, 0, issued.stderr);
  return { ...shop, token: parseJsonOutput(issued.stdout).access_token as string };
}

async function post(server: ServeProcess, token: string, path: string, body: unknown): Promise<{ status: number; body: string }> {
  const response = await fetch(`${server.listening.url}/v2${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.text() };
}

interface DeliveryState {
  state: string;
  attempts: number;
  leased: boolean;
  recorded: number;
}

async function readDeliveries(db: Db, endpoint: TestEndpoint): Promise<DeliveryState[]> {
  const { rows } = await db.query<DeliveryState>(
    `SELECT d.state, d.attempts, coalesce(d.leased_until > now(), false) AS leased,
            (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id)::int AS recorded
       FROM webhook_deliveries d WHERE d.endpoint_id = $1 ORDER BY d.id`,
    [endpoint.id],
  );
  return rows;
}

/**
 * The process dies at failpoint during the delivery of the order's order.paid; its lease is then
 * aged past its 60 s (what waiting for it would do), and a restarted process delivers it.
 */
async function crashThenRestart(failpoint: FailpointName, ports: { serve: number[]; receiver: number }) {
  const receiver = await startReceiver(ports.receiver);
  try {
    const target = await createTargetDatabase();
    const shop = await openShop(target, receiver, ['order.paid']);
    const [crashPort, restartPort] = ports.serve as [number, number];

    const crashing = await startServe(serveEnv(target, crashPort, { ORDERPAY_FAILPOINTS: `${failpoint}=kill` }));
    const paid = await post(crashing, shop.token, '/payments', { amount: { value: PRICE, currency: 'EUR' }, orderId: shop.orderId });
    assert.equal(paid.status, 201, paid.body);
    assert.deepEqual(await crashing.waitForExit(), { code: null, signal: 'SIGKILL' });
    const beforeRestart = receiver.requests.length;

    // Claimed by the killed process: leased, one attempt counted, none recorded.
    const left = await withTargetDatabase(target, async (db) => {
      const deliveries = await readDeliveries(db, shop.endpoint);
      await db.query(`UPDATE webhook_deliveries SET leased_until = now() - interval '1 second' WHERE endpoint_id = $1`, [shop.endpoint.id]);
      return deliveries;
    });
    assert.deepEqual(left, [{ state: 'pending', attempts: 1, leased: true, recorded: 0 }]);

    // The database is read once the restarted process has stopped (the embedded one admits one
    // process): stopping lets an attempt in flight be recorded first.
    const restarted = await startServe(serveEnv(target, restartPort));
    try {
      await receiver.waitForRequests(beforeRestart + 1, 30_000);
      await sleep(300);
    } finally {
      assert.deepEqual(await restarted.stop(), { code: 0, signal: null }, restarted.stderr());
    }
    const deliveries = await withTargetDatabase(target, (db) => readDeliveries(db, shop.endpoint));
    // Two attempts in the log: the killed process's, lost with its lease, and the one that succeeded.
    assert.deepEqual(deliveries, [{ state: 'succeeded', attempts: 2, leased: false, recorded: 2 }]);
    const events = receiver.requests.map((request) => verifyDelivery(shop.endpoint.secret, request));
    // Each request is the one event, with the same webhook-id every time.
    assert.deepEqual(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size, 1);
    for (const event of events) assert.equal(event.type, 'order.paid');
    return { beforeRestart, total: receiver.requests.length };
  } finally {
    await receiver.close();
  }
}

describe(`webhooks: a process killed mid-delivery, restarted (${DATABASE_LABEL})`, () => {
  test('killed after the endpoint answered, before recording it: delivered again after the restart, with the same webhook-id', async () => {
    const { beforeRestart, total } = await crashThenRestart('webhooks.before-record', PORTS.beforeRecord);
    assert.deepEqual({ beforeRestart, total }, { beforeRestart: 1, total: 2 });
  });

  test('killed after claiming, before sending: delivered once after the restart', async () => {
    const { beforeRestart, total } = await crashThenRestart('webhooks.before-send', PORTS.beforeSend);
    assert.deepEqual({ beforeRestart, total }, { beforeRestart: 0, total: 1 });
  });
});

// Two processes need a database both can open: PostgreSQL. The embedded database admits one
// process, which then does all the work (the same assertions hold).
const sharing = serverUrl ? 'two processes on one PostgreSQL database' : 'one process on the embedded database';

describe(`webhooks: ${sharing}`, () => {
  test(`${ORDERS} orders placed across the processes: every order.created delivered exactly once, never two sends of one event at once`, async () => {
    const inFlight = new Map<string, number>();
    let overlaps = 0;
    // Each answer takes a little while, so two sends of one event would overlap here.
    const receiver = await startReceiver(PORTS.shared.receiver, (request, response) => {
      const id = String(request.headers['webhook-id']);
      inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
      if (inFlight.get(id)! > 1) overlaps++;
      setTimeout(() => {
        inFlight.set(id, inFlight.get(id)! - 1);
        response.writeHead(204).end();
      }, 25);
    });
    const servers: ServeProcess[] = [];
    try {
      const target = await createTargetDatabase();
      const shop = await openShop(target, receiver, ['order.created']);
      const ports = serverUrl ? PORTS.shared.serve : PORTS.shared.serve.slice(0, 1);
      for (const port of ports) servers.push(await startServe(serveEnv(target, port)));

      const placed = await Promise.all(
        Array.from({ length: ORDERS }, (_, i) =>
          post(servers[i % servers.length]!, shop.token, '/orders', { items: [{ productId: shop.productId, qty: 1 }] }),
        ),
      );
      for (const answer of placed) assert.equal(answer.status, 201, answer.body);
      const orderIds = new Set(placed.map((answer) => (JSON.parse(answer.body) as { id: number }).id));

      await receiver.waitForRequests(ORDERS, 60_000);
      // A moment for any second send to show itself; then the processes stop (an attempt in flight
      // is recorded first) and the database is read (the embedded one admits one process).
      await sleep(500);
      const exits = await Promise.all(servers.splice(0).map(async (server) => ({ exit: await server.stop(), stderr: server.stderr() })));
      for (const { exit, stderr } of exits) assert.deepEqual(exit, { code: 0, signal: null }, stderr);
      const events = receiver.requests.map((request) => verifyDelivery(shop.endpoint.secret, request));
      assert.equal(overlaps, 0, 'an event was being sent twice at once');
      assert.equal(receiver.requests.length, ORDERS, 'each event sent once');
      assert.deepEqual(new Set(events.map((e) => e.id)).size, ORDERS);
      assert.deepEqual(new Set(events.map((e) => (e.data as { object: { id: number } }).object.id)), orderIds);
      const deliveries = await withTargetDatabase(target, (db) => readDeliveries(db, shop.endpoint));
      assert.deepEqual(
        deliveries,
        deliveries.map(() => ({ state: 'succeeded', attempts: 1, leased: false, recorded: 1 })),
      );
    } finally {
      const exits = await Promise.all(servers.map((server) => server.stop()));
      await receiver.close();
      assert.deepEqual(
        exits,
        servers.map(() => ({ code: 0, signal: null })),
        servers.map((server) => server.stderr()).join('\n'),
      );
    }
  });
});
