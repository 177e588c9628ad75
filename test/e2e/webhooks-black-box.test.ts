// Webhooks as an integrator meets them, black-box: a real `orderpay serve` process, endpoints
// registered through the API (one pinned to v1, one to v2), an order placed and paid by a
// customer; receivers on 127.0.0.1 get order.created, payment.succeeded and order.paid, each
// verified with `standardwebhooks` under the secret the API showed once, each object exactly as a
// GET in the endpoint's version shows it. Then a rotation: both secrets sign for 24 hours.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  parseJsonOutput,
  runOrderpay,
  startServe,
  type Env,
  type ServeProcess,
} from '../cli/orderpay-process.ts';
import { UNREACHED_RATE_LIMITS } from '../helpers/app.ts';
import { type ReceivedRequest, type Receiver, startReceiver, verifyDelivery } from '../helpers/webhooks.ts';

// This file's share of the ports.
const PORTS = { serve: 29490, v1Receiver: 29491, v2Receiver: 29492, rotation: 29493 };

let server: ServeProcess;
let env: Env;
let staffToken: string;
let customerToken: string;
const receivers: Receiver[] = [];

async function issueToken(email: string, scope: string): Promise<string> {
  const issued = await runOrderpay(
    ['tokens', 'issue', '--email', email, '--scope', scope, '--expires-in', '3600', '--json'],
    commandEnv(env),
  );
  assert.equal(issued.code, 0, issued.stderr);
  return parseJsonOutput(issued.stdout).access_token as string;
}

before(async () => {
  const target = await createTargetDatabase();
  env = {
    ...target.env,
    ORDERPAY_SEED_ON_EMPTY: 'true',
    ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
    ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '50',
  };
  server = await startServe(commandEnv({ ...env, NODE_ENV: 'development', PORT: String(PORTS.serve), ...UNREACHED_RATE_LIMITS }));
  // The seeded demo users (docs/api.md): a staff member and a customer.
  staffToken = await issueToken('staff@example.com', 'webhooks:read webhooks:write events:read orders:read payments:read');
  customerToken = await issueToken('alice@example.com', 'orders:read orders:write payments:read payments:write');
});
after(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  if (server) assert.deepEqual(await server.stop(), { code: 0, signal: null }, server.stderr());
  await cleanUpProcessesAndDatabases();
});

async function call(
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${server.listening.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

interface Registered {
  id: number;
  secret: string;
  receiver: Receiver;
}

async function registerEndpoint(version: 1 | 2, port: number): Promise<Registered> {
  const receiver = await startReceiver(port);
  receivers.push(receiver);
  const created = await call('POST', `/v${version}/webhook-endpoints`, staffToken, {
    url: receiver.url,
    enabledEvents: ['order.created', 'order.paid', 'payment.succeeded'],
    apiVersion: version,
    description: `integration v${version}`,
  });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  assert.match(String(created.json.secret), /^whsec_[A-Za-z0-9+/]+=*$/);
  return { id: created.json.id as number, secret: String(created.json.secret), receiver };
}

/** The deliveries a receiver got, verified, by event type. */
function eventsByType(endpoint: Registered, requests: ReceivedRequest[]): Map<string, Record<string, unknown>> {
  const byType = new Map<string, Record<string, unknown>>();
  for (const request of requests) {
    const event = verifyDelivery(endpoint.secret, request);
    assert.equal(request.headers['webhook-id'], event.id, 'webhook-id is the event id');
    byType.set(String(event.type), event);
  }
  return byType;
}

describe(`webhooks, black-box (${DATABASE_LABEL})`, () => {
  test('an order placed and paid reaches each endpoint as order.created, payment.succeeded and order.paid, signed, in its API version', async () => {
    const v1 = await registerEndpoint(1, PORTS.v1Receiver);
    const v2 = await registerEndpoint(2, PORTS.v2Receiver);

    const products = await call('GET', '/v2/products?active=true', customerToken);
    const product = (products.json.data as { id: number; price: { value: number; currency: string } }[])[0]!;
    const placed = await call('POST', '/v2/orders', customerToken, { items: [{ productId: product.id, qty: 2 }] });
    assert.equal(placed.status, 201, JSON.stringify(placed.json));
    const order = placed.json as { id: number; total: { value: number; currency: string } };
    const paid = await call('POST', '/v2/payments', customerToken, { amount: order.total, orderId: order.id });
    assert.equal(paid.status, 201, JSON.stringify(paid.json));
    const payment = paid.json as { id: number };

    for (const [version, endpoint] of [
      [1, v1],
      [2, v2],
    ] as const) {
      const requests = await endpoint.receiver.waitForRequests(3, 30_000);
      const events = eventsByType(endpoint, requests);
      assert.deepEqual([...events.keys()].sort(), ['order.created', 'order.paid', 'payment.succeeded']);
      // Each object as a GET of the staff in the endpoint's version shows it (at the event's moment).
      const orderNow = (await call('GET', `/v${version}/orders/${order.id}`, staffToken)).json;
      const paymentNow = (await call('GET', `/v${version}/payments/${payment.id}`, staffToken)).json;
      assert.deepEqual((events.get('order.paid')!.data as { object: unknown }).object, orderNow);
      assert.deepEqual((events.get('payment.succeeded')!.data as { object: unknown }).object, paymentNow);
      const created = (events.get('order.created')!.data as { object: Record<string, unknown> }).object;
      assert.deepEqual({ ...created, status: 'paid', updatedAt: orderNow.updatedAt }, orderNow);
      assert.equal(created.status, 'pending');
      // Each delivery is the event as GET /events/{id} shows it in the same version.
      for (const event of events.values()) {
        const listed = await call('GET', `/v${version}/events/${String(event.id)}`, staffToken);
        assert.equal(listed.status, 200, JSON.stringify(listed.json));
        assert.deepEqual(listed.json, event);
      }
    }
    // v1 shows money flat and no items; v2 money objects and the items.
    const v1Order = (eventsByType(v1, v1.receiver.requests).get('order.paid')!.data as { object: Record<string, unknown> }).object;
    const v2Order = (eventsByType(v2, v2.receiver.requests).get('order.paid')!.data as { object: Record<string, unknown> }).object;
    assert.equal(v1Order.total, order.total.value);
    assert.equal(v1Order.currency, order.total.currency);
    assert.ok(!('items' in v1Order));
    assert.deepEqual(v2Order.total, order.total);
    assert.equal((v2Order.items as unknown[]).length, 1);
  });

  test('after a rotation, a ping is signed by the new secret and the old one (24 hours), each verifiable alone', async () => {
    const endpoint = await registerEndpoint(2, PORTS.rotation);
    const rotated = await call('POST', `/v2/webhook-endpoints/${endpoint.id}/secret-rotations`, staffToken, {});
    assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
    const newSecret = String(rotated.json.secret);
    assert.notEqual(newSecret, endpoint.secret);
    const pinged = await call('POST', `/v2/webhook-endpoints/${endpoint.id}/pings`, staffToken, {});
    assert.equal(pinged.status, 202, JSON.stringify(pinged.json));
    const [ping] = await endpoint.receiver.waitForRequests(1, 30_000);
    const signatures = String(ping!.headers['webhook-signature']).split(' ');
    assert.equal(signatures.length, 2);
    for (const secret of [endpoint.secret, newSecret]) {
      const event = new Webhook(secret).verify(ping!.body, ping!.headers as Record<string, string>) as {
        type: string;
        data: { object: object };
      };
      assert.equal(event.type, 'webhook_endpoint.ping');
      assert.ok(!JSON.stringify(event).includes('whsec_'), 'a ping never carries a secret');
    }
    assert.throws(() =>
      new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(ping!.body, ping!.headers as Record<string, string>),
    );
  });
});
