// DELETE /orders/{orderId}: soft delete of pending or cancelled orders, idempotent, with If-Match
// (RFC 9110 §13.1.1: a deleted order has no current representation, so every If-Match fails).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { OrderStatus } from '../../../src/orders/orders.rules.ts';
import { createCustomer, createServiceToken, createStaffToken } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { EMPTY_FIRST_PAGE_META } from '../../helpers/paging.ts';

const t = setUpTestApp();

const del = (token: string | undefined, id: number | string, headers: Record<string, string> = {}) =>
  t.request(token, { method: 'DELETE', url: `/orders/${id}`, headers });

interface Row {
  status: string;
  version: number;
  deletedAt: string | null;
  updatedAt: string;
  deletedWithUpdate: boolean | null;
  items: number;
}

async function row(id: number): Promise<Row> {
  const { rows } = await t.db.query<Row>(
    `SELECT status, version, deleted_at AS "deletedAt", updated_at AS "updatedAt", deleted_at = updated_at AS "deletedWithUpdate",
            (SELECT count(*) FROM order_items WHERE order_id = o.id) AS items
       FROM orders o WHERE id = $1`,
    [id],
  );
  return rows[0]!;
}

function expectNoContent(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 204, res.body);
  assert.equal(res.body, '');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['content-type'], undefined);
  assert.equal(res.headers.etag, undefined);
  assert.equal(res.headers.vary, 'Accept');
}

describe('DELETE /orders/{orderId}: deletable orders', () => {
  for (const status of ['pending', 'cancelled'] as const) {
    test(`${status} → 204; the row is kept with deleted_at set; GET → 404`, async () => {
      const { user, token } = await createCustomer(t);
      const order = await createOrder(t.db, user.id, { status });
      const before = await row(order.id);
      assert.equal(before.deletedAt, null);

      expectNoContent(await del(token, order.id));
      const after = await row(order.id);
      assert.notEqual(after.deletedAt, null);
      assert.deepEqual(after, {
        ...before,
        version: before.version + 1,
        deletedAt: after.deletedAt,
        updatedAt: after.updatedAt,
        deletedWithUpdate: true,
      });
      assert.equal(after.items, 1);

      const read = await t.request(token, { method: 'GET', url: `/orders/${order.id}` });
      expectProblem(read, 404, 'ORDER_NOT_FOUND', `/orders/${order.id}`, `Order ${order.id} does not exist.`);
      const list = await t.request(token, { method: 'GET', url: '/orders' });
      assert.deepEqual(list.json(), {
        data: [],
        meta: EMPTY_FIRST_PAGE_META,
      });
      const items = await t.request(token, { method: 'GET', url: `/order-items?orderId=${order.id}` });
      expectProblem(items, 404, 'ORDER_NOT_FOUND', '/order-items', `Order ${order.id} does not exist.`);
    });
  }

  test('repeating DELETE → 204 again, and nothing changes', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    expectNoContent(await del(token, order.id));
    const afterFirst = await row(order.id);
    for (let i = 0; i < 2; i++) {
      expectNoContent(await del(token, order.id));
      assert.deepEqual(await row(order.id), afterFirst);
    }
  });

  test('/v1 and unversioned paths delete alike', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const res = await t.request(token, { method: 'DELETE', url: `/v1/orders/${order.id}` });
    expectNoContent(res);
    assert.notEqual((await row(order.id)).deletedAt, null);
    expectNoContent(await del(token, order.id));
  });

  test("staff may delete a customer's pending order; a service client too", async () => {
    const a = await createCustomer(t);
    const first = await createOrder(t.db, a.user.id);
    const second = await createOrder(t.db, a.user.id, { status: 'cancelled' });
    expectNoContent(await del(await createStaffToken(t), first.id));
    expectNoContent(await del(await createServiceToken(t, ['orders:write']), second.id));
    assert.notEqual((await row(first.id)).deletedAt, null);
    assert.notEqual((await row(second.id)).deletedAt, null);
  });
});

describe('DELETE /orders/{orderId}: orders that took money stay', () => {
  for (const status of ['paid', 'shipped', 'delivered'] as const satisfies OrderStatus[]) {
    test(`${status} → 409 ORDER_NOT_DELETABLE, for the owner and for staff; nothing changes`, async () => {
      const { user, token } = await createCustomer(t);
      const order = await createOrder(t.db, user.id, { status });
      const before = await row(order.id);
      for (const caller of [token, await createStaffToken(t)]) {
        expectProblem(
          await del(caller, order.id),
          409,
          'ORDER_NOT_DELETABLE',
          `/orders/${order.id}`,
          `The order is ${status}; only pending or cancelled orders can be deleted.`,
          { currentStatus: status },
        );
      }
      assert.deepEqual(await row(order.id), before);
      assert.equal((await t.request(token, { method: 'GET', url: `/orders/${order.id}` })).statusCode, 200);
    });
  }
});

describe('DELETE /orders/{orderId}: If-Match', () => {
  test('the current tag → 204', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    expectNoContent(await del(token, order.id, { 'if-match': `"o${order.id}.1.v1"` }));
    assert.notEqual((await row(order.id)).deletedAt, null);
  });

  test('* on an existing order → 204', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    expectNoContent(await del(token, order.id, { 'if-match': '*' }));
  });

  test('a stale or weak tag → 412 naming the current one; nothing changes', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { status: 'cancelled' });
    const before = await row(order.id);
    for (const tag of [`"o${order.id}.1.v1"`, `W/"o${order.id}.2.v1"`]) {
      expectProblem(
        await del(token, order.id, { 'if-match': tag }),
        412,
        'REQUEST_PRECONDITION_FAILED',
        `/orders/${order.id}`,
        'If-Match does not match the current entity tag; read the resource again.',
        { currentEtag: `"o${order.id}.2.v1"` },
      );
    }
    assert.deepEqual(await row(order.id), before);
  });

  test('on an already-deleted order any If-Match fails → 412, even *; nothing changes', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const etag = `"o${order.id}.1.v1"`;
    expectNoContent(await del(token, order.id, { 'if-match': etag }));
    const afterFirst = await row(order.id);
    for (const tag of [etag, `"o${order.id}.2.v1"`, '*']) {
      expectProblem(
        await del(token, order.id, { 'if-match': tag }),
        412,
        'REQUEST_PRECONDITION_FAILED',
        `/orders/${order.id}`,
        'If-Match does not match the current entity tag; read the resource again.',
      );
    }
    assert.deepEqual(await row(order.id), afterFirst);
  });

  test('the precondition is checked before deletability: a paid order with a stale tag → 412', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { status: 'paid' });
    const res = await del(token, order.id, { 'if-match': `"o${order.id}.1.v1"` });
    assert.equal(res.statusCode, 412);
    const matching = await del(token, order.id, { 'if-match': `"o${order.id}.2.v1"` });
    assert.equal(matching.statusCode, 409);
  });

  test('a malformed If-Match → 400', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    expectProblem(
      await del(token, order.id, { 'if-match': 'not-a-tag' }),
      400,
      'REQUEST_HEADER_INVALID',
      `/orders/${order.id}`,
      'If-Match must be "*" or a list of entity tags.',
      {
        errors: [{ parameter: 'If-Match', detail: 'If-Match must be "*" or a comma-separated list of quoted entity tags' }],
      },
    );
    assert.equal((await row(order.id)).deletedAt, null);
  });
});

describe('DELETE /orders/{orderId}: not found and forbidden', () => {
  test("another customer's order → 404 like a missing one; nothing changes", async () => {
    const owner = await createCustomer(t);
    const other = await createCustomer(t);
    const order = await createOrder(t.db, owner.user.id);
    const before = await row(order.id);
    for (const headers of [{}, { 'if-match': '*' }] as Record<string, string>[]) {
      expectProblem(
        await del(other.token, order.id, headers),
        404,
        'ORDER_NOT_FOUND',
        `/orders/${order.id}`,
        `Order ${order.id} does not exist.`,
      );
    }
    assert.deepEqual(await row(order.id), before);
    // Once the owner deleted it, the other customer still gets the same 404, not a 204.
    expectNoContent(await del(owner.token, order.id));
    expectProblem(await del(other.token, order.id), 404, 'ORDER_NOT_FOUND', `/orders/${order.id}`, `Order ${order.id} does not exist.`);
  });

  test('an order that never existed → 404', async () => {
    const { token } = await createCustomer(t);
    expectProblem(await del(token, 2_000_000_000), 404, 'ORDER_NOT_FOUND', '/orders/2000000000', 'Order 2000000000 does not exist.');
  });

  test('a malformed id → 400 naming the parameter', async () => {
    const { token } = await createCustomer(t);
    const detail = 'path parameter "orderId" must be >= 1';
    expectProblem(await del(token, 0), 400, 'REQUEST_PARAMETER_INVALID', '/orders/0', detail, {
      errors: [{ parameter: 'orderId', detail }],
    });
  });

  test('without orders:write → 403 insufficient_scope; without a token → 401', async () => {
    const { user } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const res = await del(await t.token({ userId: user.id, scopes: ['orders:read'] }), order.id);
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', `/orders/${order.id}`, 'This operation requires the scope "orders:write".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:write"');
    expectProblem(
      await del(undefined, order.id),
      401,
      'AUTH_TOKEN_MISSING',
      `/orders/${order.id}`,
      'This endpoint requires an access token: Authorization: Bearer <token>.',
    );
    assert.equal((await row(order.id)).deletedAt, null);
  });
});
