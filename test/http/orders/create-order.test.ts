// POST /v1/orders and POST /orders: the signed-in user orders qty units of one product; the
// total is price × qty in the product's currency. Every refusal leaves the database unchanged.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCustomer, createServiceToken } from '../../helpers/actors.ts';
import { PUBLIC_URL, setUpTestApp } from '../../helpers/app.ts';
import { createProduct, createUser } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';

const t = setUpTestApp();

const JSON_TYPE = 'application/json; charset=utf-8';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const post = (token: string | undefined, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.request(token, { method: 'POST', url, payload: payload as string, headers });

async function ordersOf(customerId: number) {
  const { rows } = await t.db.query<Record<string, unknown>>(
    `SELECT id, status, customer_id, total, currency, version, deleted_at, created_at = updated_at AS untouched
       FROM orders WHERE customer_id = $1 ORDER BY id`,
    [customerId],
  );
  return rows;
}

async function itemsOf(orderId: number) {
  const { rows } = await t.db.query<Record<string, unknown>>(
    'SELECT order_id, product_id, qty, unit_price, line_total FROM order_items WHERE order_id = $1 ORDER BY id',
    [orderId],
  );
  return rows;
}

async function itemCount(): Promise<number> {
  return (await t.db.query<{ n: number }>('SELECT count(*) AS n FROM order_items')).rows[0]!.n;
}

describe('POST /orders: 201', () => {
  for (const prefix of ['/v1', '']) {
    test(`POST ${prefix}/orders → 201 with Location, ETag and the order; rows written`, async () => {
      const { user, token } = await createCustomer(t);
      const product = await createProduct(t.db, { price: 1999, currency: 'EUR' });
      const res = await post(token, `${prefix}/orders`, { productId: product.id, qty: 3 });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.equal(typeof body.id, 'number');
      assert.equal(res.headers.location, `${PUBLIC_URL}${prefix}/orders/${body.id}`);
      assert.equal(res.headers.etag, `"o${body.id}.1.v1"`);
      assert.deepEqual(body, {
        id: body.id,
        status: 'pending',
        customerId: user.id,
        total: 5997,
        currency: 'EUR',
        createdAt: body.createdAt,
        updatedAt: body.createdAt,
      });
      assert.match(body.createdAt, TIMESTAMP);

      assert.deepEqual(await ordersOf(user.id), [
        {
          id: body.id,
          status: 'pending',
          customer_id: user.id,
          total: 5997,
          currency: 'EUR',
          version: 1,
          deleted_at: null,
          untouched: true,
        },
      ]);
      assert.deepEqual(await itemsOf(body.id), [{ order_id: body.id, product_id: product.id, qty: 3, unit_price: 1999, line_total: 5997 }]);

      // The Location answers with the same representation and tag.
      const read = await t.request(token, { method: 'GET', url: new URL(res.headers.location as string).pathname });
      assert.equal(read.statusCode, 200);
      assert.deepEqual(read.json(), body);
      assert.equal(read.headers.etag, res.headers.etag);
    });
  }

  test("the total is price × qty in the product's currency (minor units, no float)", async () => {
    const cases: [price: number, currency: string, qty: number, total: number][] = [
      [1234, 'JPY', 7, 8638],
      [1, 'USD', 1000, 1000],
      [0, 'GBP', 5, 0],
      [1_000_000_000_000, 'EUR', 1000, 1_000_000_000_000_000],
      [333, 'KWD', 3, 999],
    ];
    const { user, token } = await createCustomer(t);
    for (const [price, currency, qty, total] of cases) {
      const product = await createProduct(t.db, { price, currency });
      const res = await post(token, '/v1/orders', { productId: product.id, qty });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual([res.json().total, res.json().currency], [total, currency]);
      assert.deepEqual(await itemsOf(res.json().id), [
        { order_id: res.json().id, product_id: product.id, qty, unit_price: price, line_total: total },
      ]);
    }
    assert.deepEqual(
      (await ordersOf(user.id)).map((o) => [o.total, o.currency]),
      cases.map(([, currency, , total]) => [total, currency]),
    );
  });

  test('qty 1 and 1000 are the bounds accepted', async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 5 });
    for (const qty of [1, 1000]) {
      const res = await post(token, '/orders', { productId: product.id, qty });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().total, 5 * qty);
    }
  });

  test('a later price change does not touch a placed order', async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 100 });
    const res = await post(token, '/orders', { productId: product.id, qty: 2 });
    await t.db.query('UPDATE products SET price = 999 WHERE id = $1', [product.id]);
    const read = await t.request(token, { method: 'GET', url: `/orders/${res.json().id}` });
    assert.equal(read.json().total, 200);
    assert.deepEqual(await itemsOf(res.json().id), [
      { order_id: res.json().id, product_id: product.id, qty: 2, unit_price: 100, line_total: 200 },
    ]);
  });

  test('a staff user places an order as themselves', async () => {
    const staff = await createUser(t.db, 'staff');
    const product = await createProduct(t.db, { price: 10 });
    const res = await post(await t.token({ userId: staff.id, staff: true }), '/orders', { productId: product.id, qty: 1 });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().customerId, staff.id);
  });

  test('the vendor media type in Accept is answered in kind', async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db);
    const res = await post(token, '/orders', { productId: product.id, qty: 1 }, { accept: 'application/vnd.orderpay.v1+json' });
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['content-type'], 'application/vnd.orderpay.v1+json; charset=utf-8');
    assert.equal(res.headers.location, `${PUBLIC_URL}/orders/${res.json().id}`);
  });
});

describe('POST /orders: invalid bodies → 400 with a pointer, nothing written', () => {
  const invalid = (pointer: string, message: string) => ({ pointer, detail: `${pointer} ${message}` });
  const cases: [name: string, body: (productId: number) => unknown, errors: { pointer: string; detail: string }[]][] = [
    ['qty 0', (productId) => ({ productId, qty: 0 }), [invalid('/qty', 'must be >= 1')]],
    ['qty 1001', (productId) => ({ productId, qty: 1001 }), [invalid('/qty', 'must be <= 1000')]],
    ['qty "5" (a string, not coerced)', (productId) => ({ productId, qty: '5' }), [invalid('/qty', 'must be integer')]],
    ['qty 1.5', (productId) => ({ productId, qty: 1.5 }), [invalid('/qty', 'must be integer')]],
    ['qty -1', (productId) => ({ productId, qty: -1 }), [invalid('/qty', 'must be >= 1')]],
    ['qty null', (productId) => ({ productId, qty: null }), [invalid('/qty', 'must be integer')]],
    ['qty missing', (productId) => ({ productId }), [invalid('/qty', 'is required')]],
    ['productId missing', () => ({ qty: 1 }), [invalid('/productId', 'is required')]],
    ['productId "1"', () => ({ productId: '1', qty: 1 }), [invalid('/productId', 'must be integer')]],
    ['productId 0', () => ({ productId: 0, qty: 1 }), [invalid('/productId', 'must be >= 1')]],
    ['an unknown field', (productId) => ({ productId, qty: 1, price: 1 }), [invalid('/price', 'is not a known field')]],
    ['customerId in the body', (productId) => ({ productId, qty: 1, customerId: 1 }), [invalid('/customerId', 'is not a known field')]],
    [
      'several problems at once',
      () => ({ qty: 0, note: 'x' }),
      [invalid('/note', 'is not a known field'), invalid('/productId', 'is required'), invalid('/qty', 'must be >= 1')],
    ],
    ['an array body', () => [], [{ pointer: '', detail: 'body must be object' }]],
    ['a JSON string body', () => JSON.stringify('text'), [{ pointer: '', detail: 'body must be object' }]],
  ];
  for (const [name, body, errors] of cases) {
    test(name, async () => {
      const { user, token } = await createCustomer(t);
      const product = await createProduct(t.db);
      const items = await itemCount();
      const res = await post(token, '/v1/orders', body(product.id), { 'content-type': 'application/json' });
      const sorted = [...errors].sort((a, b) => a.pointer.localeCompare(b.pointer));
      const actual = res.json().errors as { pointer: string; detail: string }[] | undefined;
      // Ajv reports in schema order; compare as a set, then the whole body in that order.
      assert.deepEqual(
        [...(actual ?? [])].sort((a, b) => a.pointer.localeCompare(b.pointer)),
        sorted,
      );
      expectProblem(res, 400, 'REQUEST_BODY_INVALID', '/v1/orders', (actual ?? []).map((e) => e.detail).join('; '), { errors: actual });
      assert.deepEqual(await ordersOf(user.id), []);
      assert.equal(await itemCount(), items);
    });
  }
});

describe('POST /orders: refused → nothing written', () => {
  test('a product that does not exist → 422 ORDER_PRODUCT_NOT_FOUND', async () => {
    const { user, token } = await createCustomer(t);
    const res = await post(token, '/v1/orders', { productId: 2_000_000_000, qty: 1 });
    expectProblem(res, 422, 'ORDER_PRODUCT_NOT_FOUND', '/v1/orders', 'Product 2000000000 does not exist.', {
      errors: [{ pointer: '/productId', detail: 'no such product' }],
    });
    assert.deepEqual(await ordersOf(user.id), []);
  });

  test('an inactive product → 422 ORDER_PRODUCT_INACTIVE', async () => {
    const { user, token } = await createCustomer(t);
    const product = await createProduct(t.db, { active: false });
    const res = await post(token, '/orders', { productId: product.id, qty: 1 });
    expectProblem(res, 422, 'ORDER_PRODUCT_INACTIVE', '/orders', `Product ${product.id} is not for sale.`, {
      errors: [{ pointer: '/productId', detail: 'product is not active' }],
    });
    assert.deepEqual(await ordersOf(user.id), []);
  });

  test('a service (client credentials) token → 403 ORDER_CUSTOMER_REQUIRED', async () => {
    const product = await createProduct(t.db);
    const items = await itemCount();
    const res = await post(await createServiceToken(t, ['orders:read', 'orders:write']), '/v1/orders', { productId: product.id, qty: 1 });
    expectProblem(
      res,
      403,
      'ORDER_CUSTOMER_REQUIRED',
      '/v1/orders',
      'Orders are placed by a signed-in user; this token belongs to a service client.',
    );
    assert.equal(await itemCount(), items);
  });

  test('a token for a user that does not exist → 403 AUTH_SUBJECT_UNKNOWN, no row left behind', async () => {
    const product = await createProduct(t.db);
    const items = await itemCount();
    const ghost = 1_999_999_999;
    const res = await post(await t.token({ userId: ghost }), '/v1/orders', { productId: product.id, qty: 1 });
    expectProblem(res, 403, 'AUTH_SUBJECT_UNKNOWN', '/v1/orders', `User ${ghost} named by the access token does not exist.`);
    assert.deepEqual(await ordersOf(ghost), []);
    assert.equal(await itemCount(), items);
  });

  test('without orders:write → 403 insufficient_scope naming it', async () => {
    const { user } = await createCustomer(t);
    const product = await createProduct(t.db);
    const res = await post(await t.token({ userId: user.id, scopes: ['orders:read', 'products:write'] }), '/v1/orders', {
      productId: product.id,
      qty: 1,
    });
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', '/v1/orders', 'This operation requires the scope "orders:write".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:write"');
    assert.deepEqual(await ordersOf(user.id), []);
  });

  test('without a token → 401', async () => {
    const product = await createProduct(t.db);
    const res = await post(undefined, '/v1/orders', { productId: product.id, qty: 1 });
    expectProblem(res, 401, 'AUTH_TOKEN_MISSING', '/v1/orders', 'This endpoint requires an access token: Authorization: Bearer <token>.');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay"');
  });

  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
    test(`Content-Type ${contentType} → 415`, async () => {
      const { user, token } = await createCustomer(t);
      const product = await createProduct(t.db);
      const res = await post(token, '/v1/orders', JSON.stringify({ productId: product.id, qty: 1 }), { 'content-type': contentType });
      expectProblem(res, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE', '/v1/orders', 'Send the body as application/json.');
      assert.deepEqual(await ordersOf(user.id), []);
    });
  }

  test('a body over 64 KiB → 413', async () => {
    const { user, token } = await createCustomer(t);
    const product = await createProduct(t.db);
    const payload = JSON.stringify({ productId: product.id, qty: 1, padding: 'x'.repeat(64 * 1024) });
    const res = await post(token, '/v1/orders', payload, { 'content-type': 'application/json' });
    expectProblem(res, 413, 'REQUEST_BODY_TOO_LARGE', '/v1/orders', 'The request body exceeds the 64 KiB limit.');
    assert.deepEqual(await ordersOf(user.id), []);
  });

  test('a body just under 64 KiB is read (and its unknown field refused)', async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db);
    const base = JSON.stringify({ productId: product.id, qty: 1, padding: '' });
    const payload = JSON.stringify({ productId: product.id, qty: 1, padding: 'x'.repeat(64 * 1024 - base.length) });
    assert.equal(Buffer.byteLength(payload), 64 * 1024);
    const res = await post(token, '/v1/orders', payload, { 'content-type': 'application/json' });
    expectProblem(res, 400, 'REQUEST_BODY_INVALID', '/v1/orders', '/padding is not a known field', {
      errors: [{ pointer: '/padding', detail: '/padding is not a known field' }],
    });
  });

  for (const [name, payload, detail] of [
    ['malformed JSON', '{"productId": 1, "qty":', 'The body is not valid JSON.'],
    ['a trailing comma', '{"productId": 1, "qty": 1,}', 'The body is not valid JSON.'],
    ['an empty body', '', 'The JSON body is empty.'],
  ] as const) {
    test(`${name} → 400 REQUEST_BODY_MALFORMED`, async () => {
      const { user, token } = await createCustomer(t);
      const res = await post(token, '/v1/orders', payload, { 'content-type': 'application/json' });
      expectProblem(res, 400, 'REQUEST_BODY_MALFORMED', '/v1/orders', detail);
      assert.deepEqual(await ordersOf(user.id), []);
    });
  }
});
