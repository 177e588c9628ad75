// Webhook delivery (docs/webhooks.md "Delivery"), through the real app: events recorded by the
// services are claimed by the app's own dispatcher job, sent to real receivers on 127.0.0.1
// (ports 29440–29459) and verified there with `standardwebhooks`; the deliveries and attempts
// recorded are read back from the database.
import { SYSTEM_ACTOR } from '../../src/core/actor.ts';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { recordEvent } from '../../src/events/events.store.ts';
import { renderEventObject } from '../../src/event-objects.ts';
import { eventRepresentation } from '../../src/events/events.representation.ts';
import { createWebhookDispatcher } from '../../src/webhooks/dispatcher.ts';
import { createSecretBox, generateSigningSecret } from '../../src/webhooks/secrets.ts';
import { createCustomer } from '../helpers/actors.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createProduct } from '../helpers/factories.ts';
import {
  answerLater,
  answerOk,
  eventually,
  insertWebhookEndpoint,
  type ReceivedRequest,
  withEndpoints,
  withReceivers,
  type TestEndpoint,
  verifyDelivery,
} from '../helpers/webhooks.ts';

const ATTEMPT_TIMEOUT_MS = 3000;
const LOST_ATTEMPT_ERROR = 'no outcome recorded: the process sending it stopped, or could not reach the database, before its lease ran out';
// Retries after 1 s, then 2 s (each ±10%): three attempts in all.
const WEBHOOKS = loadConfig({
  NODE_ENV: 'test',
  ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
  ORDERPAY_WEBHOOKS_RETRY_SCHEDULE: '1,2',
  ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '20',
}).webhooks;

let t: TestApp;
before(async () => {
  t = await startTestApp({ webhooks: WEBHOOKS }, undefined, {
    webhookAttemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
    failpoint: (name) => failpoint(name),
  });
});
after(() => t.close());

// The app's failpoint, armed by one test.
let armed: string | undefined;
function failpoint(name: string): void {
  if (name !== armed) return;
  armed = undefined;
  throw new Error(`failpoint ${name}`);
}

interface DeliveryRow {
  id: number;
  event_id: string;
  state: string;
  attempts: number;
  leased: boolean;
  /**
   * Whether its next attempt was set later than its last change (a retry scheduled): against the
   * change, not now(), since on a loaded machine a poll can come after the retry's wait has passed.
   */
  due_later: boolean;
}

async function deliveriesTo(endpoint: TestEndpoint): Promise<DeliveryRow[]> {
  const { rows } = await t.db.query<DeliveryRow>(
    `SELECT id, event_id, state, attempts, leased_until > now() AS leased, next_attempt_at > updated_at AS due_later
       FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id`,
    [endpoint.id],
  );
  return rows;
}

interface AttemptRow {
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  duration_ms: number;
}

async function attemptsOf(deliveryId: number): Promise<AttemptRow[]> {
  const { rows } = await t.db.query<AttemptRow>(
    'SELECT status_code, error, response_body, duration_ms FROM webhook_attempts WHERE delivery_id = $1 ORDER BY id',
    [deliveryId],
  );
  return rows;
}

async function endpointRow(endpoint: TestEndpoint) {
  const { rows } = await t.db.query<{ disabled: boolean; failing_since: string | null; version: number }>(
    'SELECT disabled, failing_since, version FROM webhook_endpoints WHERE id = $1',
    [endpoint.id],
  );
  return rows[0]!;
}

/** Waits until the endpoint's deliveries are all in a final state, or the one given. */
async function settledDeliveries(endpoint: TestEndpoint, count: number, state = 'succeeded'): Promise<DeliveryRow[]> {
  let rows: DeliveryRow[] = [];
  await eventually(async () => {
    rows = await deliveriesTo(endpoint);
    return rows.length === count && rows.every((row) => row.state === state);
  }, `${count} deliveries ${state} to endpoint ${endpoint.id}`);
  return rows;
}

/**
 * The endpoint's deliveries once its first attempt is recorded. They are read after the attempt is
 * seen: the attempt and the delivery's outcome commit together, so a delivery read before it could
 * still be the leased row of the attempt in flight.
 */
async function afterFirstAttempt(endpoint: TestEndpoint): Promise<DeliveryRow[]> {
  await eventually(async () => {
    const [first] = await deliveriesTo(endpoint);
    return first !== undefined && (await attemptsOf(first.id)).length === 1;
  }, 'the first attempt recorded');
  return deliveriesTo(endpoint);
}

/** An event about a new product (product.updated), recorded as the products service records it. */
async function recordProductEvent(): Promise<string> {
  const product = await createProduct(t.db);
  return recordEvent(t.db, 'product.updated', product, SYSTEM_ACTOR);
}

/** Answers every request with the status (and headers). */
const answerStatus = (status: number, headers: Record<string, string> = {}) =>
  function answerWithStatus(_request: ReceivedRequest, response: ServerResponse) {
    response.writeHead(status, headers).end(`status ${status}`);
  };

describe('webhook delivery', () => {
  test('a delivery: Standard Webhooks headers, signed (standardwebhooks verifies it), the event envelope with the order in the endpoint version; recorded as succeeded', async () => {
    await withReceivers([29440, 29441], async ([v1Receiver, v2Receiver]) => {
      const v1 = await insertWebhookEndpoint(t.db, t.config, { url: v1Receiver!.url, enabledEvents: ['order.created'], apiVersion: 1 });
      const v2 = await insertWebhookEndpoint(t.db, t.config, { url: v2Receiver!.url, enabledEvents: ['order.created'], apiVersion: 2 });
      // The receiver's answer is kept in the log: its first KiB.
      v2Receiver!.answer((_request, response) => response.writeHead(200).end('x'.repeat(3000)));
      await withEndpoints(t.db, [v1, v2], async () => {
        const { token } = await createCustomer(t);
        const product = await createProduct(t.db, { price: 1999, currency: 'EUR' });
        const created = await t.request(token, {
          method: 'POST',
          url: '/v2/orders',
          payload: { items: [{ productId: product.id, qty: 2 }] },
        });
        assert.equal(created.statusCode, 201, created.body);
        const orderId = created.json().id as number;
        const { rows: events } = await t.db.query<{ id: string; created_at: string }>(
          "SELECT id, created_at FROM events WHERE type = 'order.created' AND object->>'id' = $1",
          [String(orderId)],
        );
        assert.equal(events.length, 1);
        const event = events[0]!;

        const [toV1] = await v1Receiver!.waitForRequests(1);
        const [toV2] = await v2Receiver!.waitForRequests(1);
        for (const [request, endpoint, version] of [
          [toV1!, v1, 1],
          [toV2!, v2, 2],
        ] as const) {
          assert.equal(request.method, 'POST');
          assert.equal(request.url, '/hooks');
          assert.equal(request.headers['content-type'], 'application/json');
          assert.equal(request.headers['webhook-id'], event.id);
          assert.match(request.headers['webhook-timestamp'] as string, /^\d+$/);
          assert.ok(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
          assert.match(request.headers['webhook-signature'] as string, /^v1,[A-Za-z0-9+/]{43}=$/);
          const body = verifyDelivery(endpoint.secret, request);
          const order = await t.request(token, { method: 'GET', url: `/v${version}/orders/${orderId}` });
          assert.deepEqual(body, { id: event.id, type: 'order.created', createdAt: event.created_at, data: { object: order.json() } });
          // The exact bytes signed are the body sent.
          assert.equal(request.body, JSON.stringify(body));
        }
        // v1 shows an order without its items and with a flat total; v2 embeds them, with money objects.
        assert.equal(typeof (JSON.parse(toV1!.body).data.object.total as unknown), 'number');
        assert.ok(Array.isArray(JSON.parse(toV2!.body).data.object.items));

        const [d1] = await settledDeliveries(v1, 1);
        const [d2] = await settledDeliveries(v2, 1);
        assert.deepEqual({ ...d1!, id: 0 }, { id: 0, event_id: event.id, state: 'succeeded', attempts: 1, leased: null, due_later: false });
        assert.deepEqual(
          (await attemptsOf(d1!.id)).map(({ duration_ms: _d, ...a }) => a),
          [{ status_code: 200, error: null, response_body: 'ok' }],
        );
        const [attempt] = await attemptsOf(d2!.id);
        assert.equal(attempt!.status_code, 200);
        assert.equal(attempt!.response_body, 'x'.repeat(1024));
        assert.equal((await endpointRow(v1)).failing_since, null);
        assert.equal(v1Receiver!.requests.length, 1);
        assert.equal(v2Receiver!.requests.length, 1);

        const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
        assert.match(metrics.body, /^orderpay_webhook_attempts_total\{outcome="succeeded",endpoint_state="healthy"\} [1-9]\d*$/m);
      });
    });
  });

  test("500, then 2xx: retried after the schedule's wait with the same webhook-id; the endpoint failing meanwhile, then not", async () => {
    await withReceivers([29442], async ([receiver]) => {
      receiver!.answer(answerStatus(500));
      const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver!.url });
      await withEndpoints(t.db, [endpoint], async () => {
        const eventId = await recordProductEvent();
        await receiver!.waitForRequests(1);
        receiver!.answer(answerOk);
        await eventually(async () => (await endpointRow(endpoint)).failing_since !== null, 'the endpoint marked failing');
        const [delivery] = await settledDeliveries(endpoint, 1);
        assert.equal(delivery!.attempts, 2);
        const [first, second] = receiver!.requests;
        assert.equal(receiver!.requests.length, 2);
        for (const request of [first!, second!]) {
          assert.equal(request.headers['webhook-id'], eventId);
          assert.equal((verifyDelivery(endpoint.secret, request) as { id: string }).id, eventId);
        }
        // The schedule's first wait: 1 s ± 10%.
        const waited = second!.at - first!.at;
        assert.ok(waited >= 850 && waited < 2500, `retried after ${waited} ms`);
        assert.deepEqual(
          (await attemptsOf(delivery!.id)).map((a) => [a.status_code, a.error, a.response_body]),
          [
            [500, null, 'status 500'],
            [200, null, 'ok'],
          ],
        );
        assert.equal((await endpointRow(endpoint)).failing_since, null);
      });
    });
  });

  test('no answer within the attempt timeout: recorded as timed out, and retried', async () => {
    await withReceivers([29443], async ([receiver]) => {
      // Never answers (the receiver closes the connection when the test ends).
      receiver!.answer(() => undefined);
      const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver!.url });
      await withEndpoints(t.db, [endpoint], async () => {
        const eventId = await recordProductEvent();
        await receiver!.waitForRequests(1);
        receiver!.answer(answerOk);
        const [delivery] = await settledDeliveries(endpoint, 1);
        const attempts = await attemptsOf(delivery!.id);
        assert.equal(attempts.length, 2);
        assert.equal(attempts[0]!.status_code, null);
        assert.equal(attempts[0]!.error, `timed out: no response within ${ATTEMPT_TIMEOUT_MS} ms`);
        assert.ok(attempts[0]!.duration_ms >= ATTEMPT_TIMEOUT_MS - 5 && attempts[0]!.duration_ms < ATTEMPT_TIMEOUT_MS + 1000);
        assert.equal(attempts[1]!.status_code, 200);
        assert.deepEqual(
          receiver!.requests.map((r) => r.headers['webhook-id']),
          [eventId, eventId],
        );
      });
    });
  });

  test('connection refused: the attempt recorded with the error, the delivery retried later', async () => {
    // Nothing listens on 29444.
    const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: 'http://127.0.0.1:29444/hooks' });
    await withEndpoints(t.db, [endpoint], async () => {
      await recordProductEvent();
      const rows = await afterFirstAttempt(endpoint);
      assert.equal(rows[0]!.attempts, 1);
      assert.equal(rows[0]!.state, 'pending');
      assert.equal(rows[0]!.due_later, true);
      assert.equal(rows[0]!.leased, null);
      const [attempt] = await attemptsOf(rows[0]!.id);
      assert.equal(attempt!.status_code, null);
      assert.match(attempt!.error!, /ECONNREFUSED/);
      assert.notEqual((await endpointRow(endpoint)).failing_since, null);
    });
  });

  test('a redirect is a failure and is not followed', async () => {
    await withReceivers([29445, 29446], async ([redirecting, target]) => {
      redirecting!.answer(answerStatus(307, { location: target!.url }));
      const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: redirecting!.url });
      await withEndpoints(t.db, [endpoint], async () => {
        await recordProductEvent();
        await redirecting!.waitForRequests(1);
        const rows = await afterFirstAttempt(endpoint);
        assert.equal(rows[0]!.state, 'pending');
        assert.equal(rows[0]!.due_later, true);
        assert.equal((await attemptsOf(rows[0]!.id))[0]!.status_code, 307);
        assert.equal(target!.requests.length, 0);
      });
    });
  });

  test('the schedule used up: failed after 1 + 2 attempts, all with the same webhook-id, spaced by the schedule', async () => {
    await withReceivers([29447], async ([receiver]) => {
      receiver!.answer(answerStatus(503));
      const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver!.url });
      await withEndpoints(t.db, [endpoint], async () => {
        const eventId = await recordProductEvent();
        const [delivery] = await settledDeliveries(endpoint, 1, 'failed');
        assert.equal(delivery!.attempts, 3);
        assert.equal(delivery!.leased, null);
        assert.deepEqual(
          (await attemptsOf(delivery!.id)).map((a) => a.status_code),
          [503, 503, 503],
        );
        const [first, second, third] = receiver!.requests;
        assert.equal(receiver!.requests.length, 3);
        for (const request of receiver!.requests) assert.equal(verifyDelivery(endpoint.secret, request).id, eventId);
        const waits = [second!.at - first!.at, third!.at - second!.at];
        assert.ok(waits[0]! >= 850 && waits[0]! < 2500, `first wait ${waits[0]} ms`);
        assert.ok(waits[1]! >= 1750 && waits[1]! < 3500, `second wait ${waits[1]} ms`);
        // Failed for good: not tried again.
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(receiver!.requests.length, 3);
      });
    });
  });

  test('a slow endpoint holds up only its own deliveries: at most 16 in flight to it, the others delivered meanwhile', async () => {
    await withReceivers([29448, 29449], async ([slow, fast]) => {
      const held: Array<() => void> = [];
      slow!.answer((_request, response) => held.push(() => response.writeHead(200).end('late')));
      const slowEndpoint = await insertWebhookEndpoint(t.db, t.config, { url: slow!.url, enabledEvents: ['product.updated'] });
      await withEndpoints(t.db, [slowEndpoint], async () => {
        for (let i = 0; i < 18; i++) await recordProductEvent();
        await slow!.waitForRequests(16);
        const fastEndpoint = await insertWebhookEndpoint(t.db, t.config, { url: fast!.url, enabledEvents: ['product.created'] });
        await withEndpoints(t.db, [fastEndpoint], async () => {
          const product = await createProduct(t.db);
          const started = performance.now();
          for (let i = 0; i < 3; i++) await recordEvent(t.db, 'product.created', product, SYSTEM_ACTOR);
          await fast!.waitForRequests(3, ATTEMPT_TIMEOUT_MS / 2);
          assert.ok(performance.now() - started < ATTEMPT_TIMEOUT_MS / 2);
          await settledDeliveries(fastEndpoint, 3);
          // Meanwhile the slow endpoint got no more than its 16.
          assert.equal(slow!.requests.length, 16);
          for (const answer of held.splice(0)) answer();
          slow!.answer(answerOk);
          const deliveries = await settledDeliveries(slowEndpoint, 18);
          assert.ok(deliveries.every((d) => d.attempts === 1));
          assert.equal(slow!.requests.length, 18);
        });
      });
    });
  });

  test('failing everything for 5 days disables the endpoint; webhook_endpoint.disabled goes to the endpoints subscribed, without secrets', async () => {
    await withReceivers([29450, 29451], async ([failing, watching]) => {
      failing!.answer(answerStatus(500));
      const endpoint = await insertWebhookEndpoint(t.db, t.config, {
        url: failing!.url,
        enabledEvents: ['product.updated'],
        previousSecret: generateSigningSecret(),
        previousSecretExpiresAt: new Date(Date.now() + 3_600_000),
      });
      const watcher = await insertWebhookEndpoint(t.db, t.config, { url: watching!.url, enabledEvents: ['webhook_endpoint.disabled'] });
      await withEndpoints(t.db, [endpoint, watcher], async () => {
        // Failing for 4 days: one more failure does not disable it.
        await t.db.query("UPDATE webhook_endpoints SET failing_since = now() - interval '4 days' WHERE id = $1", [endpoint.id]);
        await recordProductEvent();
        await failing!.waitForRequests(1);
        await eventually(async () => (await deliveriesTo(endpoint))[0]?.leased === null, 'the first attempt recorded');
        assert.equal((await endpointRow(endpoint)).disabled, false);

        // Failing for 5 days and a minute: the next failure disables it.
        await t.db.query("UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1", [endpoint.id]);
        await recordProductEvent();
        await failing!.waitForRequests(2);
        await eventually(async () => (await endpointRow(endpoint)).disabled, 'the endpoint disabled');
        const row = await endpointRow(endpoint);
        assert.equal(row.version, 2);
        const { rows: reasons } = await t.db.query<{ reason: string | null }>(
          'SELECT disabled_reason AS reason FROM webhook_endpoints WHERE id = $1',
          [endpoint.id],
        );
        assert.equal(reasons[0]!.reason, 'failing');

        const [notice] = await watching!.waitForRequests(1);
        const body = verifyDelivery(watcher.secret, notice!) as { type: string; data: { object: Record<string, unknown> } };
        assert.equal(body.type, 'webhook_endpoint.disabled');
        const object = body.data.object;
        assert.equal(object.id, endpoint.id);
        assert.equal(object.url, failing!.url);
        assert.equal(object.disabled, true);
        assert.deepEqual(object.enabledEvents, ['product.updated']);
        assert.equal(object.failingSince, row.failing_since);
        assert.equal(object.disabledReason, 'failing');
        // An event records the endpoint's settings, not its traffic: no backlog.
        assert.equal(object.backlog, null);
        assert.equal(object.lastSucceededAt, null);
        // The endpoint as GET /webhook-endpoints/{id} shows it (src/webhooks/endpoints.representation.ts).
        assert.deepEqual(Object.keys(object).sort(), [
          'apiVersion',
          'backlog',
          'createdAt',
          'description',
          'disabled',
          'disabledReason',
          'enabledEvents',
          'failingSince',
          'id',
          'lastSucceededAt',
          'previousSecretExpiresAt',
          'updatedAt',
          'url',
        ]);
        assert.doesNotMatch(notice!.body, /whsec_|"v1\./);

        // Disabled: neither its pending retries nor new events reach it.
        await eventually(async () => (await deliveriesTo(endpoint)).every((d) => d.leased === null), 'no attempt in flight');
        const requestsSoFar = failing!.requests.length;
        await recordProductEvent();
        assert.equal((await deliveriesTo(endpoint)).length, 2, 'no delivery of later events to a disabled endpoint');
        await new Promise((resolve) => setTimeout(resolve, 2500));
        assert.equal(failing!.requests.length, requestsSoFar);
      });
    });
  });

  test('after a rotation both secrets sign until the previous one expires; then only the new one', async () => {
    await withReceivers([29452], async ([receiver]) => {
      const previous = generateSigningSecret();
      const endpoint = await insertWebhookEndpoint(t.db, t.config, {
        url: receiver!.url,
        previousSecret: previous,
        previousSecretExpiresAt: new Date(Date.now() + 24 * 3_600_000),
      });
      await withEndpoints(t.db, [endpoint], async () => {
        await recordProductEvent();
        const [during] = await receiver!.waitForRequests(1);
        assert.equal((during!.headers['webhook-signature'] as string).split(' ').length, 2);
        verifyDelivery(endpoint.secret, during!);
        verifyDelivery(previous, during!);

        await t.db.query("UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1", [
          endpoint.id,
        ]);
        await recordProductEvent();
        const [, afterwards] = await receiver!.waitForRequests(2);
        assert.equal((afterwards!.headers['webhook-signature'] as string).split(' ').length, 1);
        verifyDelivery(endpoint.secret, afterwards!);
        assert.throws(() => verifyDelivery(previous, afterwards!), /No matching signature/);
        await settledDeliveries(endpoint, 2);
      });
    });
  });

  test('at least once: a process stopped after the endpoint answered leaves its lease; once it runs out the attempt is logged as lost and the delivery sent again, same webhook-id', async () => {
    await withReceivers([29453], async ([receiver]) => {
      const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver!.url });
      await withEndpoints(t.db, [endpoint], async () => {
        // No attempt of another test in flight: the failpoint stops this delivery's.
        await eventually(
          async () => (await t.db.query('SELECT 1 FROM webhook_deliveries WHERE leased_until > now()')).rowCount === 0,
          'no attempt in flight',
        );
        armed = 'webhooks.before-record';
        const eventId = await recordProductEvent();
        await receiver!.waitForRequests(1);
        // The attempt was never recorded: the lease holds the delivery, nobody sends it meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 300));
        const [held] = await deliveriesTo(endpoint);
        assert.deepEqual(
          { state: held!.state, attempts: held!.attempts, leased: held!.leased },
          { state: 'pending', attempts: 1, leased: true },
        );
        assert.deepEqual(await attemptsOf(held!.id), []);
        assert.equal(receiver!.requests.length, 1);

        // The lease runs out (as 60 s after a crash).
        await t.db.query("UPDATE webhook_deliveries SET leased_until = now() - interval '1 second' WHERE id = $1", [held!.id]);
        const [delivery] = await settledDeliveries(endpoint, 1);
        assert.equal(delivery!.attempts, 2);
        assert.deepEqual(
          receiver!.requests.map((r) => verifyDelivery(endpoint.secret, r).id),
          [eventId, eventId],
        );
        // The attempt whose lease ran out is in the log as lost, then the one that succeeded.
        assert.deepEqual(
          (await attemptsOf(delivery!.id)).map((a) => [a.status_code, a.error, a.response_body]),
          [
            [null, LOST_ATTEMPT_ERROR, null],
            [200, null, 'ok'],
          ],
        );
      });
    });
  });

  test('several dispatchers share the work: every delivery sent once, never more than 16 at once to an endpoint', async () => {
    await withReceivers([29454], async ([receiver]) => {
      const later = answerLater(40);
      receiver!.answer(later.answer);
      const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver!.url });
      // Two more dispatchers beside the app's own, as other processes would run them.
      const others = [1, 2].map(() =>
        createWebhookDispatcher({
          db: t.db,
          secrets: createSecretBox(t.db, t.config.webhooks.secretKey),
          renderEvent: (event, apiVersion) => eventRepresentation(event, apiVersion, renderEventObject, false),
          retryScheduleSeconds: WEBHOOKS.retryScheduleSeconds,
          allowPrivate: true,
          maxRatePerEndpoint: WEBHOOKS.maxRatePerEndpoint,
          log: { debug: () => undefined, warn: () => undefined, error: () => undefined },
        }),
      );
      const errors: unknown[] = [];
      const timers = others.map((dispatcher) =>
        setInterval(() => {
          dispatcher.dispatchDue().then(
            () => undefined,
            (error: unknown) => errors.push(error),
          );
        }, 5),
      );
      try {
        await withEndpoints(t.db, [endpoint], async () => {
          const eventIds: string[] = [];
          for (let i = 0; i < 40; i++) eventIds.push(await recordProductEvent());
          await settledDeliveries(endpoint, 40);
          const received = receiver!.requests.map((r) => verifyDelivery(endpoint.secret, r).id as string);
          assert.deepEqual(received.toSorted(), eventIds.toSorted());
          assert.ok(later.most() <= 16, `${later.most()} in flight at once`);
          assert.deepEqual(errors, []);
          // Which of the dispatchers (these and the app's own) claims what is up to timing: on a
          // loaded machine one may take all. What holds is above: each delivery sent once, at most 16 at once.
        });
      } finally {
        for (const timer of timers) clearInterval(timer);
        await Promise.all(others.map((dispatcher) => dispatcher.stop()));
      }
    });
  });
});
