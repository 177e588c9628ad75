// Who may manage webhooks (RFC 6750 §3.1; OWASP API1/API5): every operation needs a token (401),
// its scope (webhooks:read or webhooks:write, 403 insufficient_scope), and a staff user or service
// client (a customer is 403 even with a token that carries the scope); an unknown id is a 404. A
// refused write changes nothing.
import { SYSTEM_ACTOR } from '../../../src/core/actor.ts';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Scope } from '../../../src/core/scopes.ts';
import { recordEvent } from '../../../src/events/events.store.ts';
import { createCustomer, createServiceToken } from '../../helpers/actors.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { MISSING_ID, PUBLIC_URL_LITERAL, registerEndpoint, send, webhookStaffToken, webhookTestConfig, type Method } from './webhooks.ts';

let t: TestApp;

interface Operation {
  method: Method;
  path: (ids: Ids) => string;
  scope: Scope;
  body?: (ids: Ids) => unknown;
}

interface Ids {
  endpointId: number;
  deliveryId: number;
  eventId: string;
}

const endpointBody = { url: PUBLIC_URL_LITERAL, enabledEvents: ['*'], apiVersion: 2, description: '', disabled: false };

const OPERATIONS: Operation[] = [
  {
    method: 'POST',
    path: () => '/webhook-endpoints',
    scope: 'webhooks:write',
    body: () => ({ url: PUBLIC_URL_LITERAL, enabledEvents: ['*'] }),
  },
  { method: 'GET', path: () => '/webhook-endpoints', scope: 'webhooks:read' },
  { method: 'GET', path: (ids) => `/webhook-endpoints/${ids.endpointId}`, scope: 'webhooks:read' },
  {
    method: 'PUT',
    path: (ids) => `/webhook-endpoints/${ids.endpointId}`,
    scope: 'webhooks:write',
    body: () => ({ ...endpointBody, description: 'changed' }),
  },
  { method: 'DELETE', path: (ids) => `/webhook-endpoints/${ids.endpointId}`, scope: 'webhooks:write' },
  { method: 'POST', path: (ids) => `/webhook-endpoints/${ids.endpointId}/secret-rotations`, scope: 'webhooks:write' },
  { method: 'GET', path: (ids) => `/webhook-endpoints/${ids.endpointId}/deliveries`, scope: 'webhooks:read' },
  { method: 'GET', path: (ids) => `/webhook-endpoints/${ids.endpointId}/deliveries/${ids.deliveryId}`, scope: 'webhooks:read' },
  {
    method: 'POST',
    path: (ids) => `/webhook-endpoints/${ids.endpointId}/deliveries`,
    scope: 'webhooks:write',
    body: (ids) => ({ eventId: ids.eventId }),
  },
  { method: 'POST', path: (ids) => `/webhook-endpoints/${ids.endpointId}/pings`, scope: 'webhooks:write' },
];

const TEMPLATE_IDS: Ids = { endpointId: 0, deliveryId: 0, eventId: '' };
const nameOf = (op: Operation) =>
  `${op.method} ${op.path(TEMPLATE_IDS).replace('/0/deliveries/0', '/{id}/deliveries/{deliveryId}').replace('/0', '/{id}')}`;

let ids: Ids;

/** Everything the refused requests could have changed: endpoints (secrets and versions included), deliveries, events. */
async function snapshot(): Promise<unknown> {
  const endpoints = await t.db.query('SELECT id, url, secret, previous_secret, version FROM webhook_endpoints ORDER BY id');
  const deliveries = await t.db.query('SELECT id, endpoint_id, event_id, state FROM webhook_deliveries ORDER BY id');
  const events = await t.db.query('SELECT count(*)::int AS n FROM events');
  return { endpoints: endpoints.rows, deliveries: deliveries.rows, events: events.rows };
}

before(async () => {
  t = await startTestApp(webhookTestConfig());
  const endpoint = await registerEndpoint(t, await webhookStaffToken(t));
  const eventId = await t.db.transaction((tx) => recordEvent(tx, 'order.created', { id: 1 }, SYSTEM_ACTOR));
  const { rows } = await t.db.query<{ id: number }>('SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2', [
    endpoint.id,
    eventId,
  ]);
  ids = { endpointId: endpoint.id, deliveryId: rows[0]!.id, eventId };
});
after(() => t.close());

function request(op: Operation, token: string | undefined, at: Ids = ids) {
  return send(t, op.method, token, op.path(at), op.body?.(at));
}

describe('webhook management: authentication and authorization', () => {
  for (const op of OPERATIONS) {
    test(`${nameOf(op)}: no token → 401; nothing changes`, async () => {
      const before = await snapshot();
      const res = await request(op, undefined);
      expectProblem(res, 401, 'AUTH_TOKEN_MISSING', op.path(ids), 'This endpoint requires an access token: Authorization: Bearer <token>.');
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay"');
      assert.deepEqual(await snapshot(), before);
    });

    test(`${nameOf(op)}: a token without ${op.scope} → 403 insufficient_scope (staff, service client, customer); nothing changes`, async () => {
      const before = await snapshot();
      const other: Scope = op.scope === 'webhooks:read' ? 'webhooks:write' : 'webhooks:read';
      const tokens = [
        await webhookStaffToken(t, [other, 'orders:read', 'orders:write', 'products:write', 'events:read']),
        await createServiceToken(t, [other, 'orders:read']),
        (await createCustomer(t, ['orders:read', 'orders:write', 'payments:read', 'payments:write'])).token,
      ];
      for (const token of tokens) {
        const res = await request(op, token);
        expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', op.path(ids), `This operation requires the scope "${op.scope}".`);
        assert.equal(res.headers['www-authenticate'], `Bearer realm="orderpay", error="insufficient_scope", scope="${op.scope}"`);
      }
      assert.deepEqual(await snapshot(), before);
    });

    test(`${nameOf(op)}: a customer, even with a token carrying the webhook scopes → 403 AUTH_FORBIDDEN; nothing changes`, async () => {
      const before = await snapshot();
      const { token } = await createCustomer(t, ['webhooks:read', 'webhooks:write']);
      expectProblem(
        await request(op, token),
        403,
        'AUTH_FORBIDDEN',
        op.path(ids),
        'Only staff and service clients manage webhook endpoints.',
      );
      assert.deepEqual(await snapshot(), before);
    });

    if (op.path(TEMPLATE_IDS).startsWith('/webhook-endpoints/')) {
      test(`${nameOf(op)}: an unknown endpoint → 404 WEBHOOK_ENDPOINT_NOT_FOUND; nothing changes`, async () => {
        const before = await snapshot();
        const missing = { ...ids, endpointId: MISSING_ID };
        const res = await request(op, await webhookStaffToken(t), missing);
        expectProblem(res, 404, 'WEBHOOK_ENDPOINT_NOT_FOUND', op.path(missing), `Webhook endpoint ${MISSING_ID} does not exist.`);
        assert.deepEqual(await snapshot(), before);
      });
    }
  }

  test('a service client holding the scope may do everything staff may', async () => {
    const service = await createServiceToken(t, ['webhooks:read', 'webhooks:write']);
    const made = await registerEndpoint(t, service);
    const own = { ...ids, endpointId: made.id };
    const expected: Record<string, number> = { GET: 200, PUT: 200, POST: 202, DELETE: 204 };
    for (const op of OPERATIONS) {
      if (op.path(own) === '/webhook-endpoints' || op.method === 'DELETE') continue;
      const at = op.path(own).includes('/deliveries/') ? ids : own;
      const res = await request(op, service, at);
      const status = op.path(at).endsWith('/secret-rotations') ? 200 : expected[op.method];
      assert.equal(res.statusCode, status, `${nameOf(op)}: ${res.body}`);
    }
    assert.equal((await send(t, 'DELETE', service, `/webhook-endpoints/${made.id}`)).statusCode, 204);
  });
});
