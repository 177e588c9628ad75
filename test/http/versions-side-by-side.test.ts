// API v2 beside v1 (spec part 9): the same resources in both versions, v1 rendered from v2 through
// the version changes (src/http/versions/). Every response here is also checked against its own
// version's OpenAPI document by TestApp.request.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createCustomer, createStaffToken } from '../helpers/actors.ts';
import { createProduct } from '../helpers/factories.ts';
import { expectProblem } from '../helpers/problems.ts';

const V1 = 'application/vnd.orderpay.v1+json';
const V2 = 'application/vnd.orderpay.v2+json';
const GUIDE_LINK = '<http://orderpay.test/docs/migrating-to-v2>; rel="deprecation"; type="text/markdown"';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const money = (value: number, currency = 'EUR') => ({ value, currency });

async function placeV2Order(token: string, items: { productId: number; qty: number }[]) {
  return t.request(token, { method: 'POST', url: '/v2/orders', payload: { items } });
}

describe('orders in v2 and v1', () => {
  test('an order of several items placed in v2: v2 embeds them, v1 shows the full total without them', async () => {
    const { user, token } = await createCustomer(t);
    const cheap = await createProduct(t.db, { price: 250 });
    const dear = await createProduct(t.db, { price: 1000 });
    const created = await placeV2Order(token, [
      { productId: cheap.id, qty: 2 },
      { productId: dear.id, qty: 1 },
    ]);
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers['api-version'], '2');
    assert.equal(created.headers.deprecation, undefined);
    const order = created.json();
    assert.equal(created.headers.location, `http://orderpay.test/v2/orders/${order.id}`);
    assert.deepEqual(order.total, money(1500));
    assert.equal(order.customerId, user.id);
    assert.deepEqual(
      order.items.map((i: { productId: number; qty: number; unitPrice: unknown; lineTotal: unknown }) => [
        i.productId,
        i.qty,
        i.unitPrice,
        i.lineTotal,
      ]),
      [
        [cheap.id, 2, money(250), money(500)],
        [dear.id, 1, money(1000), money(1000)],
      ],
    );
    assert.equal('currency' in order, false);

    const v1 = await t.request(token, { method: 'GET', url: `/v1/orders/${order.id}` });
    assert.equal(v1.statusCode, 200);
    assert.deepEqual(v1.json(), {
      id: order.id,
      status: 'pending',
      customerId: user.id,
      total: 1500,
      currency: 'EUR',
      createdAt: order.createdAt,
      updatedAt: order.updatedAt,
    });
    const items = await t.request(token, { method: 'GET', url: `/v1/order-items?orderId=${order.id}` });
    assert.deepEqual(
      items.json().data.map((i: { productId: number; lineTotal: number; currency: string }) => [i.productId, i.lineTotal, i.currency]),
      [
        [cheap.id, 500, 'EUR'],
        [dear.id, 1000, 'EUR'],
      ],
    );
  });

  test('an order placed in v1 reads in v2 with money objects and its one item', async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 700, currency: 'USD' });
    const created = await t.request(token, { method: 'POST', url: '/v1/orders', payload: { productId: product.id, qty: 3 } });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual([created.json().total, created.json().currency], [2100, 'USD']);
    const v2 = await t.request(token, { method: 'GET', url: `/v2/orders/${created.json().id}` });
    assert.equal(v2.statusCode, 200);
    assert.deepEqual(v2.json().total, money(2100, 'USD'));
    assert.equal(v2.json().items.length, 1);
    assert.deepEqual(v2.json().items[0].lineTotal, money(2100, 'USD'));
    // Lists embed the items of every order of the page too.
    const list = await t.request(token, { method: 'GET', url: '/v2/orders' });
    assert.deepEqual(list.json().data[0].items, v2.json().items);
  });

  test("the same order's ETags differ between versions, and If-Match with the other version's tag is a 412", async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db);
    const order = (await placeV2Order(token, [{ productId: product.id, qty: 1 }])).json();
    const v1 = await t.request(token, { method: 'GET', url: `/v1/orders/${order.id}` });
    const v2 = await t.request(token, { method: 'GET', url: `/v2/orders/${order.id}` });
    assert.equal(v1.headers.etag, `"o${order.id}.1.v1"`);
    assert.equal(v2.headers.etag, `"o${order.id}.1.v2"`);
    const crossed = await t.request(token, {
      method: 'PUT',
      url: `/v2/orders/${order.id}`,
      payload: { status: 'cancelled' },
      headers: { 'if-match': v1.headers.etag as string },
    });
    expectProblem(
      crossed,
      412,
      'REQUEST_PRECONDITION_FAILED',
      `/v2/orders/${order.id}`,
      'If-Match does not match the current entity tag; read the resource again.',
      { currentEtag: v2.headers.etag },
    );
    const notModified = await t.request(token, {
      method: 'GET',
      url: `/v2/orders/${order.id}`,
      headers: { 'if-none-match': v1.headers.etag as string },
    });
    assert.equal(notModified.statusCode, 200, 'a v1 tag does not revalidate the v2 representation');
  });

  test('a v2 PUT of the order as read (money objects, items) changes its status, and repeating it gives the same 200', async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db);
    const order = (await placeV2Order(token, [{ productId: product.id, qty: 2 }])).json();
    const put = () => t.request(token, { method: 'PUT', url: `/v2/orders/${order.id}`, payload: { ...order, status: 'cancelled' } });
    const first = await put();
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().status, 'cancelled');
    const again = await put();
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json(), first.json());
    const changedTotal = await t.request(token, {
      method: 'PUT',
      url: `/v2/orders/${order.id}`,
      payload: { status: 'cancelled', total: money(1, 'EUR') },
    });
    expectProblem(changedTotal, 422, 'ORDER_READ_ONLY_FIELD', `/v2/orders/${order.id}`, 'Read-only fields differ from the order: total.', {
      errors: [{ pointer: '/total', detail: `total is read-only; send ${JSON.stringify(money(2500))} or omit it` }],
    });
  });

  test('one currency per order: a line in another → 422 naming the line; nothing is stored', async () => {
    const { user, token } = await createCustomer(t);
    const euro = await createProduct(t.db, { currency: 'EUR' });
    const dollar = await createProduct(t.db, { currency: 'USD' });
    const res = await placeV2Order(token, [
      { productId: euro.id, qty: 1 },
      { productId: dollar.id, qty: 1 },
    ]);
    expectProblem(res, 422, 'ORDER_CURRENCY_MIXED', '/v2/orders', "Line 1 is priced in USD, the order's first line in EUR.", {
      errors: [{ pointer: '/items/1/productId', detail: `product ${dollar.id} is priced in USD, not EUR` }],
    });
    const { rows } = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE customer_id = $1', [user.id]);
    assert.equal(rows[0]!.n, 0);
  });

  test('lines are 1–100; an unknown product is named by its line, in v2 and (as /productId) in v1', async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db);
    const none = await placeV2Order(token, []);
    assert.equal(none.statusCode, 400);
    const tooMany = await placeV2Order(
      token,
      Array.from({ length: 101 }, () => ({ productId: product.id, qty: 1 })),
    );
    assert.equal(tooMany.statusCode, 400);
    const hundred = await placeV2Order(
      token,
      Array.from({ length: 100 }, () => ({ productId: product.id, qty: 1 })),
    );
    assert.equal(hundred.statusCode, 201, hundred.body);
    assert.equal(hundred.json().items.length, 100);

    const dear = await createProduct(t.db, { price: 1_000_000_000_000 });
    const tooLarge = await placeV2Order(
      token,
      Array.from({ length: 2 }, () => ({ productId: dear.id, qty: 1000 })),
    );
    expectProblem(
      tooLarge,
      422,
      'ORDER_TOTAL_TOO_LARGE',
      '/v2/orders',
      'The order total 2000000000000000 exceeds 1000000000000000 minor units.',
      {
        errors: [{ pointer: '/items', detail: 'the lines add up to more than 1000000000000000' }],
      },
    );

    const unknown = await placeV2Order(token, [
      { productId: product.id, qty: 1 },
      { productId: 2_000_000_000, qty: 1 },
    ]);
    expectProblem(unknown, 422, 'ORDER_PRODUCT_NOT_FOUND', '/v2/orders', 'Product 2000000000 does not exist.', {
      errors: [{ pointer: '/items/1/productId', detail: 'no such product' }],
    });
    const unknownV1 = await t.request(token, { method: 'POST', url: '/v1/orders', payload: { productId: 2_000_000_000, qty: 1 } });
    expectProblem(unknownV1, 422, 'ORDER_PRODUCT_NOT_FOUND', '/v1/orders', 'Product 2000000000 does not exist.', {
      errors: [{ pointer: '/productId', detail: 'no such product' }],
    });
  });
});

describe('money objects in requests', () => {
  test('POST /v2/payments takes a money object; a mismatch points into it, in v1 at the flat fields', async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 1250 });
    const order = (await placeV2Order(token, [{ productId: product.id, qty: 1 }])).json();
    const pay = (url: string, payload: Record<string, unknown>) =>
      t.request(token, { method: 'POST', url, payload, headers: { 'idempotency-key': randomUUID() } });
    const wrong = await pay('/v2/payments', { amount: money(1000, 'USD'), orderId: order.id });
    assert.equal(wrong.statusCode, 422, wrong.body);
    assert.deepEqual(
      wrong.json().errors.map((e: { pointer: string }) => e.pointer),
      ['/amount/value', '/amount/currency'],
    );
    const wrongV1 = await pay('/v1/payments', { amount: 1000, currency: 'USD', orderId: order.id });
    assert.deepEqual(
      wrongV1.json().errors.map((e: { pointer: string }) => e.pointer),
      ['/amount', '/currency'],
    );
    const paid = await pay('/v2/payments', { amount: money(1250), orderId: order.id });
    assert.equal(paid.statusCode, 201, paid.body);
    assert.deepEqual([paid.json().amount, paid.json().amountRefunded, paid.json().status], [money(1250), money(0), 'succeeded']);
    const v1 = await t.request(token, { method: 'GET', url: `/v1/payments/${paid.json().id}` });
    assert.deepEqual([v1.json().amount, v1.json().currency, v1.json().amountRefunded], [1250, 'EUR', 0]);
  });

  test("a v2 refund names its currency: the payment's, else 422; v1 refunds name none", async () => {
    const { token } = await createCustomer(t);
    const staff = await createStaffToken(t);
    const payment = (
      await t.request(token, {
        method: 'POST',
        url: '/v2/payments',
        payload: { amount: money(1000) },
        headers: { 'idempotency-key': randomUUID() },
      })
    ).json();
    const refund = (url: string, payload: Record<string, unknown>) =>
      t.request(staff, { method: 'POST', url, payload, headers: { 'idempotency-key': randomUUID() } });
    const other = await refund(`/v2/payments/${payment.id}/refunds`, { amount: money(100, 'USD') });
    expectProblem(
      other,
      422,
      'PAYMENT_REFUND_CURRENCY_MISMATCH',
      `/v2/payments/${payment.id}/refunds`,
      'The payment is in EUR; a refund of it cannot be in USD.',
      { errors: [{ pointer: '/amount/currency', detail: "must be the payment's currency EUR" }] },
    );
    const v2 = await refund(`/v2/payments/${payment.id}/refunds`, { amount: money(100) });
    assert.equal(v2.statusCode, 201, v2.body);
    assert.deepEqual(v2.json().amount, money(100));
    const v1 = await refund(`/v1/payments/${payment.id}/refunds`, { amount: 200 });
    assert.equal(v1.statusCode, 201, v1.body);
    assert.deepEqual([v1.json().amount, v1.json().currency], [200, 'EUR']);
    const tooMuch = await refund(`/v1/payments/${payment.id}/refunds`, { amount: 5000 });
    assert.deepEqual(tooMuch.json().errors, [{ pointer: '/amount', detail: 'must be at most 700' }]);
  });

  test('products: v2 writes and reads price as a money object, v1 as price and currency', async () => {
    const staff = await createStaffToken(t);
    const created = await t.request(staff, {
      method: 'POST',
      url: '/v2/products',
      payload: { name: 'Teapot', price: money(4200, 'GBP') },
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json().price, money(4200, 'GBP'));
    const id = created.json().id;
    const replaced = await t.request(staff, {
      method: 'PUT',
      url: `/v2/products/${id}`,
      payload: { name: 'Teapot', price: money(4500, 'GBP'), active: true },
    });
    assert.equal(replaced.statusCode, 200, replaced.body);
    const v1 = await t.request(staff, { method: 'GET', url: `/v1/products/${id}` });
    assert.deepEqual([v1.json().price, v1.json().currency], [4500, 'GBP']);
    const badCurrency = await t.request(staff, { method: 'POST', url: '/v2/products', payload: { name: 'X', price: money(1, 'XXY') } });
    expectProblem(badCurrency, 400, 'REQUEST_BODY_INVALID', '/v2/products', '/price/currency "XXY" is not an ISO 4217 currency code.', {
      errors: [{ pointer: '/price/currency', detail: '"XXY" is not an ISO 4217 currency code' }],
    });
  });
});

describe('negotiation and the migration window', () => {
  test(`unversioned paths: Accept picks the version and is echoed; without it, a token with no pin gets v1`, async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db);
    const order = (await placeV2Order(token, [{ productId: product.id, qty: 1 }])).json();
    const asV2 = await t.request(token, { method: 'GET', url: `/orders/${order.id}`, headers: { accept: V2 } });
    assert.equal(asV2.headers['content-type'], `${V2}; charset=utf-8`);
    assert.equal(asV2.headers.vary, 'Accept');
    assert.deepEqual(asV2.json().total, money(1250));
    const unpinned = await t.request(token, { method: 'GET', url: `/orders/${order.id}` });
    assert.equal(unpinned.headers['api-version'], '1');
    assert.equal(unpinned.json().total, 1250);
    const asV1 = await t.request(token, { method: 'GET', url: `/orders/${order.id}`, headers: { accept: V1 } });
    assert.equal(asV1.json().currency, 'EUR');
  });

  test("a client pinned to v2 gets v2 on unversioned paths without Accept; Accept overrides the pin; v1's pin stays v1", async () => {
    const { user } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 300 });
    const pinned = await t.token({ userId: user.id, apiVersion: 2 });
    const created = await t.request(pinned, { method: 'POST', url: '/orders', payload: { items: [{ productId: product.id, qty: 1 }] } });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers['api-version'], '2');
    assert.equal(created.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(created.headers.location, `http://orderpay.test/orders/${created.json().id}`);
    const read = await t.request(pinned, { method: 'GET', url: `/orders/${created.json().id}` });
    assert.deepEqual(read.json().total, money(300));
    assert.equal(read.headers.etag, `"o${created.json().id}.1.v2"`);
    assert.equal(read.headers.deprecation, undefined);
    const overridden = await t.request(pinned, { method: 'GET', url: `/orders/${created.json().id}`, headers: { accept: V1 } });
    assert.equal(overridden.headers['api-version'], '1');
    assert.deepEqual([overridden.json().total, overridden.json().currency], [300, 'EUR']);
    const pinnedToV1 = await t.token({ userId: user.id, apiVersion: 1 });
    const old = await t.request(pinnedToV1, { method: 'GET', url: `/orders/${created.json().id}` });
    assert.equal(old.headers['api-version'], '1');
    // A v1 body on the path a v2 client uses is refused by v2's schema, naming the missing items.
    const v1Body = await t.request(pinned, { method: 'POST', url: '/orders', payload: { productId: product.id, qty: 1 } });
    assert.equal(v1Body.statusCode, 400);
  });

  test("Accept weights decide between versions (q, case-insensitive; q=0 refuses), ties in the client's order", async () => {
    const { token } = await createCustomer(t);
    for (const [accept, version] of [
      [`${V2};q=0.1, ${V1}`, '1'],
      [`${V1};q=0.5, ${V2};q=0.9`, '2'],
      [`${V2};Q=0`, '1'],
      [`${V2};Q=0, ${V1}`, '1'],
      [`${V2}, ${V1}`, '2'],
      [`${V1}, ${V2}`, '1'],
    ] as const) {
      const res = await t.request(token, { method: 'GET', url: '/orders', headers: { accept } });
      assert.equal(res.statusCode, 200, `${accept}: ${res.body}`);
      assert.equal(res.headers['api-version'], version, accept);
    }
  });

  test('a /v1 path refused by Accept (406) still names its version and carries its dates', async () => {
    const { token } = await createCustomer(t);
    const res = await t.request(token, { method: 'GET', url: '/v1/orders', headers: { accept: V2 } });
    assert.equal(res.statusCode, 406);
    assert.equal(res.headers['api-version'], '1');
    assert.ok(res.headers.deprecation);
    assert.ok(res.headers.sunset);
    assert.ok(String(res.headers.link).endsWith(GUIDE_LINK));
  });

  test('every v1 response carries Deprecation, Sunset and the guide link; v2 responses none', async () => {
    const { token } = await createCustomer(t);
    const deprecation = `@${Math.floor(t.config.apiDeprecations[0]!.deprecation.getTime() / 1000)}`;
    const sunset = t.config.apiDeprecations[0]!.sunset.toUTCString();
    for (const [url, status, auth] of [
      ['/v1/orders', 200, token],
      ['/v1/orders/2000000000', 404, token],
      ['/v1/products?bogus=1', 400, token],
      ['/v1/orders', 401, undefined],
      ['/orders', 200, token],
    ] as const) {
      const res = await t.request(auth, { method: 'GET', url });
      assert.equal(res.statusCode, status, url);
      assert.equal(res.headers.deprecation, deprecation, url);
      assert.equal(res.headers.sunset, sunset, url);
      assert.ok(String(res.headers.link).endsWith(GUIDE_LINK), url);
    }
    const v2 = await t.request(token, { method: 'GET', url: '/v2/orders' });
    assert.equal(v2.headers.deprecation, undefined);
    assert.equal(v2.headers.sunset, undefined);
    assert.equal(String(v2.headers.link).includes('deprecation'), false);
  });

  test('GET /docs/migrating-to-v2 serves the migration guide the Link points to', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/migrating-to-v2' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/markdown/);
    assert.match(res.body, /^# Migrating from v1 to v2/m);
  });
});

describe('after the sunset', () => {
  let retired: TestApp;
  before(async () => {
    retired = await startTestApp({
      apiDeprecations: [{ version: 1, deprecation: new Date('2020-01-01T00:00:00Z'), sunset: new Date('2020-07-01T00:00:00Z') }],
    });
  });
  after(() => retired.close());

  test('v1 answers 410 VERSION_SUNSET pointing to the guide, on /v1 and unversioned paths; v2 goes on', async () => {
    const { token } = await createCustomer(retired);
    for (const url of ['/v1/orders', '/orders']) {
      const res = await retired.request(token, { method: 'GET', url });
      expectProblem(
        res,
        410,
        'VERSION_SUNSET',
        url,
        'API v1 was retired on 2020-07-01T00:00:00.000Z; use v2 (migration guide: http://orderpay.test/docs/migrating-to-v2).',
        { migrationGuide: 'http://orderpay.test/docs/migrating-to-v2' },
      );
      assert.equal(res.headers.sunset, 'Wed, 01 Jul 2020 00:00:00 GMT');
    }
    // Accept naming another version does not turn a retired /v1 path into a 406: it is gone.
    const contradicted = await retired.request(token, { method: 'GET', url: '/v1/orders', headers: { accept: V2 } });
    assert.equal(contradicted.statusCode, 410);
    const v2 = await retired.request(token, { method: 'GET', url: '/v2/orders' });
    assert.equal(v2.statusCode, 200);
  });
});
