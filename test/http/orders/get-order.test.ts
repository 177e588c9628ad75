// GET /orders/{orderId}: the representation, its strong entity tag and revalidation with
// If-None-Match (RFC 9110 §8.8.3, §13.1.2), and that another customer's order is indistinguishable
// from a missing one.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createCustomer, createServiceToken, createStaffToken, get } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { expectTagged, JSON_TYPE, notModifiedCheck } from '../../helpers/conditional.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { readStoredOrder } from './stored-orders.ts';

const t = setUpTestApp();

const MISSING_ID = 2_000_000_000;

const READ = 'private, no-cache';

function expectOrder(res: LightMyRequestResponse, etag: string, body: unknown, contentType = JSON_TYPE): void {
  expectTagged(res, { etag, cacheControl: READ, body, contentType });
}

const expectNotModified = notModifiedCheck(READ);

describe('GET /orders/{orderId}: 200', () => {
  test('the order, a strong ETag, Cache-Control: private, no-cache', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 4321, qty: 3, currency: 'USD' });
    const res = await get(t, token, `/orders/${order.id}`);
    expectOrder(res, `"o${order.id}.1.v1"`, {
      id: order.id,
      status: 'pending',
      customerId: user.id,
      total: 12963,
      currency: 'USD',
      createdAt: order.createdAt,
      updatedAt: order.updatedAt,
    });
    assert.deepEqual(res.json(), await readStoredOrder(t.db, order.id));
    assert.doesNotMatch(String(res.headers.etag), /^W\//);
    assert.match(res.json().createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  test('every status is served as stored', async () => {
    const { user, token } = await createCustomer(t);
    for (const status of ['paid', 'shipped', 'delivered', 'cancelled'] as const) {
      const order = await createOrder(t.db, user.id, { status });
      const res = await get(t, token, `/orders/${order.id}`);
      // The factory moves the order in a second statement: version 2.
      expectOrder(res, `"o${order.id}.2.v1"`, await readStoredOrder(t.db, order.id));
      assert.equal(res.json().status, status);
    }
  });

  test("staff and service clients read any customer's order, with the same ETag", async () => {
    const { user } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    for (const token of [await createStaffToken(t), await createServiceToken(t, ['orders:read'])]) {
      expectOrder(await get(t, token, `/orders/${order.id}`), `"o${order.id}.1.v1"`, await readStoredOrder(t.db, order.id));
    }
  });

  test('the ETag carries the API version: the same on /v1, unversioned and with the vendor type', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const body = await readStoredOrder(t.db, order.id);
    const etag = `"o${order.id}.1.v1"`;
    expectOrder(await get(t, token, `/orders/${order.id}`), etag, body);
    expectOrder(await get(t, token, `/v1/orders/${order.id}`), etag, body);
    const vendor = 'application/vnd.orderpay.v1+json';
    expectOrder(await get(t, token, `/orders/${order.id}`, { accept: vendor }), etag, body, `${vendor}; charset=utf-8`);
    expectOrder(await get(t, token, `/v1/orders/${order.id}`, { accept: vendor }), etag, body, `${vendor}; charset=utf-8`);
  });
});

describe('GET /orders/{orderId}: If-None-Match', () => {
  async function tagged() {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    return { token, id: order.id, etag: `"o${order.id}.1.v1"` };
  }

  test('the exact tag → 304 with ETag, Cache-Control and Vary, no body', async () => {
    const { token, id, etag } = await tagged();
    expectNotModified(await get(t, token, `/orders/${id}`, { 'if-none-match': etag }), etag);
    expectNotModified(await get(t, token, `/v1/orders/${id}`, { 'if-none-match': etag }), etag);
  });

  test('the weak form W/"…" matches too (weak comparison)', async () => {
    const { token, id, etag } = await tagged();
    expectNotModified(await get(t, token, `/orders/${id}`, { 'if-none-match': `W/${etag}` }), etag);
  });

  test('a list with the tag among others → 304', async () => {
    const { token, id, etag } = await tagged();
    expectNotModified(await get(t, token, `/orders/${id}`, { 'if-none-match': `"o${id}.0.v1", W/"x", ${etag}` }), etag);
    expectNotModified(await get(t, token, `/orders/${id}`, { 'if-none-match': `${etag},"other"` }), etag);
  });

  test('* → 304 for an order that exists', async () => {
    const { token, id, etag } = await tagged();
    expectNotModified(await get(t, token, `/orders/${id}`, { 'if-none-match': '*' }), etag);
  });

  test('tags that do not match → 200 with the full representation', async () => {
    const { token, id, etag } = await tagged();
    const body = await readStoredOrder(t.db, id);
    for (const header of [`"o${id}.2.v1"`, `"o${id}.1.v2"`, `"o${id + 1}.1.v1"`, `"x", W/"o${id}.0.v1"`, `"o${id}.1.V1"`, '""']) {
      expectOrder(await get(t, token, `/orders/${id}`, { 'if-none-match': header }), etag, body);
    }
  });

  test('empty list elements are ignored (RFC 9110 §5.6.1.2): the current tag among them → 304', async () => {
    const { token, id, etag } = await tagged();
    for (const header of [`, ${etag}`, `"x",,${etag}`, ` ,${etag}, ,`]) {
      expectNotModified(await get(t, token, `/orders/${id}`, { 'if-none-match': header }), etag);
    }
  });

  test('an empty If-None-Match (no element, or only empty ones) matches nothing → 200 with the full representation', async () => {
    const { token, id, etag } = await tagged();
    const body = await readStoredOrder(t.db, id);
    for (const header of ['', ' ', ',', ', ,']) {
      expectOrder(await get(t, token, `/orders/${id}`, { 'if-none-match': header }), etag, body);
    }
  });

  test('a malformed If-None-Match → 400 naming the header', async () => {
    const { token, id } = await tagged();
    for (const header of [`o${id}.1.v1`, 'W/', '"unterminated', `"a" "b"`, '*, "a"', `, *`]) {
      const res = await get(t, token, `/orders/${id}`, { 'if-none-match': header });
      const detail = 'If-None-Match must be "*" or a comma-separated list of quoted entity tags';
      expectProblem(res, 400, 'REQUEST_HEADER_INVALID', `/orders/${id}`, 'If-None-Match must be "*" or a list of entity tags.', {
        errors: [{ parameter: 'If-None-Match', detail }],
      });
    }
  });

  test('the ETag changes with every update; the old tag no longer matches', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const old = `"o${order.id}.1.v1"`;
    const put = await t.request(token, { method: 'PUT', url: `/orders/${order.id}`, payload: { status: 'cancelled' } });
    assert.equal(put.statusCode, 200);
    const fresh = `"o${order.id}.2.v1"`;
    assert.equal(put.headers.etag, fresh);

    const res = await get(t, token, `/orders/${order.id}`, { 'if-none-match': old });
    expectOrder(res, fresh, await readStoredOrder(t.db, order.id));
    assert.equal(res.json().status, 'cancelled');
    expectNotModified(await get(t, token, `/orders/${order.id}`, { 'if-none-match': fresh }), fresh);

    const staff = await createStaffToken(t);
    const shipped = await createOrder(t.db, user.id, { status: 'paid' });
    assert.equal((await t.request(staff, { method: 'PUT', url: `/orders/${shipped.id}`, payload: { status: 'shipped' } })).statusCode, 200);
    assert.equal(
      (await t.request(staff, { method: 'PUT', url: `/orders/${shipped.id}`, payload: { status: 'delivered' } })).statusCode,
      200,
    );
    expectOrder(
      await get(t, token, `/orders/${shipped.id}`, { 'if-none-match': `"o${shipped.id}.3.v1"` }),
      `"o${shipped.id}.4.v1"`,
      await readStoredOrder(t.db, shipped.id),
    );
  });
});

describe('GET /orders/{orderId}: concurrent reads', () => {
  // Lookups by id arriving together share one statement per owner scope (src/db/coalesce.ts): a
  // customer's never carries another's orders, whatever else is read in the same turn.
  test("every caller gets its own answer: a customer's own order, another's is 404, staff see all", async () => {
    const alice = await createCustomer(t);
    const bob = await createCustomer(t);
    const staff = await createStaffToken(t);
    const alices = await createOrder(t.db, alice.user.id);
    const bobs = await createOrder(t.db, bob.user.id, { status: 'paid' });
    const reads = [
      [alice.token, alices.id, 200],
      [alice.token, bobs.id, 404],
      [bob.token, bobs.id, 200],
      [bob.token, alices.id, 404],
      [staff, alices.id, 200],
      [staff, bobs.id, 200],
      [alice.token, MISSING_ID, 404],
    ] as const;
    for (const revalidate of [false, true]) {
      const responses = await Promise.all(
        reads.map(([token, id]) => get(t, token, `/orders/${id}`, revalidate ? { 'if-none-match': `"o${id}.1.v1"` } : {})),
      );
      for (const [i, [, id, status]] of reads.entries()) {
        const res = responses[i]!;
        if (status === 404) {
          expectProblem(res, 404, 'ORDER_NOT_FOUND', `/orders/${id}`, `Order ${id} does not exist.`);
        } else if (revalidate && id === alices.id) {
          expectNotModified(res, `"o${id}.1.v1"`);
        } else {
          // Bob's order was moved to paid in a second statement: version 2, so his tag is stale.
          const etag = `"o${id}.${id === bobs.id ? 2 : 1}.v1"`;
          expectOrder(res, etag, await readStoredOrder(t.db, id));
        }
      }
    }
  });

  test('v2 embeds each order its own items, read together', async () => {
    const { user, token } = await createCustomer(t);
    const orders = [
      await createOrder(t.db, user.id, { price: 100, qty: 1 }),
      await createOrder(t.db, user.id, { price: 250, qty: 4 }),
      await createOrder(t.db, user.id, { price: 999, qty: 2 }),
    ];
    const responses = await Promise.all(orders.map((order) => get(t, token, `/v2/orders/${order.id}`)));
    for (const [i, order] of orders.entries()) {
      const body = responses[i]!.json();
      assert.equal(responses[i]!.statusCode, 200);
      assert.equal(body.id, order.id);
      assert.equal(body.items.length, 1);
      assert.equal(body.items[0].qty, [1, 4, 2][i]);
      // v2 money is an amount with its currency.
      assert.deepEqual(body.items[0].unitPrice, { value: [100, 250, 999][i], currency: 'EUR' });
      assert.deepEqual(body.items[0].lineTotal, { value: order.total, currency: 'EUR' });
      assert.deepEqual(body.total, { value: order.total, currency: 'EUR' });
    }
  });
});

describe('GET /orders/{orderId}: not found', () => {
  test("another customer's order → 404 exactly like a missing one", async () => {
    const owner = await createCustomer(t);
    const other = await createCustomer(t);
    const order = await createOrder(t.db, owner.user.id);
    const foreign = await get(t, other.token, `/orders/${order.id}`);
    expectProblem(foreign, 404, 'ORDER_NOT_FOUND', `/orders/${order.id}`, `Order ${order.id} does not exist.`);

    // The same id once the order is really gone: the same answer, byte for byte but the request id
    // (and the rate limit's count, one request further down).
    await t.db.query('UPDATE orders SET deleted_at = now() WHERE id = $1', [order.id]);
    const gone = await get(t, other.token, `/orders/${order.id}`);
    const strip = (res: LightMyRequestResponse) => {
      const { requestId: _r, ...body } = res.json();
      const { 'x-request-id': _x, date: _d, ratelimit: _l, ...headers } = res.headers;
      return { status: res.statusCode, headers, body };
    };
    assert.deepEqual(strip(gone), strip(foreign));

    // And a never-existing id differs only in the id it names.
    const missing = await get(t, other.token, `/orders/${MISSING_ID}`);
    expectProblem(missing, 404, 'ORDER_NOT_FOUND', `/orders/${MISSING_ID}`, `Order ${MISSING_ID} does not exist.`);
    assert.deepEqual(Object.keys(missing.headers).sort(), Object.keys(foreign.headers).sort());
    assert.deepEqual(Object.keys(missing.json()), Object.keys(foreign.json()));
  });

  test("an If-None-Match: * does not reveal another customer's order", async () => {
    const owner = await createCustomer(t);
    const other = await createCustomer(t);
    const order = await createOrder(t.db, owner.user.id);
    expectProblem(
      await get(t, other.token, `/orders/${order.id}`, { 'if-none-match': '*' }),
      404,
      'ORDER_NOT_FOUND',
      `/orders/${order.id}`,
      `Order ${order.id} does not exist.`,
    );
    expectProblem(
      await get(t, other.token, `/orders/${order.id}`, { 'if-none-match': `"o${order.id}.1.v1"` }),
      404,
      'ORDER_NOT_FOUND',
      `/orders/${order.id}`,
      `Order ${order.id} does not exist.`,
    );
  });

  test('a deleted order → 404, for its owner and for staff; the row is kept', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${order.id}` })).statusCode, 204);
    for (const reader of [token, await createStaffToken(t)]) {
      expectProblem(
        await get(t, reader, `/orders/${order.id}`),
        404,
        'ORDER_NOT_FOUND',
        `/orders/${order.id}`,
        `Order ${order.id} does not exist.`,
      );
    }
    expectProblem(
      await get(t, token, `/orders/${order.id}`, { 'if-none-match': '*' }),
      404,
      'ORDER_NOT_FOUND',
      `/orders/${order.id}`,
      `Order ${order.id} does not exist.`,
    );
    const { rows } = await t.db.query<{ deleted: boolean }>('SELECT deleted_at IS NOT NULL AS deleted FROM orders WHERE id = $1', [
      order.id,
    ]);
    assert.deepEqual(rows, [{ deleted: true }]);
  });

  test('an id that never existed → 404, also for staff', async () => {
    const staff = await createStaffToken(t);
    expectProblem(
      await get(t, staff, `/orders/${MISSING_ID}`),
      404,
      'ORDER_NOT_FOUND',
      `/orders/${MISSING_ID}`,
      `Order ${MISSING_ID} does not exist.`,
    );
    expectProblem(
      await get(t, staff, `/v1/orders/${MISSING_ID}`),
      404,
      'ORDER_NOT_FOUND',
      `/v1/orders/${MISSING_ID}`,
      `Order ${MISSING_ID} does not exist.`,
    );
  });
});

describe('GET /orders/{orderId}: malformed id → 400 naming the parameter', () => {
  const cases: [string, string][] = [
    ['abc', 'must be integer'],
    ['1.5', 'must be integer'],
    ['0x10', 'must be integer'],
    ['1e3', 'must be integer'],
    ['%2B5', 'must be integer'],
    ['0', 'must be >= 1'],
    ['-4', 'must be >= 1'],
    ['9007199254740992', 'must be <= 9007199254740991'],
  ];
  for (const [id, message] of cases) {
    test(`/orders/${id} → 400`, async () => {
      const { token } = await createCustomer(t);
      const detail = `path parameter "orderId" ${message}`;
      expectProblem(await get(t, token, `/orders/${id}`), 400, 'REQUEST_PARAMETER_INVALID', `/orders/${id}`, detail, {
        errors: [{ parameter: 'orderId', detail }],
      });
    });
  }

  test('the largest id is well-formed: 404, not 400 or 500', async () => {
    const { token } = await createCustomer(t);
    const id = Number.MAX_SAFE_INTEGER;
    expectProblem(await get(t, token, `/orders/${id}`), 404, 'ORDER_NOT_FOUND', `/orders/${id}`, `Order ${id} does not exist.`);
  });
});

describe('GET /orders/{orderId}: authentication', () => {
  test('without a token → 401', async () => {
    const res = await get(t, undefined, `/orders/${MISSING_ID}`);
    expectProblem(
      res,
      401,
      'AUTH_TOKEN_MISSING',
      `/orders/${MISSING_ID}`,
      'This endpoint requires an access token: Authorization: Bearer <token>.',
    );
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay"');
  });

  test('without orders:read → 403 insufficient_scope, even for the owner', async () => {
    const { user } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const res = await get(t, await t.token({ userId: user.id, scopes: ['orders:write', 'products:write'] }), `/orders/${order.id}`);
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', `/orders/${order.id}`, 'This operation requires the scope "orders:read".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:read"');
  });
});
