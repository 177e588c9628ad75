// PATCH /orders/{orderId}: a JSON Merge Patch (RFC 7396) of the order, in every API version:
// absolute values (repeated → same state, same answer), read-only members tolerated unchanged,
// null refused (every member is required), If-Match honoured, Accept-Patch advertised (RFC 5789).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createCustomer, createStaffToken } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';

const t = setUpTestApp();

const MERGE_PATCH = 'application/merge-patch+json';

const patch = (token: string, url: string, body: unknown, headers: Record<string, string> = {}) =>
  t.request(token, {
    method: 'PATCH',
    url,
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': MERGE_PATCH, ...headers },
  });

async function version(id: number): Promise<{ status: string; version: number }> {
  return (await t.db.query<{ status: string; version: number }>('SELECT status, version FROM orders WHERE id = $1', [id])).rows[0]!;
}

/** A customer's pending order (v1 and v2 see it alike), and the customer's token. */
async function pendingOrder() {
  const { user, token } = await createCustomer(t);
  const order = await createOrder(t.db, user.id);
  return { order, token };
}

function expectOrder(res: LightMyRequestResponse, status: string): Record<string, unknown> {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['accept-patch'], MERGE_PATCH);
  assert.equal(res.headers['cache-control'], 'no-store');
  const body = res.json();
  assert.equal(body.status, status);
  return body;
}

describe('PATCH /orders/{orderId}: absolute values', () => {
  for (const prefix of ['/v1', '/v2']) {
    test(`${prefix}: {"status":"cancelled"} cancels; repeated → the same state and the same answer`, async () => {
      const { order, token } = await pendingOrder();
      const url = `${prefix}/orders/${order.id}`;
      const first = await patch(token, url, { status: 'cancelled' });
      const cancelled = expectOrder(first, 'cancelled');
      assert.equal(first.headers.etag, `"o${order.id}.2.v${prefix.slice(2)}"`);
      const again = await patch(token, url, { status: 'cancelled' });
      expectOrder(again, 'cancelled');
      assert.deepEqual(again.json(), cancelled);
      assert.equal(again.headers.etag, first.headers.etag);
      assert.deepEqual(await version(order.id), { status: 'cancelled', version: 2 });
    });
  }

  test('an empty patch changes nothing and answers the order as it is', async () => {
    const { order, token } = await pendingOrder();
    const res = await patch(token, `/v2/orders/${order.id}`, {});
    const body = expectOrder(res, 'pending');
    const read = await t.request(token, { method: 'GET', url: `/v2/orders/${order.id}` });
    assert.deepEqual(body, read.json());
    assert.equal(res.headers.etag, read.headers.etag);
    assert.equal(read.headers['accept-patch'], MERGE_PATCH);
    assert.equal((await version(order.id)).version, 1);
  });

  test('the state machine holds: a customer cannot ship their order (409), nothing changes', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { status: 'paid' });
    const before = await version(order.id);
    const res = await patch(token, `/v2/orders/${order.id}`, { status: 'shipped' });
    expectProblem(
      res,
      409,
      'ORDER_TRANSITION_NOT_ALLOWED',
      `/v2/orders/${order.id}`,
      'The order is paid; it cannot become shipped (no change of status is allowed to you from here).',
      { currentStatus: 'paid', allowedStatuses: [] },
    );
    assert.deepEqual(await version(order.id), before);
    expectOrder(await patch(await createStaffToken(t), `/v2/orders/${order.id}`, { status: 'shipped' }), 'shipped');
  });
});

describe('PATCH /orders/{orderId}: read-only and removed members', () => {
  test('a GET answer sent back as the patch, or its read-only members alone → 200', async () => {
    for (const prefix of ['/v1', '/v2']) {
      const { order, token } = await pendingOrder();
      const url = `${prefix}/orders/${order.id}`;
      const read = (await t.request(token, { method: 'GET', url })).json();
      expectOrder(await patch(token, url, { ...read, status: 'cancelled' }), 'cancelled');
      const { total, customerId } = read;
      expectOrder(
        await patch(token, url, prefix === '/v1' ? { total, customerId, currency: read.currency } : { total, customerId }),
        'cancelled',
      );
    }
  });

  test('part of a read-only object is merged before it is judged: the same value → 200, another → 422', async () => {
    const { order, token } = await pendingOrder();
    const url = `/v2/orders/${order.id}`;
    const { total } = (await t.request(token, { method: 'GET', url })).json();
    expectOrder(await patch(token, url, { total: { value: total.value } }), 'pending');
    expectProblem(
      await patch(token, url, { status: 'cancelled', total: { value: total.value + 1 } }),
      422,
      'ORDER_READ_ONLY_FIELD',
      url,
      'Read-only fields differ from the order: total.',
      { errors: [{ pointer: '/total', detail: `total is read-only; send ${JSON.stringify(total)} or omit it` }] },
    );
    assert.deepEqual(await version(order.id), { status: 'pending', version: 1 });
  });

  test('v1: a flat currency other than the order’s → 422 at /currency', async () => {
    const { order, token } = await pendingOrder();
    const url = `/v1/orders/${order.id}`;
    const { currency } = (await t.request(token, { method: 'GET', url })).json();
    const other = currency === 'EUR' ? 'USD' : 'EUR';
    expectProblem(
      await patch(token, url, { currency: other }),
      422,
      'ORDER_READ_ONLY_FIELD',
      url,
      'Read-only fields differ from the order: currency.',
      {
        errors: [{ pointer: '/currency', detail: `currency is read-only; send ${JSON.stringify(currency)} or omit it` }],
      },
    );
  });

  test('server-managed members are ignored, whatever they say (as in a PUT)', async () => {
    const { order, token } = await pendingOrder();
    const res = await patch(token, `/v2/orders/${order.id}`, {
      id: 1,
      createdAt: '2001-02-03T04:05:06Z',
      updatedAt: '2001-02-03T04:05:06Z',
      items: [],
    });
    assert.equal(expectOrder(res, 'pending').id, order.id);
  });

  for (const [name, body, pointers] of [
    ['status: null', { status: null }, ['/status']],
    ['total: null', { total: null }, ['/total']],
    ['a member of total set to null', { total: { currency: null } }, ['/total/currency']],
    ['a server-managed member set to null, beside a status', { status: 'cancelled', updatedAt: null }, ['/updatedAt']],
  ] as const) {
    test(`${name} → 422 ORDER_MEMBER_REQUIRED naming it; nothing changes`, async () => {
      const { order, token } = await pendingOrder();
      const url = `/v2/orders/${order.id}`;
      expectProblem(
        await patch(token, url, body),
        422,
        'ORDER_MEMBER_REQUIRED',
        url,
        `A merge patch of an order cannot remove members: ${pointers.join(', ')}.`,
        {
          errors: pointers.map((pointer) => ({
            pointer,
            detail: 'null removes this member, and an order requires it; send its value or omit it',
          })),
        },
      );
      assert.deepEqual(await version(order.id), { status: 'pending', version: 1 });
    });
  }

  test('unknown members and values outside the schema → 400; a patch that is not an object → 400', async () => {
    const { order, token } = await pendingOrder();
    const url = `/v2/orders/${order.id}`;
    for (const body of [{ colour: 'red' }, { status: 'lost' }, [], '"cancelled"']) {
      const res = await patch(token, url, body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(res.json().code, 'REQUEST_BODY_INVALID');
    }
    assert.equal((await version(order.id)).version, 1);
  });
});

describe('PATCH /orders/{orderId}: If-Match', () => {
  test('the current tag → 200; a stale one → 412; an empty one matches nothing → 412', async () => {
    const { order, token } = await pendingOrder();
    const url = `/v2/orders/${order.id}`;
    const current = `"o${order.id}.1.v2"`;
    for (const ifMatch of [`"o${order.id}.9.v2"`, '', ' , ']) {
      const res = await patch(token, url, { status: 'cancelled' }, { 'if-match': ifMatch });
      assert.equal(res.statusCode, 412, `${JSON.stringify(ifMatch)}: ${res.body}`);
      assert.equal(res.json().code, 'REQUEST_PRECONDITION_FAILED');
    }
    expectOrder(await patch(token, url, { status: 'cancelled' }, { 'if-match': current }), 'cancelled');
  });
});

describe('PATCH /orders/{orderId}: media types', () => {
  test('a PATCH as application/json → 415 with Accept-Patch; nothing changes', async () => {
    const { order, token } = await pendingOrder();
    const url = `/v2/orders/${order.id}`;
    const res = await patch(token, url, { status: 'cancelled' }, { 'content-type': 'application/json' });
    expectProblem(res, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE', url, `PATCH takes a JSON Merge Patch (RFC 7396): send it as ${MERGE_PATCH}.`);
    assert.equal(res.headers['accept-patch'], MERGE_PATCH);
    assert.equal((await version(order.id)).version, 1);
  });

  test('a merge patch sent to PUT or POST → 415 (merge patches are for PATCH)', async () => {
    const { order, token } = await pendingOrder();
    const url = `/v2/orders/${order.id}`;
    const res = await t.request(token, { method: 'PUT', url, payload: '{"status":"cancelled"}', headers: { 'content-type': MERGE_PATCH } });
    expectProblem(res, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE', url, `Send the body as application/json; ${MERGE_PATCH} is for PATCH.`);
    assert.equal((await version(order.id)).version, 1);
  });

  test('malformed JSON as a merge patch → 400; the charset parameter is accepted', async () => {
    const { order, token } = await pendingOrder();
    const url = `/v2/orders/${order.id}`;
    expectProblem(await patch(token, url, '{"status":'), 400, 'REQUEST_BODY_MALFORMED', url, 'The body is not valid JSON.');
    expectOrder(await patch(token, url, { status: 'cancelled' }, { 'content-type': `${MERGE_PATCH}; charset=utf-8` }), 'cancelled');
  });

  test('PATCH on the collection → 405 whose Allow leaves PATCH out; on an order, Allow names it', async () => {
    const { order, token } = await pendingOrder();
    const collection = await patch(token, '/v2/orders', {});
    assert.equal(collection.statusCode, 405);
    assert.doesNotMatch(String(collection.headers.allow), /PATCH/);
    const post = await t.request(token, { method: 'POST', url: `/v2/orders/${order.id}`, payload: {} });
    assert.equal(post.statusCode, 405);
    assert.match(String(post.headers.allow), /\bPATCH\b/);
  });

  test('PATCH spends the writes budget', async () => {
    const { order, token } = await pendingOrder();
    const res = await patch(token, `/v2/orders/${order.id}`, {});
    assert.match(String(res.headers['ratelimit-policy']), /^"writes"/);
  });
});
