// API versioning (spec part 9): a /v<N> path prefix, or on unversioned paths the vendor media type
// application/vnd.orderpay.v<N>+json in Accept. v1 and v2 exist (v2's own suite: versions-side-by-side.test.ts).
import assert from 'node:assert/strict';
import { pagingLinks } from '../helpers/problems.ts';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createOrder, createProduct, createUser } from '../helpers/factories.ts';

const V1 = 'application/vnd.orderpay.v1+json';
const V2 = 'application/vnd.orderpay.v2+json';
const V4 = 'application/vnd.orderpay.v4+json';
const JSON_UTF8 = 'application/json; charset=utf-8';

describe('API versioning: /v<N> prefix and Accept negotiation', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function customerWithOrder() {
    const customer = await createUser(t.db);
    const order = await createOrder(t.db, customer.id);
    const token = await t.token({ userId: customer.id });
    return { customer, order, token };
  }

  const get = (token: string, url: string, accept?: string) =>
    t.request(token, { method: 'GET', url, headers: accept === undefined ? {} : { accept } });

  function assertNotAcceptable(response: Awaited<ReturnType<typeof get>>, instance: string, detail: string): void {
    assert.equal(response.statusCode, 406, response.body);
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.deepEqual(response.json(), {
      type: 'http://orderpay.test/problems/version-not-acceptable',
      title: 'API version not available',
      status: 406,
      detail,
      instance,
      code: 'VERSION_NOT_ACCEPTABLE',
      requestId: response.headers['x-request-id'],
    });
  }

  test('/v1/orders and /orders both answer with the same collection', async () => {
    const { customer, order, token } = await customerWithOrder();
    const versioned = await get(token, '/v1/orders');
    const unversioned = await get(token, '/orders');
    for (const response of [versioned, unversioned]) {
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], JSON_UTF8);
      // Accept picks the media type on both forms, so both vary by it.
      assert.equal(response.headers.vary, 'Accept');
      assert.equal(response.headers['cache-control'], 'private, no-cache');
      assert.deepEqual(response.json(), {
        data: [
          {
            id: order.id,
            status: 'pending',
            customerId: customer.id,
            total: 1250,
            currency: 'EUR',
            createdAt: order.createdAt,
            updatedAt: order.updatedAt,
          },
        ],
        meta: { total: 1, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
      });
    }
    // Links stay under the prefix the request used.
    assert.equal(
      pagingLinks(versioned),
      '<http://orderpay.test/v1/orders?page=1>; rel="first", <http://orderpay.test/v1/orders?page=1>; rel="last"',
    );
    assert.equal(
      pagingLinks(unversioned),
      '<http://orderpay.test/orders?page=1>; rel="first", <http://orderpay.test/orders?page=1>; rel="last"',
    );
  });

  test('unversioned responses carry Vary: Accept, successes and problems alike', async () => {
    const { order, token } = await customerWithOrder();
    for (const [url, status] of [
      ['/orders', 200],
      [`/orders/${order.id}`, 200],
      ['/orders/999999999', 404],
      ['/orders?bogus=1', 400],
      ['/products', 200],
    ] as const) {
      const response = await get(token, url);
      assert.equal(response.statusCode, status, url);
      assert.equal(response.headers.vary, 'Accept', url);
    }
    const unauthenticated = await t.request(undefined, { method: 'GET', url: '/orders' });
    assert.equal(unauthenticated.statusCode, 401);
    assert.equal(unauthenticated.headers.vary, 'Accept');
  });

  test(`Accept: ${V1} → 200 with the vendor type echoed as Content-Type, on both path forms`, async () => {
    const { customer, order, token } = await customerWithOrder();
    for (const url of [`/orders/${order.id}`, `/v1/orders/${order.id}`]) {
      const response = await get(token, url, V1);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], `${V1}; charset=utf-8`);
      assert.equal(response.headers.vary, 'Accept');
      assert.equal(response.headers.etag, `"o${order.id}.1.v1"`);
      assert.equal(response.headers['cache-control'], 'private, no-cache');
      assert.deepEqual(response.json(), {
        id: order.id,
        status: 'pending',
        customerId: customer.id,
        total: 1250,
        currency: 'EUR',
        createdAt: order.createdAt,
        updatedAt: order.updatedAt,
      });
    }
    const list = await get(token, '/orders', V1);
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['content-type'], `${V1}; charset=utf-8`);
    assert.equal(list.headers.vary, 'Accept');
  });

  test('the vendor type is matched case-insensitively and may sit in a list with parameters', async () => {
    const { token } = await customerWithOrder();
    for (const accept of ['APPLICATION/VND.ORDERPAY.V1+JSON', `text/html, ${V1};q=0.9`, `${V4};q=0.9, ${V1};q=0.5`]) {
      const response = await get(token, '/orders', accept);
      assert.equal(response.statusCode, 200, `${accept}: ${response.body}`);
      assert.equal(response.headers['content-type'], `${V1}; charset=utf-8`, accept);
      assert.equal(response.headers.vary, 'Accept');
    }
  });

  test(`Accept: ${V4} on an unversioned path → 406 VERSION_NOT_ACCEPTABLE`, async () => {
    const { order, token } = await customerWithOrder();
    for (const url of ['/orders', `/orders/${order.id}`, '/products']) {
      const response = await get(token, url, V4);
      assertNotAcceptable(response, url, 'API v4 is not available; supported: v1, v2, v3.');
      assert.equal(response.headers.vary, 'Accept');
    }
  });

  test('the version is negotiated before authentication: a v4 request without a token is still 406', async () => {
    const response = await t.request(undefined, { method: 'GET', url: '/orders', headers: { accept: V4 } });
    assertNotAcceptable(response, '/orders', 'API v4 is not available; supported: v1, v2, v3.');
  });

  test(`a /v1 path with Accept: ${V2} → 406 (the path and the header contradict each other)`, async () => {
    const { order, token } = await customerWithOrder();
    for (const url of ['/v1/orders', `/v1/orders/${order.id}`]) {
      const response = await get(token, url, V2);
      assertNotAcceptable(response, url, 'The path selects API v1 but Accept asks for v2.');
      assert.equal(response.headers.vary, 'Accept');
    }
  });

  test('a path of a version not served → 404 ROUTE_NOT_FOUND, whatever Accept says', async () => {
    const { order, token } = await customerWithOrder();
    for (const [url, accept] of [
      ['/v4/orders', undefined],
      [`/v4/orders/${order.id}`, V4],
      ['/v0/orders', undefined],
      ['/v99/products', V1],
    ] as const) {
      const response = await get(token, url, accept);
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.deepEqual(response.json(), {
        type: 'http://orderpay.test/problems/route-not-found',
        title: 'Not found',
        status: 404,
        detail: `No resource at ${url}.`,
        instance: url,
        code: 'ROUTE_NOT_FOUND',
        requestId: response.headers['x-request-id'],
      });
    }
  });

  test('Accept: application/json, */* or no Accept → v1 as application/json', async () => {
    const { customer, order, token } = await customerWithOrder();
    for (const accept of [undefined, 'application/json', '*/*', 'application/*', 'application/json, text/plain;q=0.5']) {
      const response = await get(token, `/orders/${order.id}`, accept);
      assert.equal(response.statusCode, 200, `${accept}: ${response.body}`);
      assert.equal(response.headers['content-type'], JSON_UTF8, accept);
      assert.equal(response.headers.vary, 'Accept');
      assert.equal(response.headers.etag, `"o${order.id}.1.v1"`);
      assert.equal(response.json().customerId, customer.id);
    }
  });

  test('POST /v1/orders and POST /orders both create; Location keeps the prefix of the request', async () => {
    const customer = await createUser(t.db);
    const product = await createProduct(t.db, { price: 700, currency: 'EUR' });
    const token = await t.token({ userId: customer.id });
    for (const prefix of ['/v1', '']) {
      const response = await t.request(token, { method: 'POST', url: `${prefix}/orders`, payload: { productId: product.id, qty: 2 } });
      assert.equal(response.statusCode, 201, response.body);
      assert.equal(response.headers['content-type'], JSON_UTF8);
      const body = response.json();
      assert.equal(response.headers.location, `http://orderpay.test${prefix}/orders/${body.id}`);
      assert.equal(response.headers.etag, `"o${body.id}.1.v1"`);
      assert.deepEqual(body, {
        id: body.id,
        status: 'pending',
        customerId: customer.id,
        total: 1400,
        currency: 'EUR',
        createdAt: body.createdAt,
        updatedAt: body.createdAt,
      });
      assert.equal(typeof body.id, 'number');
    }
    const { rows } = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM orders WHERE customer_id = $1', [customer.id]);
    assert.equal(rows[0]!.n, 2);
  });

  test('an ETag from /v1 revalidates on the unversioned path (both are the v1 representation)', async () => {
    const { order, token } = await customerWithOrder();
    const first = await get(token, `/v1/orders/${order.id}`);
    assert.equal(first.statusCode, 200);
    const revalidated = await t.request(token, {
      method: 'GET',
      url: `/orders/${order.id}`,
      headers: { 'if-none-match': first.headers.etag as string },
    });
    assert.equal(revalidated.statusCode, 304);
    assert.equal(revalidated.body, '');
    assert.equal(revalidated.headers.etag, first.headers.etag);
    assert.equal(revalidated.headers.vary, 'Accept');
  });
});
