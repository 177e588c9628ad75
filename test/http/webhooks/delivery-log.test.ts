// An endpoint's delivery log, newest first with its attempts embedded; an event sent again; a ping.
// Each answers for the endpoint in its path only: another endpoint's deliveries never show.
import { SYSTEM_ACTOR } from '../../../src/core/actor.ts';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { renderEventObject } from '../../../src/event-objects.ts';
import { recordEvent } from '../../../src/events/events.store.ts';
import { PUBLIC_URL, startTestApp, type TestApp } from '../../helpers/app.ts';
import { expectProblem, pagingLinks } from '../../helpers/problems.ts';
import {
  type CreatedEndpoint,
  JSON_TYPE,
  MISSING_ID,
  recordAttempt,
  registerEndpoint,
  send,
  storedDeliveries,
  storedEndpoint,
  TIMESTAMP,
  webhookStaffToken,
  webhookTestConfig,
} from './webhooks.ts';
import { EMPTY_FIRST_PAGE_META } from '../../helpers/paging.ts';

let t: TestApp;

let token: string;
/** Subscribes to everything. */
let all: CreatedEndpoint;
/** Subscribes to order.paid only. */
let paidOnly: CreatedEndpoint;
/** Disabled: no event reaches it. */
let off: CreatedEndpoint;
let created: { eventId: string; deliveryId: number };
let paid: { eventId: string; deliveryId: number; paidOnlyDeliveryId: number };

const LONG_BODY = `{"ok":true,"pad":"${'x'.repeat(2000)}"}`;

async function deliveryOf(endpointId: number, eventId: string): Promise<number> {
  const [delivery] = await storedDeliveries(t.db, 'endpoint_id = $1 AND event_id = $2', [endpointId, eventId]);
  return delivery!.id;
}

before(async () => {
  t = await startTestApp(webhookTestConfig());
  token = await webhookStaffToken(t);
  all = await registerEndpoint(t, token);
  paidOnly = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
  off = await registerEndpoint(t, token, { disabled: true });
  const createdId = await t.db.transaction((tx) => recordEvent(tx, 'order.created', { id: 1, status: 'pending' }, SYSTEM_ACTOR));
  const paidId = await t.db.transaction((tx) => recordEvent(tx, 'order.paid', { id: 1, status: 'paid' }, SYSTEM_ACTOR));
  created = { eventId: createdId, deliveryId: await deliveryOf(all.id, createdId) };
  paid = { eventId: paidId, deliveryId: await deliveryOf(all.id, paidId), paidOnlyDeliveryId: await deliveryOf(paidOnly.id, paidId) };
  // The dispatcher's work, as it records it: a 500, then a 200 with a long body.
  await recordAttempt(
    t.db,
    created.deliveryId,
    { statusCode: 500, durationMs: 31, error: 'HTTP 500', responseBody: 'upstream down' },
    { state: 'pending' },
  );
  await recordAttempt(
    t.db,
    created.deliveryId,
    { statusCode: 200, durationMs: 12, error: null, responseBody: LONG_BODY },
    { state: 'succeeded' },
  );
  await recordAttempt(
    t.db,
    paid.paidOnlyDeliveryId,
    { statusCode: null, durationMs: 10_000, error: 'timed out after 10000 ms', responseBody: null },
    { state: 'pending' },
  );
});
after(() => t.close());

interface ShownDelivery {
  id: number;
  endpointId: number;
  eventId: string;
  eventType: string;
  state: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  attempts: { attemptedAt: string; statusCode: number | null; durationMs: number; error: string | null; responseBody: string | null }[];
  createdAt: string;
  updatedAt: string;
}

describe('GET /webhook-endpoints/{id}/deliveries', () => {
  test("the endpoint's deliveries, newest first, each with its attempts oldest first; a response body cut at 1 KiB", async () => {
    const res = await send(t, 'GET', await webhookStaffToken(t, ['webhooks:read']), `/webhook-endpoints/${all.id}/deliveries`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'private, no-cache');
    const body = res.json() as { data: ShownDelivery[]; meta: unknown };
    assert.deepEqual(body.meta, { total: 2, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null });
    const [newest, oldest] = body.data;
    assert.deepEqual(newest, {
      id: paid.deliveryId,
      endpointId: all.id,
      eventId: paid.eventId,
      eventType: 'order.paid',
      state: 'pending',
      attemptCount: 0,
      nextAttemptAt: newest!.nextAttemptAt,
      attempts: [],
      createdAt: newest!.createdAt,
      updatedAt: newest!.updatedAt,
    });
    assert.match(newest!.nextAttemptAt!, TIMESTAMP);
    assert.deepEqual(oldest, {
      id: created.deliveryId,
      endpointId: all.id,
      eventId: created.eventId,
      eventType: 'order.created',
      state: 'succeeded',
      attemptCount: 2,
      nextAttemptAt: null,
      attempts: [
        {
          attemptedAt: oldest!.attempts[0]!.attemptedAt,
          statusCode: 500,
          durationMs: 31,
          error: 'HTTP 500',
          responseBody: 'upstream down',
        },
        {
          attemptedAt: oldest!.attempts[1]!.attemptedAt,
          statusCode: 200,
          durationMs: 12,
          error: null,
          responseBody: LONG_BODY.slice(0, 1024),
        },
      ],
      createdAt: oldest!.createdAt,
      updatedAt: oldest!.updatedAt,
    });
    for (const attempt of oldest!.attempts) assert.match(attempt.attemptedAt, TIMESTAMP);
  });

  test("another endpoint's log shows only its own deliveries", async () => {
    const res = await send(t, 'GET', token, `/webhook-endpoints/${paidOnly.id}/deliveries`);
    const body = res.json() as { data: ShownDelivery[]; meta: { total: number } };
    assert.deepEqual(
      body.data.map((d) => [d.id, d.endpointId, d.eventType, d.state, d.attemptCount]),
      [[paid.paidOnlyDeliveryId, paidOnly.id, 'order.paid', 'pending', 1]],
    );
    assert.deepEqual(body.data[0]!.attempts, [
      {
        attemptedAt: body.data[0]!.attempts[0]!.attemptedAt,
        statusCode: null,
        durationMs: 10_000,
        error: 'timed out after 10000 ms',
        responseBody: null,
      },
    ]);
    assert.equal(body.meta.total, 1);
    const disabled = await send(t, 'GET', token, `/webhook-endpoints/${off.id}/deliveries`);
    assert.deepEqual(disabled.json(), {
      data: [],
      meta: EMPTY_FIRST_PAGE_META,
    });
  });

  test('filters state and eventId; pages with Link; unknown or malformed parameters → 400', async () => {
    const url = `/webhook-endpoints/${all.id}/deliveries`;
    const ids = async (query: string) => ((await send(t, 'GET', token, `${url}?${query}`)).json().data as ShownDelivery[]).map((d) => d.id);
    assert.deepEqual(await ids('state=succeeded'), [created.deliveryId]);
    assert.deepEqual(await ids('state=pending'), [paid.deliveryId]);
    assert.deepEqual(await ids('state=failed'), []);
    assert.deepEqual(await ids(`eventId=${paid.eventId}`), [paid.deliveryId]);
    assert.deepEqual(await ids(`eventId=${paid.eventId}&state=succeeded`), []);
    const paged = await send(t, 'GET', token, `${url}?pageSize=1&page=2`);
    assert.deepEqual(
      (paged.json().data as ShownDelivery[]).map((d) => d.id),
      [created.deliveryId],
    );
    assert.equal(
      pagingLinks(paged),
      [
        `<${PUBLIC_URL}${url}?pageSize=1&page=1>; rel="first"`,
        `<${PUBLIC_URL}${url}?pageSize=1&before=${paged.json().meta.prevCursor}>; rel="prev"`,
        `<${PUBLIC_URL}${url}?pageSize=1&page=2>; rel="last"`,
      ].join(', '),
    );
    const back = await send(t, 'GET', token, `${url}?pageSize=1&before=${paged.json().meta.prevCursor}`);
    assert.deepEqual(
      (back.json().data as ShownDelivery[]).map((d) => d.id),
      [paid.deliveryId],
    );
    const unknown = 'query parameter "sort" is not supported by this collection';
    expectProblem(await send(t, 'GET', token, `${url}?sort=id`), 400, 'QUERY_UNKNOWN_PARAMETER', url, unknown, {
      errors: [{ parameter: 'sort', detail: unknown }],
    });
    const state = 'query parameter "state" must be equal to one of the allowed values';
    expectProblem(await send(t, 'GET', token, `${url}?state=lost`), 400, 'REQUEST_PARAMETER_INVALID', url, state, {
      errors: [{ parameter: 'state', detail: state }],
    });
  });
});

describe('GET /webhook-endpoints/{id}/deliveries/{deliveryId}', () => {
  test('one delivery of the endpoint, with its attempts', async () => {
    const res = await send(t, 'GET', token, `/webhook-endpoints/${paidOnly.id}/deliveries/${paid.paidOnlyDeliveryId}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'private, no-cache');
    const listed = (await send(t, 'GET', token, `/webhook-endpoints/${paidOnly.id}/deliveries`)).json().data[0];
    assert.deepEqual(res.json(), listed);
  });

  test("another endpoint's delivery → 404 WEBHOOK_DELIVERY_NOT_FOUND, exactly like a missing one", async () => {
    for (const [endpointId, deliveryId] of [
      [all.id, paid.paidOnlyDeliveryId],
      [paidOnly.id, created.deliveryId],
      [all.id, MISSING_ID],
    ]) {
      const url = `/webhook-endpoints/${endpointId}/deliveries/${deliveryId}`;
      expectProblem(
        await send(t, 'GET', token, url),
        404,
        'WEBHOOK_DELIVERY_NOT_FOUND',
        url,
        `Webhook endpoint ${endpointId} has no delivery ${deliveryId}.`,
      );
    }
  });
});

describe('POST /webhook-endpoints/{id}/deliveries (send an event again)', () => {
  test('→ 202 with a new pending delivery of the same event and its Location; the log shows it first', async () => {
    const url = `/webhook-endpoints/${all.id}/deliveries`;
    const res = await send(t, 'POST', token, url, { eventId: created.eventId });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'no-store');
    const delivery = res.json() as ShownDelivery;
    assert.equal(res.headers.location, `${PUBLIC_URL}${url}/${delivery.id}`);
    assert.notEqual(delivery.id, created.deliveryId);
    assert.deepEqual(delivery, {
      id: delivery.id,
      endpointId: all.id,
      eventId: created.eventId,
      eventType: 'order.created',
      state: 'pending',
      attemptCount: 0,
      nextAttemptAt: delivery.nextAttemptAt,
      attempts: [],
      createdAt: delivery.createdAt,
      updatedAt: delivery.createdAt,
    });
    assert.match(delivery.nextAttemptAt!, TIMESTAMP);
    assert.deepEqual(await storedDeliveries(t.db, 'event_id = $1', [created.eventId]), [
      { id: created.deliveryId, endpointId: all.id, eventId: created.eventId, state: 'succeeded', attempts: 2 },
      { id: delivery.id, endpointId: all.id, eventId: created.eventId, state: 'pending', attempts: 0 },
    ]);
    const log = (await send(t, 'GET', token, url)).json().data as ShownDelivery[];
    assert.deepEqual(log[0], delivery);
    assert.deepEqual((await send(t, 'GET', token, new URL(res.headers.location as string).pathname)).json(), delivery);
  });

  test('an event the endpoint was sent before may be sent again after it stopped subscribing to its type', async () => {
    const put = await send(t, 'PUT', token, `/webhook-endpoints/${paidOnly.id}`, {
      url: paidOnly.url,
      enabledEvents: ['order.created'],
      apiVersion: 2,
      description: '',
      disabled: false,
    });
    assert.equal(put.statusCode, 200, put.body);
    const res = await send(t, 'POST', token, `/webhook-endpoints/${paidOnly.id}/deliveries`, { eventId: paid.eventId });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual([res.json().endpointId, res.json().eventId], [paidOnly.id, paid.eventId]);
  });

  test('an event of a type the endpoint does not subscribe to, never sent to it → 422; nothing written', async () => {
    const other = await registerEndpoint(t, token, { enabledEvents: ['refund.succeeded'] });
    const url = `/webhook-endpoints/${other.id}/deliveries`;
    expectProblem(
      await send(t, 'POST', token, url, { eventId: created.eventId }),
      422,
      'WEBHOOK_EVENT_NOT_SUBSCRIBED',
      url,
      `Event ${created.eventId} is of type order.created, which the endpoint does not subscribe to, and was never delivered to it.`,
      { errors: [{ pointer: '/eventId', detail: 'the endpoint does not subscribe to order.created' }] },
    );
    assert.deepEqual(await storedDeliveries(t.db, 'endpoint_id = $1', [other.id]), []);
  });

  test("another endpoint's ping is never sent to an endpoint, even one subscribing to every type → 422", async () => {
    const pinged = await registerEndpoint(t, token);
    const ping = (await send(t, 'POST', token, `/webhook-endpoints/${pinged.id}/pings`)).json() as ShownDelivery;
    const url = `/webhook-endpoints/${all.id}/deliveries`;
    const res = await send(t, 'POST', token, url, { eventId: ping.eventId });
    expectProblem(
      res,
      422,
      'WEBHOOK_EVENT_NOT_SUBSCRIBED',
      url,
      `Event ${ping.eventId} is of type webhook_endpoint.ping, which the endpoint does not subscribe to, and was never delivered to it.`,
      { errors: [{ pointer: '/eventId', detail: 'the endpoint does not subscribe to webhook_endpoint.ping' }] },
    );
    // Its own ping may be sent to it again.
    assert.equal((await send(t, 'POST', token, `/webhook-endpoints/${pinged.id}/deliveries`, { eventId: ping.eventId })).statusCode, 202);
  });

  test('an unknown event → 404 EVENT_NOT_FOUND; a malformed id → 400; a disabled endpoint → 409; nothing written', async () => {
    const url = `/webhook-endpoints/${all.id}/deliveries`;
    const before = await storedDeliveries(t.db, 'TRUE', []);
    const unknown = 'evt_AAAAAAAAAAAAAAAAAAAAAA';
    expectProblem(
      await send(t, 'POST', token, url, { eventId: unknown }),
      404,
      'EVENT_NOT_FOUND',
      url,
      `Event ${unknown} does not exist.`,
      {
        errors: [{ pointer: '/eventId', detail: 'no event has this id' }],
      },
    );
    const malformed = '/eventId must match pattern "^evt_[A-Za-z0-9_-]{22}$"';
    expectProblem(await send(t, 'POST', token, url, { eventId: 'order-1' }), 400, 'REQUEST_BODY_INVALID', url, malformed, {
      errors: [{ pointer: '/eventId', detail: malformed }],
    });
    expectProblem(await send(t, 'POST', token, url, {}), 400, 'REQUEST_BODY_INVALID', url, '/eventId is required', {
      errors: [{ pointer: '/eventId', detail: '/eventId is required' }],
    });
    const offUrl = `/webhook-endpoints/${off.id}/deliveries`;
    expectProblem(
      await send(t, 'POST', token, offUrl, { eventId: created.eventId }),
      409,
      'WEBHOOK_ENDPOINT_DISABLED',
      offUrl,
      `Webhook endpoint ${off.id} is disabled; enable it (PUT with "disabled": false) before sending it events.`,
    );
    assert.deepEqual(await storedDeliveries(t.db, 'TRUE', []), before);
  });
});

describe('POST /webhook-endpoints/{id}/pings', () => {
  test('→ 202: a webhook_endpoint.ping event carrying the endpoint without its secret, delivered to this endpoint only', async () => {
    const pinged = await registerEndpoint(t, token, { description: 'ping me' });
    // Another endpoint subscribing to every type: a ping never reaches it.
    const bystander = await registerEndpoint(t, token);
    const url = `/webhook-endpoints/${pinged.id}/pings`;
    const res = await send(t, 'POST', token, url);
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'no-store');
    const delivery = res.json() as ShownDelivery;
    assert.equal(res.headers.location, `${PUBLIC_URL}/webhook-endpoints/${pinged.id}/deliveries/${delivery.id}`);
    assert.match(delivery.eventId, /^evt_[A-Za-z0-9_-]{22}$/);
    assert.deepEqual(delivery, {
      id: delivery.id,
      endpointId: pinged.id,
      eventId: delivery.eventId,
      eventType: 'webhook_endpoint.ping',
      state: 'pending',
      attemptCount: 0,
      nextAttemptAt: delivery.nextAttemptAt,
      attempts: [],
      createdAt: delivery.createdAt,
      updatedAt: delivery.createdAt,
    });
    assert.deepEqual(await storedDeliveries(t.db, 'event_id = $1', [delivery.eventId]), [
      { id: delivery.id, endpointId: pinged.id, eventId: delivery.eventId, state: 'pending', attempts: 0 },
    ]);
    assert.deepEqual(await storedDeliveries(t.db, 'endpoint_id = $1', [bystander.id]), []);
    const { rows } = await t.db.query<{ type: string; objectType: string; object: Record<string, unknown>; text: string }>(
      'SELECT type, object_type AS "objectType", object, object::text AS text FROM events WHERE id = $1',
      [delivery.eventId],
    );
    const event = rows[0]!;
    assert.deepEqual([event.type, event.objectType], ['webhook_endpoint.ping', 'webhook_endpoint']);
    // The stored object is the endpoint's record: no secret, sealed or not.
    const row = (await storedEndpoint(t.db, pinged.id))!;
    const { secret: _secret, previousSecret: _previousSecret, ...record } = row;
    assert.deepEqual(event.object, record);
    assert.ok(!event.text.includes('whsec_'), event.text);
    assert.ok(!event.text.includes(row.secret) && !event.text.includes(pinged.secret));
    // Delivered, it is the endpoint as GET shows it, in the endpoint's version, less the backlog
    // (the ping's own delivery is in it): an event records settings, not traffic.
    const read = (await send(t, 'GET', token, `/v2/webhook-endpoints/${pinged.id}`)).json();
    assert.deepEqual(read.backlog, { pending: 1, oldestDueAt: delivery.nextAttemptAt });
    assert.deepEqual(renderEventObject('webhook_endpoint', event.object, 2), { ...read, backlog: null });
    assert.deepEqual(renderEventObject('webhook_endpoint', event.object, 1), { ...read, backlog: null });
  });

  test('a disabled endpoint → 409 WEBHOOK_ENDPOINT_DISABLED; nothing recorded', async () => {
    const url = `/webhook-endpoints/${off.id}/pings`;
    const events = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;
    expectProblem(
      await send(t, 'POST', token, url),
      409,
      'WEBHOOK_ENDPOINT_DISABLED',
      url,
      `Webhook endpoint ${off.id} is disabled; enable it (PUT with "disabled": false) before sending it events.`,
    );
    assert.equal((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n, events);
    assert.deepEqual(await storedDeliveries(t.db, 'endpoint_id = $1', [off.id]), []);
  });
});
