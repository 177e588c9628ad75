// PUT /orders/{orderId}: complete replacement of the writable representation (its status), by the
// state machine per actor, idempotent, with If-Match (strong comparison, RFC 9110 §13.1.1).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { ORDER_STATUSES, type OrderStatus } from '../../../src/orders/orders.rules.ts';
import { createCustomer, createServiceToken, createStaffToken } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';

const t = setUpTestApp();

const JSON_TYPE = 'application/json; charset=utf-8';

const put = (token: string | undefined, id: number | string, payload: unknown, headers: Record<string, string> = {}) =>
  t.request(token, { method: 'PUT', url: `/orders/${id}`, payload: payload as string, headers });

interface StoredOrder {
  id: number;
  status: string;
  customerId: number;
  total: number;
  currency: string;
  createdAt: string;
  updatedAt: string;
  version: number;
}

async function stored(id: number): Promise<StoredOrder> {
  const { rows } = await t.db.query<StoredOrder>(
    `SELECT id, status, customer_id AS "customerId", total, currency, created_at AS "createdAt", updated_at AS "updatedAt", version
       FROM orders WHERE id = $1`,
    [id],
  );
  return rows[0]!;
}

/** Compared by the database: the text form drops trailing zeros, so strings do not sort as times. */
async function isLater(a: string, b: string): Promise<boolean> {
  return (await t.db.query<{ later: boolean }>('SELECT $1::timestamptz > $2::timestamptz AS later', [a, b])).rows[0]!.later;
}

const representation = ({ version: _v, ...order }: StoredOrder) => order;

/** 200 with the order as now stored and the tag of its stored version. */
async function expectReplaced(res: LightMyRequestResponse, id: number): Promise<StoredOrder> {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], JSON_TYPE);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.vary, 'Accept');
  const now = await stored(id);
  assert.equal(res.headers.etag, `"o${id}.${now.version}.v1"`);
  assert.deepEqual(res.json(), representation(now));
  return now;
}

// The state machine as the issue states it; payments (pending → paid) are not an HTTP actor here.
const ALLOWED: Record<'owner' | 'staff' | 'service', [OrderStatus, OrderStatus][]> = {
  owner: [['pending', 'cancelled']],
  staff: [
    ['pending', 'cancelled'],
    ['paid', 'shipped'],
    ['paid', 'cancelled'],
    ['shipped', 'delivered'],
  ],
  service: [
    ['paid', 'shipped'],
    ['shipped', 'delivered'],
  ],
};

describe('PUT /orders/{orderId}: the state machine per actor', () => {
  for (const actor of ['owner', 'staff', 'service'] as const) {
    for (const from of ORDER_STATUSES) {
      for (const to of ORDER_STATUSES) {
        if (from === to) continue;
        const allowed = ALLOWED[actor].some(([f, tt]) => f === from && tt === to);
        const allowedFromHere = ORDER_STATUSES.filter((s) => ALLOWED[actor].some(([f, tt]) => f === from && tt === s));
        test(`${actor}: ${from} → ${to} → ${allowed ? 200 : 409}`, async () => {
          const owner = await createCustomer(t);
          const token =
            actor === 'owner' ? owner.token : actor === 'staff' ? await createStaffToken(t) : await createServiceToken(t, ['orders:write']);
          const order = await createOrder(t.db, owner.user.id, { status: from });
          const before = await stored(order.id);
          const res = await put(token, order.id, { status: to });
          if (allowed) {
            const after = await expectReplaced(res, order.id);
            assert.equal(after.status, to);
            assert.equal(after.version, before.version + 1);
            assert.ok(await isLater(after.updatedAt, before.updatedAt), `${after.updatedAt} > ${before.updatedAt}`);
            assert.deepEqual({ ...after, status: before.status, version: before.version, updatedAt: before.updatedAt }, before);
          } else {
            const options = allowedFromHere.length
              ? `allowed: ${allowedFromHere.join(', ')}`
              : 'no change of status is allowed to you from here';
            expectProblem(
              res,
              409,
              'ORDER_TRANSITION_NOT_ALLOWED',
              `/orders/${order.id}`,
              `The order is ${from}; it cannot become ${to} (${options}).`,
              {
                currentStatus: from,
                allowedStatuses: allowedFromHere,
              },
            );
            assert.deepEqual(await stored(order.id), before);
          }
        });
      }
    }
  }

  test('a full lifecycle: staff ships, a service client delivers; each step a new version', async () => {
    const owner = await createCustomer(t);
    const staff = await createStaffToken(t);
    const service = await createServiceToken(t, ['orders:write']);
    const order = await createOrder(t.db, owner.user.id, { status: 'paid' });
    assert.equal((await expectReplaced(await put(staff, order.id, { status: 'shipped' }), order.id)).version, 3);
    assert.equal((await expectReplaced(await put(service, order.id, { status: 'delivered' }), order.id)).version, 4);
    expectProblem(
      await put(owner.token, order.id, { status: 'cancelled' }),
      409,
      'ORDER_TRANSITION_NOT_ALLOWED',
      `/orders/${order.id}`,
      'The order is delivered; it cannot become cancelled (no change of status is allowed to you from here).',
      { currentStatus: 'delivered', allowedStatuses: [] },
    );
  });
});

describe('PUT /orders/{orderId}: idempotent', () => {
  test('the same status → 200, nothing changes: version, ETag and updatedAt kept', async () => {
    const { user, token } = await createCustomer(t);
    for (const status of ORDER_STATUSES) {
      const order = await createOrder(t.db, user.id, { status });
      const before = await stored(order.id);
      const res = await put(token, order.id, { status });
      assert.deepEqual(await expectReplaced(res, order.id), before);
    }
  });

  test('repeating a PUT leaves the same state and answers the same', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const first = await put(token, order.id, { status: 'cancelled' });
    const afterFirst = await expectReplaced(first, order.id);
    assert.equal(afterFirst.version, 2);
    for (let i = 0; i < 2; i++) {
      const again = await put(token, order.id, { status: 'cancelled' });
      assert.deepEqual(await expectReplaced(again, order.id), afterFirst);
      assert.equal(again.headers.etag, first.headers.etag);
      assert.deepEqual(again.json(), first.json());
    }
  });

  test('a same-status PUT is a no-op even for an actor who could not have made that move', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { status: 'shipped' });
    const before = await stored(order.id);
    assert.deepEqual(await expectReplaced(await put(token, order.id, { status: 'shipped' }), order.id), before);
  });
});

describe('PUT /orders/{orderId}: If-Match', () => {
  async function pending() {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    return { token, id: order.id, etag: `"o${order.id}.1.v1"` };
  }

  test('the current tag → 200', async () => {
    const { token, id, etag } = await pending();
    const after = await expectReplaced(await put(token, id, { status: 'cancelled' }, { 'if-match': etag }), id);
    assert.equal(after.status, 'cancelled');
  });

  test('a list holding the current tag, or * → 200', async () => {
    const a = await pending();
    assert.equal(
      (await expectReplaced(await put(a.token, a.id, { status: 'cancelled' }, { 'if-match': `"nope", ${a.etag}` }), a.id)).version,
      2,
    );
    const b = await pending();
    assert.equal((await expectReplaced(await put(b.token, b.id, { status: 'cancelled' }, { 'if-match': '*' }), b.id)).version, 2);
  });

  test('a stale tag → 412 naming the current one; nothing changes', async () => {
    const { token, id, etag } = await pending();
    await expectReplaced(await put(token, id, { status: 'cancelled' }, { 'if-match': etag }), id);
    const before = await stored(id);
    // The same PUT again with the tag read before the first: the precondition is checked first.
    const res = await put(token, id, { status: 'cancelled' }, { 'if-match': etag });
    expectProblem(
      res,
      412,
      'REQUEST_PRECONDITION_FAILED',
      `/orders/${id}`,
      'If-Match does not match the current entity tag; read the resource again.',
      {
        currentEtag: `"o${id}.2.v1"`,
      },
    );
    assert.deepEqual(await stored(id), before);
  });

  test('the weak form of the current tag → 412 (strong comparison)', async () => {
    const { token, id, etag } = await pending();
    const before = await stored(id);
    const res = await put(token, id, { status: 'cancelled' }, { 'if-match': `W/${etag}` });
    expectProblem(
      res,
      412,
      'REQUEST_PRECONDITION_FAILED',
      `/orders/${id}`,
      'If-Match does not match the current entity tag; read the resource again.',
      {
        currentEtag: etag,
      },
    );
    assert.deepEqual(await stored(id), before);
  });

  test('a tag of another API version or another order → 412', async () => {
    const { token, id } = await pending();
    for (const tag of [`"o${id}.1.v2"`, `"o${id + 1}.1.v1"`, `"o${id}.1.V1"`]) {
      const res = await put(token, id, { status: 'cancelled' }, { 'if-match': tag });
      assert.equal(res.statusCode, 412, tag);
      assert.equal(res.json().code, 'REQUEST_PRECONDITION_FAILED');
    }
    assert.equal((await stored(id)).version, 1);
  });

  test('a malformed If-Match → 400 naming the header', async () => {
    const { token, id } = await pending();
    const res = await put(token, id, { status: 'cancelled' }, { 'if-match': `o${id}.1.v1` });
    expectProblem(res, 400, 'REQUEST_HEADER_INVALID', `/orders/${id}`, 'If-Match must be "*" or a list of entity tags.', {
      errors: [{ parameter: 'If-Match', detail: 'If-Match must be "*" or a comma-separated list of quoted entity tags' }],
    });
    assert.equal((await stored(id)).version, 1);
  });

  test('empty list elements are ignored (RFC 9110 §5.6.1.2): the current tag among them → 200', async () => {
    const { token, id } = await pending();
    const res = await put(token, id, { status: 'cancelled' }, { 'if-match': `, "x",, "o${id}.1.v1" ,` });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await stored(id)).version, 2);
  });

  test('an empty If-Match (no element, or only empty ones) matches nothing → 412, never an unconditional write', async () => {
    const { token, id } = await pending();
    for (const header of ['', ' ', ',', ' , ,']) {
      const res = await put(token, id, { status: 'cancelled' }, { 'if-match': header });
      assert.equal(res.statusCode, 412, JSON.stringify(header));
      assert.equal(res.json().code, 'REQUEST_PRECONDITION_FAILED');
    }
    assert.equal((await stored(id)).version, 1);
  });

  test('a same-status PUT with a stale tag is still a 412', async () => {
    const { token, id } = await pending();
    const res = await put(token, id, { status: 'pending' }, { 'if-match': `"o${id}.0.v1"` });
    assert.equal(res.statusCode, 412);
  });
});

describe('PUT /orders/{orderId}: the body', () => {
  test('the read-only fields of a GET sent back unchanged → 200', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const read = await t.request(token, { method: 'GET', url: `/orders/${order.id}` });
    const res = await put(
      token,
      order.id,
      { ...read.json<Record<string, unknown>>(), status: 'cancelled' },
      { 'if-match': read.headers.etag as string },
    );
    const after = await expectReplaced(res, order.id);
    assert.equal(after.status, 'cancelled');
  });

  test('the whole representation repeated unchanged, same status → 200 no-op', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const before = await stored(order.id);
    const read = await t.request(token, { method: 'GET', url: `/orders/${order.id}` });
    assert.deepEqual(await expectReplaced(await put(token, order.id, read.json()), order.id), before);
  });

  test('the same PUT of a representation as read, repeated after updatedAt moved → the same 200 and state', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const read = (await t.request(token, { method: 'GET', url: `/orders/${order.id}` })).json<Record<string, unknown>>();
    const first = await expectReplaced(await put(token, order.id, { ...read, status: 'cancelled' }), order.id);
    const again = await expectReplaced(await put(token, order.id, { ...read, status: 'cancelled' }), order.id);
    assert.deepEqual(again, first);
    assert.equal(first.status, 'cancelled');
  });

  test('server-managed fields (id, createdAt, updatedAt) in the body are ignored, whatever they say', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const res = await put(token, order.id, {
      status: 'cancelled',
      id: 1,
      createdAt: '2020-01-01T00:00:00Z',
      updatedAt: '2020-01-01T00:00:00Z',
    });
    const after = await expectReplaced(res, order.id);
    assert.equal(after.id, order.id);
    assert.equal(after.createdAt, order.createdAt);
  });

  for (const [field, value, shown] of [
    ['customerId', 1, (o: StoredOrder) => o.customerId],
    ['total', 1, (o: StoredOrder) => o.total],
    ['currency', 'USD', (o: StoredOrder) => o.currency],
  ] as const) {
    test(`${field} changed → 422 ORDER_READ_ONLY_FIELD, nothing changes`, async () => {
      const { user, token } = await createCustomer(t);
      const order = await createOrder(t.db, user.id);
      const before = await stored(order.id);
      const res = await put(token, order.id, { status: 'cancelled', [field]: value });
      expectProblem(res, 422, 'ORDER_READ_ONLY_FIELD', `/orders/${order.id}`, `Read-only fields differ from the order: ${field}.`, {
        errors: [{ pointer: `/${field}`, detail: `${field} is read-only; send ${JSON.stringify(shown(before))} or omit it` }],
      });
      assert.deepEqual(await stored(order.id), before);
    });
  }

  test('several read-only fields changed → each named', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 800 });
    const res = await put(token, order.id, { status: 'pending', total: 1, currency: 'JPY' });
    expectProblem(res, 422, 'ORDER_READ_ONLY_FIELD', `/orders/${order.id}`, 'Read-only fields differ from the order: total, currency.', {
      errors: [
        { pointer: '/total', detail: 'total is read-only; send 800 or omit it' },
        { pointer: '/currency', detail: 'currency is read-only; send "EUR" or omit it' },
      ],
    });
  });

  const bad: [string, unknown, { pointer: string; detail: string }[]][] = [
    ['missing status', {}, [{ pointer: '/status', detail: '/status is required' }]],
    ['missing status beside read-only fields', { total: 1250 }, [{ pointer: '/status', detail: '/status is required' }]],
    ['an unknown status', { status: 'refunded' }, [{ pointer: '/status', detail: '/status must be equal to one of the allowed values' }]],
    [
      'status in another case',
      { status: 'Cancelled' },
      [{ pointer: '/status', detail: '/status must be equal to one of the allowed values' }],
    ],
    ['an unknown field', { status: 'cancelled', note: 'x' }, [{ pointer: '/note', detail: '/note is not a known field' }]],
    [
      'a read-only field of the wrong type',
      { status: 'cancelled', total: '1250' },
      [{ pointer: '/total', detail: '/total must be integer' }],
    ],
  ];
  for (const [name, body, errors] of bad) {
    test(`${name} → 400 REQUEST_BODY_INVALID`, async () => {
      const { user, token } = await createCustomer(t);
      const order = await createOrder(t.db, user.id);
      const before = await stored(order.id);
      const res = await put(token, order.id, body);
      expectProblem(res, 400, 'REQUEST_BODY_INVALID', `/orders/${order.id}`, errors.map((e) => e.detail).join('; '), { errors });
      assert.deepEqual(await stored(order.id), before);
    });
  }

  test('wrong content type → 415, malformed JSON → 400', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    expectProblem(
      await put(token, order.id, 'status=cancelled', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'REQUEST_UNSUPPORTED_MEDIA_TYPE',
      `/orders/${order.id}`,
      'Send the body as application/json.',
    );
    expectProblem(
      await put(token, order.id, '{"status":', { 'content-type': 'application/json' }),
      400,
      'REQUEST_BODY_MALFORMED',
      `/orders/${order.id}`,
      'The body is not valid JSON.',
    );
    assert.equal((await stored(order.id)).version, 1);
  });
});

describe('PUT /orders/{orderId}: not found and forbidden', () => {
  test("another customer's order → 404 like a missing one; nothing changes", async () => {
    const owner = await createCustomer(t);
    const other = await createCustomer(t);
    const order = await createOrder(t.db, owner.user.id);
    const before = await stored(order.id);
    for (const headers of [{}, { 'if-match': '*' }, { 'if-match': `"o${order.id}.1.v1"` }] as Record<string, string>[]) {
      const res = await put(other.token, order.id, { status: 'cancelled' }, headers);
      expectProblem(res, 404, 'ORDER_NOT_FOUND', `/orders/${order.id}`, `Order ${order.id} does not exist.`);
    }
    assert.deepEqual(await stored(order.id), before);
  });

  test('a deleted order with If-Match → 404, not 412: the answer without the precondition comes first (RFC 9110 §13.2.1)', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const lastTag = `"o${order.id}.1.v1"`;
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${order.id}` })).statusCode, 204);
    const before = await stored(order.id);
    for (const tag of [lastTag, '*', '"o1.999.v1"']) {
      expectProblem(
        await put(token, order.id, { status: 'cancelled' }, { 'if-match': tag }),
        404,
        'ORDER_NOT_FOUND',
        `/orders/${order.id}`,
        `Order ${order.id} does not exist.`,
      );
    }
    assert.deepEqual(await stored(order.id), before);
  });

  test('a deleted order → 404; a missing one → 404', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${order.id}` })).statusCode, 204);
    const before = await stored(order.id);
    expectProblem(
      await put(token, order.id, { status: 'cancelled' }),
      404,
      'ORDER_NOT_FOUND',
      `/orders/${order.id}`,
      `Order ${order.id} does not exist.`,
    );
    expectProblem(
      await put(await createStaffToken(t), order.id, { status: 'cancelled' }),
      404,
      'ORDER_NOT_FOUND',
      `/orders/${order.id}`,
      `Order ${order.id} does not exist.`,
    );
    assert.deepEqual(await stored(order.id), before);
    expectProblem(
      await put(token, 2_000_000_000, { status: 'cancelled' }),
      404,
      'ORDER_NOT_FOUND',
      '/orders/2000000000',
      'Order 2000000000 does not exist.',
    );
  });

  test('a malformed id → 400 naming the parameter', async () => {
    const { token } = await createCustomer(t);
    const detail = 'path parameter "orderId" must be integer';
    expectProblem(await put(token, 'abc', { status: 'cancelled' }), 400, 'REQUEST_PARAMETER_INVALID', '/orders/abc', detail, {
      errors: [{ parameter: 'orderId', detail }],
    });
  });

  test('without orders:write → 403 insufficient_scope; without a token → 401', async () => {
    const { user } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const res = await put(await t.token({ userId: user.id, scopes: ['orders:read'] }), order.id, { status: 'cancelled' });
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', `/orders/${order.id}`, 'This operation requires the scope "orders:write".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:write"');
    expectProblem(
      await put(undefined, order.id, { status: 'cancelled' }),
      401,
      'AUTH_TOKEN_MISSING',
      `/orders/${order.id}`,
      'This endpoint requires an access token: Authorization: Bearer <token>.',
    );
    assert.equal((await stored(order.id)).version, 1);
  });
});
