// GET /order-items?orderId=: the items of one order as a collection (the spec's flat path with a
// query filter instead of a third nesting level).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ErrorCode } from '../../../src/core/errors.ts';
import { insertOrder, insertOrderItems } from '../../../src/orders/orders.store.ts';
import { createCustomer, createServiceToken, createStaffToken, get } from '../../helpers/actors.ts';
import { PUBLIC_URL, setUpTestApp } from '../../helpers/app.ts';
import { readableMeta } from '../../helpers/paging.ts';
import { createOrder, createProduct } from '../../helpers/factories.ts';
import { expectProblem, pagingLinks } from '../../helpers/problems.ts';

const t = setUpTestApp();

const JSON_TYPE = 'application/json; charset=utf-8';

const link = (query: string, rel: string) => `<${PUBLIC_URL}/order-items?${query}>; rel="${rel}"`;

async function itemsInDb(orderId: number) {
  const { rows } = await t.db.query<Record<string, unknown>>(
    `SELECT i.id, i.order_id AS "orderId", i.product_id AS "productId", i.qty, i.unit_price AS "unitPrice", i.line_total AS "lineTotal", o.currency
       FROM order_items i JOIN orders o ON o.id = i.order_id WHERE i.order_id = $1 ORDER BY i.id`,
    [orderId],
  );
  return rows;
}

/** An order with several items (the API places one; the schema allows more). */
async function orderWithItems(customerId: number, count: number, currency = 'EUR') {
  const products: Awaited<ReturnType<typeof createProduct>>[] = [];
  for (let i = 0; i < count; i++) products.push(await createProduct(t.db, { price: 100 * (i + 1), currency }));
  return t.db.transaction(async (tx) => {
    const total = products.reduce((sum, p, i) => sum + p.price * (i + 1), 0);
    const order = await insertOrder(tx, { customerId, total, currency });
    for (const [i, p] of products.entries()) {
      await insertOrderItems(tx, order, [{ productId: p.id, qty: i + 1, unitPrice: p.price, lineTotal: p.price * (i + 1) }]);
    }
    return order;
  });
}

describe('GET /order-items?orderId=: 200', () => {
  test('the items of an order placed through the API, in the envelope', async () => {
    const { user, token } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 275, currency: 'CHF' });
    const placed = await t.request(token, { method: 'POST', url: '/orders', payload: { productId: product.id, qty: 4 } });
    assert.equal(placed.statusCode, 201);
    const orderId = placed.json().id;

    const res = await get(t, token, `/order-items?orderId=${orderId}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'private, no-cache');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(pagingLinks(res), `${link(`orderId=${orderId}&page=1`, 'first')}, ${link(`orderId=${orderId}&page=1`, 'last')}`);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['data', 'meta']);
    assert.deepEqual(body, {
      data: [{ id: body.data[0].id, orderId, productId: product.id, qty: 4, unitPrice: 275, lineTotal: 1100, currency: 'CHF' }],
      meta: { total: 1, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    });
    assert.deepEqual(body.data, await itemsInDb(orderId));
    assert.equal(user.id, placed.json().customerId);
  });

  test('several items, in id order, paged with Link', async () => {
    const { user, token } = await createCustomer(t);
    const order = await orderWithItems(user.id, 5, 'JPY');
    const all = await itemsInDb(order.id);
    assert.equal(all.length, 5);

    const page2 = await get(t, token, `/order-items?orderId=${order.id}&pageSize=2&page=2`);
    assert.equal(page2.statusCode, 200);
    const { meta } = page2.json();
    assert.deepEqual(page2.json().data, all.slice(2, 4));
    assert.deepEqual(readableMeta(meta), {
      ...{ total: 5, page: 2, pageSize: 2, totalPages: 3 },
      ...{ nextCursor: { v: [all[3]!.id], n: 3 }, prevCursor: { v: [all[2]!.id], n: 2 } },
    });
    const q = (page: number) => `orderId=${order.id}&pageSize=2&page=${page}`;
    const beside = (name: string, cursor: string) => `orderId=${order.id}&pageSize=2&${name}=${cursor}`;
    assert.equal(
      pagingLinks(page2),
      [
        link(q(1), 'first'),
        link(beside('before', meta.prevCursor), 'prev'),
        link(beside('after', meta.nextCursor), 'next'),
        link(q(3), 'last'),
      ].join(', '),
    );

    const page3 = await get(t, token, `/order-items?orderId=${order.id}&pageSize=2&page=3`);
    assert.deepEqual(page3.json().data, all.slice(4));
    assert.deepEqual(readableMeta(page3.json().meta), {
      ...{ total: 5, page: 3, pageSize: 2, totalPages: 3 },
      ...{ nextCursor: null, prevCursor: { v: [all[4]!.id], n: 4 } },
    });
    // Following the cursors gives the same pages.
    assert.deepEqual((await get(t, token, `/order-items?${beside('after', meta.nextCursor)}`)).json(), page3.json());
    assert.deepEqual((await get(t, token, `/order-items?${beside('before', meta.prevCursor)}`)).json().data, all.slice(0, 2));

    // Past the last page the total is still exact.
    const beyond = await get(t, token, `/order-items?orderId=${order.id}&pageSize=2&page=7`);
    assert.deepEqual(beyond.json(), {
      data: [],
      meta: { total: 5, page: 7, pageSize: 2, totalPages: 3, nextCursor: null, prevCursor: null },
    });
    assert.equal(
      pagingLinks(beyond),
      [
        link(`orderId=${order.id}&pageSize=2&page=1`, 'first'),
        link(`orderId=${order.id}&pageSize=2&page=3`, 'prev'),
        link(`orderId=${order.id}&pageSize=2&page=3`, 'last'),
      ].join(', '),
    );
  });

  test('an order without items: an empty collection', async () => {
    const { user, token } = await createCustomer(t);
    const order = await t.db.transaction((tx) => insertOrder(tx, { customerId: user.id, total: 0, currency: 'EUR' }));
    for (const page of [1, 2]) {
      const res = await get(t, token, `/order-items?orderId=${order.id}&page=${page}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { data: [], meta: { total: 0, page, pageSize: 20, totalPages: 0, nextCursor: null, prevCursor: null } });
    }
  });

  test("staff and service clients read any order's items; /v1 answers the same", async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const expected = {
      data: await itemsInDb(order.id),
      meta: { total: 1, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    };
    for (const reader of [token, await createStaffToken(t), await createServiceToken(t, ['orders:read'])]) {
      for (const url of [`/order-items?orderId=${order.id}`, `/v1/order-items?orderId=${order.id}`]) {
        const res = await get(t, reader, url);
        assert.equal(res.statusCode, 200, url);
        assert.deepEqual(res.json(), expected);
      }
    }
  });

  test('items of a paid or cancelled order remain readable', async () => {
    const { user, token } = await createCustomer(t);
    for (const status of ['paid', 'cancelled'] as const) {
      const order = await createOrder(t.db, user.id, { status });
      assert.deepEqual((await get(t, token, `/order-items?orderId=${order.id}`)).json().data, await itemsInDb(order.id));
    }
  });
});

describe('GET /order-items: not found', () => {
  test("another customer's order → 404 like a missing one", async () => {
    const owner = await createCustomer(t);
    const other = await createCustomer(t);
    const order = await createOrder(t.db, owner.user.id);
    expectProblem(
      await get(t, other.token, `/order-items?orderId=${order.id}`),
      404,
      'ORDER_NOT_FOUND',
      '/order-items',
      `Order ${order.id} does not exist.`,
    );
    expectProblem(
      await get(t, other.token, '/order-items?orderId=2000000000'),
      404,
      'ORDER_NOT_FOUND',
      '/order-items',
      'Order 2000000000 does not exist.',
    );
  });

  test('a deleted order → 404, also for staff', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${order.id}` })).statusCode, 204);
    for (const reader of [token, await createStaffToken(t)]) {
      expectProblem(
        await get(t, reader, `/order-items?orderId=${order.id}`),
        404,
        'ORDER_NOT_FOUND',
        '/order-items',
        `Order ${order.id} does not exist.`,
      );
    }
    assert.equal((await itemsInDb(order.id)).length, 1);
  });
});

describe('GET /order-items: parameters', () => {
  const param = (parameter: string, message: string) => {
    const detail = `query parameter "${parameter}" ${message}`;
    return { code: 'REQUEST_PARAMETER_INVALID' as ErrorCode, detail, errors: [{ detail, parameter }] };
  };
  const unknown = (parameter: string) => {
    const detail = `query parameter "${parameter}" is not supported by this collection`;
    return { code: 'QUERY_UNKNOWN_PARAMETER' as ErrorCode, detail, errors: [{ detail, parameter }] };
  };
  const cases: [string, { code: ErrorCode; detail: string; errors: { detail: string; parameter: string }[] }][] = [
    ['', param('orderId', 'is required')],
    ['page=1', param('orderId', 'is required')],
    ['orderId=', param('orderId', 'must be integer')],
    ['orderId=abc', param('orderId', 'must be integer')],
    ['orderId=0', param('orderId', 'must be >= 1')],
    ['orderId=1.5', param('orderId', 'must be integer')],
    ['orderId=0x1', param('orderId', 'must be integer')],
    ['orderId=1&orderId=2', param('orderId', 'may appear only once')],
    ['orderId=1&pageSize=101', param('pageSize', 'must be <= 100')],
    ['orderId=1&page=0', param('page', 'must be >= 1')],
    ['orderId=1&sort=id', unknown('sort')],
    ['orderId=1&productId=3', unknown('productId')],
    ['orderid=1', unknown('orderid')],
  ];
  for (const [query, expected] of cases) {
    test(`?${query} → 400 ${expected.code}`, async () => {
      const { token } = await createCustomer(t);
      const res = await get(t, token, `/order-items${query ? `?${query}` : ''}`);
      expectProblem(res, 400, expected.code, '/order-items', expected.detail, { errors: expected.errors });
    });
  }

  test('without a token → 401; without orders:read → 403', async () => {
    const { user } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    expectProblem(
      await get(t, undefined, `/order-items?orderId=${order.id}`),
      401,
      'AUTH_TOKEN_MISSING',
      '/order-items',
      'This endpoint requires an access token: Authorization: Bearer <token>.',
    );
    const res = await get(t, await t.token({ userId: user.id, scopes: ['orders:write'] }), `/order-items?orderId=${order.id}`);
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', '/order-items', 'This operation requires the scope "orders:read".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:read"');
  });
});
