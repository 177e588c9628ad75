// GET /orders: who sees which orders, and exact totals (trigger-maintained counters without
// minTotal, a count with it).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCustomer, createServiceToken, createStaffToken, get } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { readableMeta } from '../../helpers/paging.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { createOrderRow, idsOf, readStoredOrder } from './stored-orders.ts';

const t = setUpTestApp();

async function visibleCount(where: string, params: unknown[]): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>(`SELECT count(*) AS n FROM orders WHERE deleted_at IS NULL AND ${where}`, params);
  return rows[0]!.n;
}

describe('GET /orders: who sees what', () => {
  test('a customer sees only their own orders', async () => {
    const a = await createCustomer(t);
    const b = await createCustomer(t);
    const mine = await createOrderRow(t.db, a.user.id);
    await createOrderRow(t.db, b.user.id);
    await createOrderRow(t.db, b.user.id, { status: 'paid' });
    const res = await get(t, a.token, '/orders');
    assert.deepEqual(idsOf(res), [mine]);
    assert.equal(res.json().meta.total, 1);
    assert.deepEqual(idsOf(await get(t, a.token, '/orders?status=paid')), []);
  });

  test('a customer may name themselves as customerId', async () => {
    const a = await createCustomer(t);
    const mine = await createOrderRow(t.db, a.user.id);
    const res = await get(t, a.token, `/orders?customerId=${a.user.id}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(idsOf(res), [mine]);
  });

  test('a customer naming another customerId → 403', async () => {
    const a = await createCustomer(t);
    const b = await createCustomer(t);
    await createOrderRow(t.db, b.user.id);
    const res = await get(t, a.token, `/orders?customerId=${b.user.id}`);
    expectProblem(res, 403, 'AUTH_FORBIDDEN', '/orders', 'Customers can list only their own orders.');
  });

  test("staff and service clients see every customer's orders", async () => {
    const a = await createCustomer(t);
    const b = await createCustomer(t);
    const a1 = await createOrderRow(t.db, a.user.id, { status: 'delivered', total: 77_777_001 });
    const b1 = await createOrderRow(t.db, b.user.id, { status: 'delivered', total: 77_777_002 });
    for (const token of [await createStaffToken(t), await createServiceToken(t, ['orders:read'])]) {
      const res = await get(t, token, '/orders?minTotal=77777001&sort=total');
      assert.equal(res.statusCode, 200);
      assert.deepEqual(idsOf(res), [a1, b1]);
      assert.deepEqual(
        res.json().data.map((o: { customerId: number }) => o.customerId),
        [a.user.id, b.user.id],
      );
    }
  });

  test('without a token → 401 with a Bearer challenge', async () => {
    const res = await get(t, undefined, '/orders');
    expectProblem(res, 401, 'AUTH_TOKEN_MISSING', '/orders', 'This endpoint requires an access token: Authorization: Bearer <token>.');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay"');
  });

  test('without orders:read → 403 insufficient_scope', async () => {
    const { user } = await createCustomer(t);
    const res = await get(t, await t.token({ userId: user.id, scopes: ['orders:write'] }), '/orders');
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', '/orders', 'This operation requires the scope "orders:read".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:read"');
  });
});

describe('GET /orders: meta.total is exact', () => {
  const total = async (token: string, query = '') => (await get(t, token, `/orders${query}`)).json().meta.total as number;

  test('per customer, after creates, status changes and deletes', async () => {
    const { user, token } = await createCustomer(t);
    const staff = await createStaffToken(t);
    const created: number[] = [];
    for (let i = 0; i < 4; i++) created.push(await createOrderRow(t.db, user.id, { total: 100 * (i + 1) }));
    assert.equal(await total(token), 4);
    assert.equal(await total(token, '?status=pending'), 4);
    assert.equal(await total(staff, `?customerId=${user.id}`), 4);

    const cancel = await t.request(token, { method: 'PUT', url: `/orders/${created[0]}`, payload: { status: 'cancelled' } });
    assert.equal(cancel.statusCode, 200);
    assert.equal(await total(token), 4);
    assert.equal(await total(token, '?status=pending'), 3);
    assert.equal(await total(token, '?status=cancelled'), 1);
    assert.equal(await total(staff, `?customerId=${user.id}&status=cancelled`), 1);

    const created2 = await t.request(token, {
      method: 'POST',
      url: '/orders',
      payload: {
        productId: (await t.db.query<{ product_id: number }>('SELECT product_id FROM order_items WHERE order_id = $1', [created[1]]))
          .rows[0]!.product_id,
        qty: 2,
      },
    });
    assert.equal(created2.statusCode, 201);
    assert.equal(await total(token), 5);
    assert.equal(await total(token, '?status=pending'), 4);

    for (const id of [created[0], created[1]]) {
      assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${id}` })).statusCode, 204);
    }
    assert.equal(await total(token), 3);
    assert.equal(await total(token, '?status=cancelled'), 0);
    assert.equal(await total(token, '?status=pending'), 3);
    // Deleting again changes nothing.
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${created[1]}` })).statusCode, 204);
    assert.equal(await total(token), 3);
    assert.equal(await total(token), await visibleCount('customer_id = $1', [user.id]));
  });

  test('across all customers (staff, no customerId), by status, equal to a COUNT(*)', async () => {
    const staff = await createStaffToken(t);
    const statuses = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const;
    const before = new Map<string, number>();
    for (const status of statuses) {
      before.set(status, await total(staff, `?status=${status}`));
      assert.equal(before.get(status), await visibleCount('status = $1', [status]));
    }
    const allBefore = await total(staff);
    assert.equal(allBefore, await visibleCount('TRUE', []));

    // More than 16 orders, so every counter shard is touched.
    const a = await createCustomer(t);
    const b = await createCustomer(t);
    const made: number[] = [];
    for (let i = 0; i < 20; i++)
      made.push(await createOrderRow(t.db, i % 2 ? a.user.id : b.user.id, { status: i % 5 === 0 ? 'paid' : 'pending' }));
    assert.equal(await total(staff), allBefore + 20);
    assert.equal(await total(staff, '?status=paid'), before.get('paid')! + 4);
    assert.equal(await total(staff, '?status=pending'), before.get('pending')! + 16);

    assert.equal((await t.request(staff, { method: 'PUT', url: `/orders/${made[0]}`, payload: { status: 'shipped' } })).statusCode, 200);
    assert.equal((await t.request(staff, { method: 'PUT', url: `/orders/${made[1]}`, payload: { status: 'cancelled' } })).statusCode, 200);
    assert.equal((await t.request(staff, { method: 'DELETE', url: `/orders/${made[2]}` })).statusCode, 204);
    assert.equal((await t.request(staff, { method: 'DELETE', url: `/orders/${made[1]}` })).statusCode, 204);

    assert.equal(await total(staff), allBefore + 18);
    assert.equal(await total(staff, '?status=paid'), before.get('paid')! + 3);
    assert.equal(await total(staff, '?status=shipped'), before.get('shipped')! + 1);
    assert.equal(await total(staff, '?status=pending'), before.get('pending')! + 14);
    assert.equal(await total(staff, '?status=cancelled'), before.get('cancelled')!);
    for (const status of statuses) assert.equal(await total(staff, `?status=${status}`), await visibleCount('status = $1', [status]));
    assert.equal(await total(staff), await visibleCount('TRUE', []));
  });

  test('statements touching many rows at once keep the counters exact', async () => {
    const { user, token } = await createCustomer(t);
    const staff = await createStaffToken(t);
    const made: number[] = [];
    for (let i = 0; i < 6; i++) made.push(await createOrderRow(t.db, user.id));
    await t.db.query("UPDATE orders SET status = 'paid' WHERE customer_id = $1 AND id <> $2", [user.id, made[0]]);
    assert.equal(await total(token, '?status=paid'), 5);
    assert.equal(await total(token, '?status=pending'), 1);
    await t.db.query('UPDATE orders SET deleted_at = now() WHERE id = ANY($1::bigint[])', [[made[1], made[2]]]);
    assert.equal(await total(token), 4);
    await t.db.query('DELETE FROM order_items WHERE order_id = ANY($1::bigint[])', [[made[3], made[1]]]);
    await t.db.query('DELETE FROM orders WHERE id = ANY($1::bigint[])', [[made[3], made[1]]]);
    assert.equal(await total(token), 3);
    assert.equal(await total(token, '?status=paid'), 2);
    assert.equal(await total(staff, `?customerId=${user.id}&status=paid`), 2);
    assert.equal(await total(staff, '?status=paid'), await visibleCount("status = 'paid'", []));
    assert.equal(await total(staff), await visibleCount('TRUE', []));
  });

  test('with minTotal, counted exactly too', async () => {
    const { user, token } = await createCustomer(t);
    const made: number[] = [];
    for (const amount of [10, 20, 30, 40]) made.push(await createOrderRow(t.db, user.id, { total: amount }));
    const deleted = await createOrderRow(t.db, user.id, { total: 50 });
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${deleted}` })).statusCode, 204);
    const res = await get(t, token, '/orders?minTotal=20&pageSize=2');
    const { createdAt } = await readStoredOrder(t.db, made[2]!);
    assert.deepEqual(readableMeta(res.json().meta), {
      ...{ total: 3, page: 1, pageSize: 2, totalPages: 2 },
      ...{ nextCursor: { v: [createdAt, made[2]], n: 1 }, prevCursor: null },
    });
    assert.equal(await total(await createStaffToken(t), `?customerId=${user.id}&minTotal=20&status=pending`), 3);
  });

  test('deleted orders appear neither in data nor in the total', async () => {
    const { user, token } = await createCustomer(t);
    const kept = await createOrderRow(t.db, user.id);
    const gone = await createOrderRow(t.db, user.id, { status: 'cancelled' });
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${gone}` })).statusCode, 204);
    const res = await get(t, token, '/orders');
    assert.deepEqual(res.json(), {
      data: [await readStoredOrder(t.db, kept)],
      meta: { total: 1, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    });
    assert.deepEqual(idsOf(await get(t, token, '/orders?status=cancelled')), []);
    assert.equal((await get(t, await createStaffToken(t), `/orders?customerId=${user.id}&status=cancelled`)).json().meta.total, 0);
    const { rows } = await t.db.query<{ deleted: boolean }>('SELECT deleted_at IS NOT NULL AS deleted FROM orders WHERE id = $1', [gone]);
    assert.deepEqual(rows, [{ deleted: true }]);
  });
});
