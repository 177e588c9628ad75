// Webhook endpoints at their API version's sunset (docs/webhooks.md, "Versions"; decision 0117),
// through the real app and its own jobs: a process that starts after the sunset disables the
// endpoints of the retired version as it starts; running processes (two here, over one database)
// disable them as their clock passes the sunset, each once, with one webhook_endpoint.disabled
// event; a disabled endpoint is sent nothing more; creating or enabling one is refused (422).
// Receivers on 127.0.0.1:29850–29852.
import { SYSTEM_ACTOR } from '../../src/core/actor.ts';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import type { ApiDeprecation } from '../../src/config.ts';
import { recordEvent } from '../../src/events/events.store.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createStaffToken } from '../helpers/actors.ts';
import { createProduct } from '../helpers/factories.ts';
import { expectProblem } from '../helpers/problems.ts';
import {
  deliveringWebhooks,
  eventually,
  insertWebhookEndpoint,
  type Receiver,
  startReceiver,
  verifyDelivery,
} from '../helpers/webhooks.ts';

const DAY_MS = 24 * 60 * 60_000;
// v1's sunset a month ahead of the real clock: the app's clock is moved past it by a test.
const SUNSET = new Date(Date.now() + 30 * DAY_MS);
const deprecationsWithSunset = (sunset: Date): ApiDeprecation[] => [
  { version: 1, deprecation: new Date(sunset.getTime() - 365 * DAY_MS), sunset },
];

let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

let t: TestApp;
let receivers: Receiver[];
const instances = new Set<FastifyInstance>();
before(async () => {
  t = await startTestApp({ webhooks: deliveringWebhooks('1,2'), apiDeprecations: deprecationsWithSunset(SUNSET) }, clock);
  receivers = await Promise.all([29850, 29851, 29852].map((port) => startReceiver(port)));
});
after(async () => {
  for (const instance of instances) await instance.close();
  await t.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

/** Another process of the same deployment over the same database, with these dates and this clock. */
async function startInstance(apiDeprecations: ApiDeprecation[], now?: () => Date): Promise<FastifyInstance> {
  const instance = await buildApp({ ...t.config, apiDeprecations }, t.db, { logger: false, now });
  instances.add(instance);
  await instance.ready();
  return instance;
}

async function stopInstance(instance: FastifyInstance): Promise<void> {
  instances.delete(instance);
  await instance.close();
}

const staffToken = () => createStaffToken(t, ['webhooks:read', 'webhooks:write']);

async function createEndpoint(
  token: string,
  body: Record<string, unknown>,
): Promise<{ id: number; secret: string; [key: string]: unknown }> {
  const res = await t.request(token, { method: 'POST', url: '/v3/webhook-endpoints', payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

const readEndpoint = (token: string, id: number) => t.request(token, { method: 'GET', url: `/v3/webhook-endpoints/${id}` });

async function disabledEventsAbout(endpointId: number): Promise<{ id: string; object: Record<string, unknown> }[]> {
  const { rows } = await t.db.query<{ id: string; object: Record<string, unknown> }>(
    "SELECT id, object FROM events WHERE type = 'webhook_endpoint.disabled' AND object->>'id' = $1 ORDER BY seq",
    [String(endpointId)],
  );
  return rows;
}

async function deliveryRows(endpointId: number) {
  const { rows } = await t.db.query<{ id: number; state: string; attempts: number; leased: boolean | null }>(
    'SELECT id, state, attempts, leased_until > now() AS leased FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id',
    [endpointId],
  );
  return rows;
}

const recordProductEvent = async () => recordEvent(t.db, 'product.updated', await createProduct(t.db), SYSTEM_ACTOR);

describe('a process that starts after the sunset', () => {
  test('disables the endpoints of the retired version before it is ready, each with one webhook_endpoint.disabled event', async () => {
    const token = await staffToken();
    const v1 = await createEndpoint(token, { url: 'http://127.0.0.1:29859/unused', enabledEvents: ['order.paid'], apiVersion: 1 });
    const v2 = await createEndpoint(token, { url: 'http://127.0.0.1:29859/unused', enabledEvents: ['order.paid'], apiVersion: 2 });
    const off = await createEndpoint(token, {
      url: 'http://127.0.0.1:29859/unused',
      enabledEvents: ['order.paid'],
      apiVersion: 1,
      disabled: true,
    });
    try {
      // The running process's sunset has not come: nothing changes until the other starts.
      assert.equal((await readEndpoint(token, v1.id)).json().disabled, false);
      const started = await startInstance(deprecationsWithSunset(new Date(Date.now() - DAY_MS)));
      // Ready means done: no waiting.
      const read = await readEndpoint(token, v1.id);
      assert.deepEqual([read.json().disabled, read.json().disabledReason], [true, 'api_version_retired']);
      assert.equal(read.headers.etag, `"we${v1.id}.2.v3"`);
      const other = (await readEndpoint(token, v2.id)).json();
      assert.deepEqual([other.disabled, other.disabledReason], [false, null]);
      // One disabled already keeps its reason and gets no event.
      assert.equal((await readEndpoint(token, off.id)).json().disabledReason, 'requested');
      const events = await disabledEventsAbout(v1.id);
      assert.equal(events.length, 1);
      assert.deepEqual([events[0]!.object.disabled, events[0]!.object.disabledReason], [true, 'api_version_retired']);
      assert.deepEqual(await disabledEventsAbout(off.id), []);
      // The new process refuses what the old one, before its sunset, still takes.
      const refused = await started.inject({
        method: 'POST',
        url: '/v3/webhook-endpoints',
        headers: { authorization: `Bearer ${token}` },
        payload: { url: 'http://127.0.0.1:29859/unused', enabledEvents: ['order.paid'], apiVersion: 1 },
      });
      assert.equal(refused.statusCode, 422, refused.body);
      assert.equal(refused.json().code, 'WEBHOOK_ENDPOINT_API_VERSION_RETIRED');
      await stopInstance(started);
    } finally {
      await t.db.query('DELETE FROM webhook_endpoints WHERE id = ANY($1::bigint[])', [[v1.id, v2.id, off.id]]);
    }
  });
});

describe('running processes that pass the sunset', () => {
  test('disable the endpoints of the retired version once, tell the endpoints subscribed, and send them nothing more', async () => {
    const [toV1, toV2, watching] = receivers as [Receiver, Receiver, Receiver];
    const token = await staffToken();
    const v1 = await createEndpoint(token, { url: toV1.url, enabledEvents: ['product.updated'], apiVersion: 1 });
    const v2 = await createEndpoint(token, { url: toV2.url, enabledEvents: ['product.updated'], apiVersion: 2 });
    const watcher = await createEndpoint(token, { url: watching.url, enabledEvents: ['webhook_endpoint.disabled'] });
    // Before the sunset, v1's receiver gets v1's objects; it fails one, which waits for a retry.
    toV1.answer((_request, response) => response.writeHead(503).end());
    await recordProductEvent();
    await toV1.waitForRequests(1);
    await toV2.waitForRequests(1);
    await eventually(async () => (await deliveryRows(v1.id))[0]?.leased === null, 'the failed attempt recorded');
    const before = await readEndpoint(token, v1.id);
    assert.equal(before.json().disabled, false);

    // A second process with the same clock: both pass the sunset at once.
    await startInstance(deprecationsWithSunset(SUNSET), clock);
    offsetMs = 31 * DAY_MS;
    const [notice] = await watching.waitForRequests(1);
    const body = verifyDelivery(watcher.secret, notice!) as { type: string; data: { object: Record<string, unknown> } };
    assert.equal(body.type, 'webhook_endpoint.disabled');
    assert.deepEqual(
      [body.data.object.id, body.data.object.disabled, body.data.object.disabledReason],
      [v1.id, true, 'api_version_retired'],
    );

    const read = await readEndpoint(await staffToken(), v1.id);
    assert.deepEqual([read.json().disabled, read.json().disabledReason], [true, 'api_version_retired']);
    assert.notEqual(read.headers.etag, before.headers.etag);
    assert.equal((await readEndpoint(await staffToken(), v2.id)).json().disabled, false);
    assert.equal((await disabledEventsAbout(v1.id)).length, 1, 'disabled once, whichever process got to it');

    // Sent nothing more: no delivery of a new event, and its pending retry, due before anything
    // else, is not sent while a later event reaches the v2 endpoint.
    await eventually(async () => (await deliveryRows(v1.id)).every((row) => row.leased === null), 'no attempt in flight');
    const sentToV1 = toV1.requests.length;
    const [pending] = await deliveryRows(v1.id);
    await t.db.query("UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 minute' WHERE id = $1", [pending!.id]);
    const sentToV2 = toV2.requests.length;
    await recordProductEvent();
    await toV2.waitForRequests(sentToV2 + 1);
    assert.equal(toV1.requests.length, sentToV1);
    const rows = await deliveryRows(v1.id);
    assert.equal(rows.length, 1, 'no delivery of a later event to a disabled endpoint');
    assert.deepEqual([rows[0]!.state, rows[0]!.attempts], ['pending', pending!.attempts]);
    assert.equal(watching.requests.length, 1);
  });

  test('creating an endpoint pinned to the retired version, or enabling one, is refused: 422 WEBHOOK_ENDPOINT_API_VERSION_RETIRED', async () => {
    const token = await staffToken();
    for (const [path, body] of [
      ['/v3/webhook-endpoints', { apiVersion: 1 }],
      ['/v2/webhook-endpoints', { apiVersion: 1 }],
      ['/v3/webhook-endpoints', { apiVersion: 1, disabled: true }],
    ] as const) {
      const res = await t.request(token, { method: 'POST', url: path, payload: { url: receivers[0]!.url, enabledEvents: ['*'], ...body } });
      expectProblem(
        res,
        422,
        'WEBHOOK_ENDPOINT_API_VERSION_RETIRED',
        path,
        'API v1 was retired: no endpoint can be pinned to it. Pin the endpoint to a later version, whose objects its receiver reads.',
        { errors: [{ pointer: '/apiVersion', detail: 'API v1 was retired' }] },
      );
    }
    // An endpoint of v1 as the sunset left it.
    const endpoint = await insertWebhookEndpoint(t.db, t.config, {
      url: receivers[0]!.url,
      enabledEvents: ['product.updated'],
      apiVersion: 1,
    });
    await t.db.query("UPDATE webhook_endpoints SET disabled = true, disabled_reason = 'api_version_retired' WHERE id = $1", [endpoint.id]);
    const retired = endpoint.id;
    const settings = { url: receivers[0]!.url, enabledEvents: ['product.updated'], apiVersion: 1, description: '', disabled: false };
    const url = `/v3/webhook-endpoints/${retired}`;
    const current = (await readEndpoint(token, retired)).headers.etag!;
    // Refused before If-Match is judged, even with a stale tag (RFC 9110 §13.2.1).
    expectProblem(
      await t.request(token, { method: 'PUT', url, payload: settings, headers: { 'if-match': `"we${retired}.99.v3"` } }),
      422,
      'WEBHOOK_ENDPOINT_API_VERSION_RETIRED',
      url,
      'The endpoint is pinned to API v1, which was retired: it cannot be enabled unless the same request pins it to a later version.',
      { errors: [{ pointer: '/disabled', detail: 'an endpoint pinned to the retired API v1 cannot be enabled' }] },
    );
    assert.equal((await readEndpoint(token, retired)).headers.etag, current);
    // Edited while it stays disabled: allowed, and still retired.
    const edited = await t.request(token, { method: 'PUT', url, payload: { ...settings, disabled: true, description: 'old receiver' } });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.deepEqual([edited.json().disabled, edited.json().disabledReason], [true, 'api_version_retired']);
    // Moved on by its manager, in one request: enabled, and sent the next event in v3.
    const moved = await t.request(token, { method: 'PUT', url, payload: { ...settings, apiVersion: 3 } });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual([moved.json().apiVersion, moved.json().disabled, moved.json().disabledReason], [3, false, null]);
    receivers[0]!.answer((_request, response) => response.writeHead(204).end());
    const sent = receivers[0]!.requests.length;
    const eventId = await recordProductEvent();
    const requests = await receivers[0]!.waitForRequests(sent + 1);
    assert.equal(requests.at(-1)!.headers['webhook-id'], eventId);
    // Never newly pinned to it, even disabled.
    const v2 = await createEndpoint(token, { url: receivers[1]!.url, enabledEvents: ['order.paid'], apiVersion: 2, disabled: true });
    expectProblem(
      await t.request(token, { method: 'PUT', url: `/v3/webhook-endpoints/${v2.id}`, payload: { ...settings, disabled: true } }),
      422,
      'WEBHOOK_ENDPOINT_API_VERSION_RETIRED',
      `/v3/webhook-endpoints/${v2.id}`,
      'API v1 was retired: no endpoint can be pinned to it. Pin the endpoint to a later version, whose objects its receiver reads.',
      { errors: [{ pointer: '/apiVersion', detail: 'API v1 was retired' }] },
    );
  });
});
