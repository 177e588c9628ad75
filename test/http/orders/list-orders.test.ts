// GET /orders: the collection contract (envelope, Link, filters, sort, paging), who sees what,
// and exact totals (trigger-maintained counters without minTotal, a count with it).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { ERRORS, type ErrorCode } from '../../../src/http/errors.ts';
import type { OrderStatus } from '../../../src/orders/orders.rules.ts';
import { PUBLIC_URL, startTestApp, type TestApp } from '../../helpers/app.ts';
import { createOrder, createUser } from '../../helpers/factories.ts';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});

const JSON_TYPE = 'application/json; charset=utf-8';

function expectProblem(res: LightMyRequestResponse, status: number, code: ErrorCode, instance: string, detail: string, extra: Record<string, unknown> = {}): void {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.etag, undefined);
  assert.equal(res.headers.link, undefined);
  assert.deepEqual(res.json(), {
    type: `${PUBLIC_URL}/problems/${code.toLowerCase().replaceAll('_', '-')}`,
    title: ERRORS[code].title, status, detail, instance, code, requestId: res.headers['x-request-id'], ...extra,
  });
}

async function customer() {
  const user = await createUser(t.db);
  return { user, token: await t.token({ userId: user.id }) };
}

async function staffToken(): Promise<string> {
  const staff = await createUser(t.db, 'staff');
  return t.token({ userId: staff.id, staff: true });
}

const get = (token: string | undefined, url: string, headers: Record<string, string> = {}) => t.request(token, { method: 'GET', url, headers });
const ids = (res: LightMyRequestResponse): number[] => res.json().data.map((o: { id: number }) => o.id);

/** An order of this customer with a chosen status, total and creation time. */
async function order(customerId: number, fields: { status?: OrderStatus; total?: number; createdAt?: string } = {}): Promise<number> {
  const row = await createOrder(t.db, customerId, { status: fields.status, price: fields.total ?? 1000 });
  if (fields.createdAt) await t.db.query('UPDATE orders SET created_at = $2 WHERE id = $1', [row.id, fields.createdAt]);
  return row.id;
}

/** The representation as stored, read with SQL rather than through the store. */
async function orderInDb(id: number) {
  const { rows } = await t.db.query<{ id: number; status: string; customerId: number; total: number; currency: string; createdAt: string; updatedAt: string }>(
    `SELECT id, status, customer_id AS "customerId", total, currency, created_at AS "createdAt", updated_at AS "updatedAt"
       FROM orders WHERE id = $1`, [id]);
  return rows[0]!;
}

async function visibleCount(where: string, params: unknown[]): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>(`SELECT count(*) AS n FROM orders WHERE deleted_at IS NULL AND ${where}`, params);
  return rows[0]!.n;
}

const link = (path: string, query: string, rel: string) => `<${PUBLIC_URL}${path}?${query}>; rel="${rel}"`;

describe('GET /orders: envelope and headers', () => {
  test('200 with exactly {data, meta}, each order in the same shape as alone', async () => {
    const { user, token } = await customer();
    const first = await order(user.id, { total: 500, createdAt: '2026-01-01T10:00:00Z' });
    const second = await order(user.id, { status: 'paid', total: 700, createdAt: '2026-01-02T10:00:00Z' });

    const res = await get(token, '/orders');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'private, no-cache');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.headers.etag, undefined);
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    assert.equal(res.headers.link, `${link('/orders', 'page=1', 'first')}, ${link('/orders', 'page=1', 'last')}`);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['data', 'meta']);
    assert.deepEqual(body, {
      data: [await orderInDb(first), await orderInDb(second)],
      meta: { total: 2, page: 1, pageSize: 20, totalPages: 1 },
    });
    assert.deepEqual(body.data[0], {
      id: first, status: 'pending', customerId: user.id, total: 500, currency: 'EUR',
      createdAt: '2026-01-01T10:00:00Z', updatedAt: body.data[0]!.updatedAt,
    });
    assert.match(body.data[0]!.updatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$/);
    for (const item of body.data) {
      const alone = await get(token, `/orders/${item.id}`);
      assert.deepEqual(alone.json(), item);
    }
  });

  test('an empty collection: total 0, totalPages 0, Link first and last to page 1', async () => {
    const { token } = await customer();
    const res = await get(token, '/orders');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { data: [], meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 } });
    assert.equal(res.headers.link, `${link('/orders', 'page=1', 'first')}, ${link('/orders', 'page=1', 'last')}`);
  });

  test('/v1/orders answers the same collection, its links under /v1', async () => {
    const { user, token } = await customer();
    await order(user.id);
    await order(user.id);
    const [plain, versioned] = [await get(token, '/orders?pageSize=1'), await get(token, '/v1/orders?pageSize=1')];
    assert.equal(versioned.statusCode, 200);
    assert.deepEqual(versioned.json(), plain.json());
    assert.equal(versioned.headers['content-type'], JSON_TYPE);
    assert.equal(versioned.headers['cache-control'], 'private, no-cache');
    assert.equal(versioned.headers.vary, 'Accept');
    assert.equal(versioned.headers.link, [
      link('/v1/orders', 'pageSize=1&page=1', 'first'), link('/v1/orders', 'pageSize=1&page=2', 'next'), link('/v1/orders', 'pageSize=1&page=2', 'last'),
    ].join(', '));
  });

  test('the vendor media type in Accept is answered in kind', async () => {
    const { user, token } = await customer();
    await order(user.id);
    const res = await get(token, '/orders', { accept: 'application/vnd.orderpay.v1+json' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/vnd.orderpay.v1+json; charset=utf-8');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.json().meta.total, 1);
  });

  test('Link: first, prev, next, last, keeping every other parameter as sent', async () => {
    const { user, token } = await customer();
    for (let i = 1; i <= 5; i++) await order(user.id, { total: i * 100 });
    const q = (page: number) => `status=pending&sort=-total%2CcreatedAt&pageSize=2&page=${page}`;

    const middle = await get(token, `/orders?status=pending&sort=-total,createdAt&pageSize=2&page=2`);
    assert.equal(middle.statusCode, 200);
    assert.deepEqual(middle.json().meta, { total: 5, page: 2, pageSize: 2, totalPages: 3 });
    assert.deepEqual(middle.json().data.map((o: { total: number }) => o.total), [300, 200]);
    assert.equal(middle.headers.link, [link('/orders', q(1), 'first'), link('/orders', q(1), 'prev'), link('/orders', q(3), 'next'), link('/orders', q(3), 'last')].join(', '));

    const first = await get(token, `/orders?status=pending&sort=-total,createdAt&pageSize=2&page=1`);
    assert.equal(first.headers.link, [link('/orders', q(1), 'first'), link('/orders', q(2), 'next'), link('/orders', q(3), 'last')].join(', '));
    assert.deepEqual(first.json().data.map((o: { total: number }) => o.total), [500, 400]);

    const last = await get(token, `/orders?status=pending&sort=-total,createdAt&pageSize=2&page=3`);
    assert.equal(last.headers.link, [link('/orders', q(1), 'first'), link('/orders', q(2), 'prev'), link('/orders', q(3), 'last')].join(', '));
    assert.deepEqual(last.json().data.map((o: { total: number }) => o.total), [100]);

    const beyond = await get(token, `/orders?status=pending&sort=-total,createdAt&pageSize=2&page=9`);
    assert.equal(beyond.statusCode, 200);
    assert.deepEqual(beyond.json(), { data: [], meta: { total: 5, page: 9, pageSize: 2, totalPages: 3 } });
    assert.equal(beyond.headers.link, [link('/orders', q(1), 'first'), link('/orders', q(3), 'prev'), link('/orders', q(3), 'last')].join(', '));

    const noPage = await get(token, '/orders?pageSize=2');
    assert.equal(noPage.headers.link, [link('/orders', 'pageSize=2&page=1', 'first'), link('/orders', 'pageSize=2&page=2', 'next'), link('/orders', 'pageSize=2&page=3', 'last')].join(', '));
  });
});

describe('GET /orders: filters', () => {
  test('status alone, for every status', async () => {
    const { user, token } = await customer();
    const byStatus = new Map<OrderStatus, number>();
    for (const status of ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const) byStatus.set(status, await order(user.id, { status }));
    for (const [status, id] of byStatus) {
      const res = await get(token, `/orders?status=${status}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { data: [await orderInDb(id)], meta: { total: 1, page: 1, pageSize: 20, totalPages: 1 } });
    }
  });

  test('customerId alone (staff): only that customer\'s orders', async () => {
    const a = await customer();
    const b = await customer();
    const a1 = await order(a.user.id);
    const a2 = await order(a.user.id, { status: 'shipped' });
    await order(b.user.id);
    const res = await get(await staffToken(), `/orders?customerId=${a.user.id}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { data: [await orderInDb(a1), await orderInDb(a2)], meta: { total: 2, page: 1, pageSize: 20, totalPages: 1 } });
  });

  test('customerId of a customer without orders (or no such user): empty, not an error', async () => {
    const { user } = await customer();
    const staff = await staffToken();
    for (const id of [user.id, 987654321]) {
      const res = await get(staff, `/orders?customerId=${id}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { data: [], meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 } });
    }
  });

  test('minTotal alone: total ≥ minTotal, the bound included', async () => {
    const { user, token } = await customer();
    await order(user.id, { total: 999 });
    const exact = await order(user.id, { total: 1000 });
    const above = await order(user.id, { total: 1001 });
    const res = await get(token, '/orders?minTotal=1000');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { data: [await orderInDb(exact), await orderInDb(above)], meta: { total: 2, page: 1, pageSize: 20, totalPages: 1 } });
    assert.deepEqual(ids(await get(token, '/orders?minTotal=0')).length, 3);
    assert.deepEqual(ids(await get(token, '/orders?minTotal=1002')), []);
  });

  test('status, customerId and minTotal combined', async () => {
    const a = await customer();
    const b = await customer();
    const match = await order(a.user.id, { status: 'paid', total: 5000 });
    await order(a.user.id, { status: 'paid', total: 4999 });
    await order(a.user.id, { status: 'pending', total: 9000 });
    await order(b.user.id, { status: 'paid', total: 9000 });
    const staff = await staffToken();

    const all = await get(staff, `/orders?status=paid&customerId=${a.user.id}&minTotal=5000`);
    assert.equal(all.statusCode, 200);
    assert.deepEqual(all.json(), { data: [await orderInDb(match)], meta: { total: 1, page: 1, pageSize: 20, totalPages: 1 } });
    assert.equal((await get(staff, `/orders?status=paid&customerId=${a.user.id}`)).json().meta.total, 2);
    assert.equal((await get(staff, `/orders?customerId=${a.user.id}&minTotal=5000`)).json().meta.total, 2);
    assert.equal((await get(a.token, '/orders?status=paid&minTotal=5000')).json().meta.total, 1);
  });
});

describe('GET /orders: sort', () => {
  // Creation times chosen so that c and d tie on createdAt and b and c tie on total.
  async function sortFixture() {
    const { user, token } = await customer();
    const a = await order(user.id, { status: 'pending', total: 500, createdAt: '2026-03-03T00:00:00Z' });
    const b = await order(user.id, { status: 'paid', total: 1500, createdAt: '2026-03-01T00:00:00Z' });
    const c = await order(user.id, { status: 'pending', total: 1500, createdAt: '2026-03-02T00:00:00Z' });
    const d = await order(user.id, { status: 'shipped', total: 200, createdAt: '2026-03-02T00:00:00Z' });
    return { token, a, b, c, d };
  }

  test('default: createdAt ascending, id breaking ties', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(ids(await get(token, '/orders')), [b, c, d, a]);
    assert.deepEqual(ids(await get(token, '/orders?sort=createdAt')), [b, c, d, a]);
  });

  test('-createdAt: descending, the id tie-breaker descending with it', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(ids(await get(token, '/orders?sort=-createdAt')), [a, d, c, b]);
  });

  test('several keys apply in the order written', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(ids(await get(token, '/orders?sort=status,-total')), [b, c, a, d]);
    assert.deepEqual(ids(await get(token, '/orders?sort=-total,createdAt')), [b, c, a, d]);
    assert.deepEqual(ids(await get(token, '/orders?sort=-total,-createdAt')), [c, b, a, d]);
    assert.deepEqual(ids(await get(token, '/orders?sort=createdAt,-status')), [b, d, c, a]);
  });

  test('total ties are broken by id in the first key\'s direction', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(ids(await get(token, '/orders?sort=total')), [d, a, b, c]);
    assert.deepEqual(ids(await get(token, '/orders?sort=-total')), [c, b, a, d]);
  });

  test('id and -id', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(ids(await get(token, '/orders?sort=id')), [a, b, c, d]);
    assert.deepEqual(ids(await get(token, '/orders?sort=-id')), [d, c, b, a]);
  });

  test('pages of a sort with ties neither repeat nor skip an order', async () => {
    const { user, token } = await customer();
    const created: number[] = [];
    for (let i = 0; i < 7; i++) created.push(await order(user.id, { createdAt: '2026-04-01T00:00:00Z' }));
    const seen: number[] = [];
    for (let page = 1; page <= 4; page++) seen.push(...ids(await get(token, `/orders?sort=createdAt&pageSize=2&page=${page}`)));
    assert.deepEqual(seen, created);
  });
});

describe('GET /orders: paging bounds', () => {
  test('pageSize 1 and 100, page 1 000 000 are accepted', async () => {
    const { user, token } = await customer();
    const first = await order(user.id, { createdAt: '2026-05-01T00:00:00Z' });
    const second = await order(user.id, { createdAt: '2026-05-02T00:00:00Z' });
    const one = await get(token, '/orders?pageSize=1&page=2');
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), { data: [await orderInDb(second)], meta: { total: 2, page: 2, pageSize: 1, totalPages: 2 } });
    const hundred = await get(token, '/orders?pageSize=100');
    assert.deepEqual(hundred.json().meta, { total: 2, page: 1, pageSize: 100, totalPages: 1 });
    assert.deepEqual(ids(hundred), [first, second]);
    const far = await get(token, '/orders?page=1000000');
    assert.equal(far.statusCode, 200);
    assert.deepEqual(far.json(), { data: [], meta: { total: 2, page: 1000000, pageSize: 20, totalPages: 1 } });
  });
});

describe('GET /orders: malformed parameters → 400 naming the parameter', () => {
  const invalid = (parameter: string, detail: string) => ({ code: 'REQUEST_PARAMETER_INVALID' as const, parameter, detail: `query parameter "${parameter}" ${detail}` });
  const cases: [query: string, expected: { code: ErrorCode; parameter: string; detail: string }][] = [
    ['status=unknown', invalid('status', 'must be equal to one of the allowed values')],
    ['status=PENDING', invalid('status', 'must be equal to one of the allowed values')],
    ['status=', invalid('status', 'must be equal to one of the allowed values')],
    ['customerId=abc', invalid('customerId', 'must be integer')],
    ['customerId=0', invalid('customerId', 'must be >= 1')],
    ['customerId=-3', invalid('customerId', 'must be >= 1')],
    ['customerId=1.5', invalid('customerId', 'must be integer')],
    ['customerId=9007199254740992', invalid('customerId', 'must be <= 9007199254740991')],
    ['minTotal=abc', invalid('minTotal', 'must be integer')],
    ['minTotal=-1', invalid('minTotal', 'must be >= 0')],
    ['minTotal=10.5', invalid('minTotal', 'must be integer')],
    ['minTotal=', invalid('minTotal', 'must be integer')],
    ['minTotal=0x10', invalid('minTotal', 'must be integer')],
    ['minTotal=1e3', invalid('minTotal', 'must be integer')],
    ['page=0', invalid('page', 'must be >= 1')],
    ['page=-1', invalid('page', 'must be >= 1')],
    ['page=1000001', invalid('page', 'must be <= 1000000')],
    ['page=two', invalid('page', 'must be integer')],
    ['page=%201', invalid('page', 'must be integer')],
    ['pageSize=0', invalid('pageSize', 'must be >= 1')],
    ['pageSize=101', invalid('pageSize', 'must be <= 100')],
    ['pageSize=2.5', invalid('pageSize', 'must be integer')],
    ['sort=', { code: 'REQUEST_PARAMETER_INVALID', parameter: 'sort', detail: 'sort has an empty key' }],
    ['sort=status,', { code: 'REQUEST_PARAMETER_INVALID', parameter: 'sort', detail: 'sort has an empty key' }],
    ['sort=customerId', { code: 'QUERY_UNKNOWN_SORT_KEY', parameter: 'sort', detail: '"customerId" is not a sort key of this collection; use createdAt, status, total, id' }],
    ['sort=-updatedAt', { code: 'QUERY_UNKNOWN_SORT_KEY', parameter: 'sort', detail: '"updatedAt" is not a sort key of this collection; use createdAt, status, total, id' }],
    ['sort=status,-status', { code: 'QUERY_DUPLICATE_SORT_KEY', parameter: 'sort', detail: '"status" appears more than once in sort' }],
    ['sort=id,createdAt,id', { code: 'QUERY_DUPLICATE_SORT_KEY', parameter: 'sort', detail: '"id" appears more than once in sort' }],
    ['status=pending&status=paid', invalid('status', 'may appear only once')],
    ['customerId=1&customerId=1', invalid('customerId', 'may appear only once')],
    ['page=1&page=1', invalid('page', 'may appear only once')],
    ['sort=id&sort=total', invalid('sort', 'may appear only once')],
    ['total=100', { code: 'QUERY_UNKNOWN_PARAMETER', parameter: 'total', detail: 'query parameter "total" is not supported by this collection' }],
    ['maxTotal=100', { code: 'QUERY_UNKNOWN_PARAMETER', parameter: 'maxTotal', detail: 'query parameter "maxTotal" is not supported by this collection' }],
    ['Status=pending', { code: 'QUERY_UNKNOWN_PARAMETER', parameter: 'Status', detail: 'query parameter "Status" is not supported by this collection' }],
    ['offset=20', { code: 'QUERY_UNKNOWN_PARAMETER', parameter: 'offset', detail: 'query parameter "offset" is not supported by this collection' }],
  ];
  for (const [query, expected] of cases) {
    test(`${query} → 400 ${expected.code} (${expected.parameter})`, async () => {
      const { token } = await customer();
      const res = await get(token, `/orders?${query}`);
      // The sort parser words its own detail as a sentence.
      const detail = expected.detail === 'sort has an empty key' ? 'sort has an empty key.' : expected.detail;
      expectProblem(res, 400, expected.code, '/orders', detail, { errors: [{ detail: expected.detail, parameter: expected.parameter }] });
    });
  }

  test('every malformed parameter is named, not only the first', async () => {
    const { token } = await customer();
    const res = await get(token, '/orders?status=nope&pageSize=0');
    const errors = [
      { detail: 'query parameter "status" must be equal to one of the allowed values', parameter: 'status' },
      { detail: 'query parameter "pageSize" must be >= 1', parameter: 'pageSize' },
    ];
    expectProblem(res, 400, 'REQUEST_PARAMETER_INVALID', '/orders', errors.map((e) => e.detail).join('; '), { errors });
  });

  test('an unknown parameter is refused even beside valid ones', async () => {
    const { token } = await customer();
    const res = await get(token, '/orders?status=pending&color=red&size=9');
    const errors = [
      { detail: 'query parameter "color" is not supported by this collection', parameter: 'color' },
      { detail: 'query parameter "size" is not supported by this collection', parameter: 'size' },
    ];
    expectProblem(res, 400, 'QUERY_UNKNOWN_PARAMETER', '/orders', errors.map((e) => e.detail).join('; '), { errors });
  });
});

describe('GET /orders: who sees what', () => {
  test('a customer sees only their own orders', async () => {
    const a = await customer();
    const b = await customer();
    const mine = await order(a.user.id);
    await order(b.user.id);
    await order(b.user.id, { status: 'paid' });
    const res = await get(a.token, '/orders');
    assert.deepEqual(ids(res), [mine]);
    assert.equal(res.json().meta.total, 1);
    assert.deepEqual(ids(await get(a.token, '/orders?status=paid')), []);
  });

  test('a customer may name themselves as customerId', async () => {
    const a = await customer();
    const mine = await order(a.user.id);
    const res = await get(a.token, `/orders?customerId=${a.user.id}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(ids(res), [mine]);
  });

  test('a customer naming another customerId → 403', async () => {
    const a = await customer();
    const b = await customer();
    await order(b.user.id);
    const res = await get(a.token, `/orders?customerId=${b.user.id}`);
    expectProblem(res, 403, 'AUTH_FORBIDDEN', '/orders', 'Customers can list only their own orders.');
  });

  test('staff and service clients see every customer\'s orders', async () => {
    const a = await customer();
    const b = await customer();
    const a1 = await order(a.user.id, { status: 'delivered', total: 77_777_001 });
    const b1 = await order(b.user.id, { status: 'delivered', total: 77_777_002 });
    for (const token of [await staffToken(), await t.token({ service: true, scopes: ['orders:read'] })]) {
      const res = await get(token, '/orders?minTotal=77777001&sort=total');
      assert.equal(res.statusCode, 200);
      assert.deepEqual(ids(res), [a1, b1]);
      assert.deepEqual(res.json().data.map((o: { customerId: number }) => o.customerId), [a.user.id, b.user.id]);
    }
  });

  test('without a token → 401 with a Bearer challenge', async () => {
    const res = await get(undefined, '/orders');
    expectProblem(res, 401, 'AUTH_TOKEN_MISSING', '/orders', 'This endpoint requires an access token: Authorization: Bearer <token>.');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay"');
  });

  test('without orders:read → 403 insufficient_scope', async () => {
    const { user } = await customer();
    const res = await get(await t.token({ userId: user.id, scopes: ['orders:write'] }), '/orders');
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', '/orders', 'This operation requires the scope "orders:read".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:read"');
  });
});

describe('GET /orders: meta.total is exact', () => {
  const total = async (token: string, query = '') => (await get(token, `/orders${query}`)).json().meta.total as number;

  test('per customer, after creates, status changes and deletes', async () => {
    const { user, token } = await customer();
    const staff = await staffToken();
    const created: number[] = [];
    for (let i = 0; i < 4; i++) created.push(await order(user.id, { total: 100 * (i + 1) }));
    assert.equal(await total(token), 4);
    assert.equal(await total(token, '?status=pending'), 4);
    assert.equal(await total(staff, `?customerId=${user.id}`), 4);

    const cancel = await t.request(token, { method: 'PUT', url: `/orders/${created[0]}`, payload: { status: 'cancelled' } });
    assert.equal(cancel.statusCode, 200);
    assert.equal(await total(token), 4);
    assert.equal(await total(token, '?status=pending'), 3);
    assert.equal(await total(token, '?status=cancelled'), 1);
    assert.equal(await total(staff, `?customerId=${user.id}&status=cancelled`), 1);

    const created2 = await t.request(token, { method: 'POST', url: '/orders', payload: { productId: (await t.db.query<{ product_id: number }>('SELECT product_id FROM order_items WHERE order_id = $1', [created[1]])).rows[0]!.product_id, qty: 2 } });
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
    const staff = await staffToken();
    const statuses = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const;
    const before = new Map<string, number>();
    for (const status of statuses) {
      before.set(status, await total(staff, `?status=${status}`));
      assert.equal(before.get(status), await visibleCount('status = $1', [status]));
    }
    const allBefore = await total(staff);
    assert.equal(allBefore, await visibleCount('TRUE', []));

    // More than 16 orders, so every counter shard is touched.
    const a = await customer();
    const b = await customer();
    const made: number[] = [];
    for (let i = 0; i < 20; i++) made.push(await order(i % 2 ? a.user.id : b.user.id, { status: i % 5 === 0 ? 'paid' : 'pending' }));
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
    const { user, token } = await customer();
    const staff = await staffToken();
    const made: number[] = [];
    for (let i = 0; i < 6; i++) made.push(await order(user.id));
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
    const { user, token } = await customer();
    for (const amount of [10, 20, 30, 40]) await order(user.id, { total: amount });
    const deleted = await order(user.id, { total: 50 });
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${deleted}` })).statusCode, 204);
    const res = await get(token, '/orders?minTotal=20&pageSize=2');
    assert.deepEqual(res.json().meta, { total: 3, page: 1, pageSize: 2, totalPages: 2 });
    assert.equal(await total(await staffToken(), `?customerId=${user.id}&minTotal=20&status=pending`), 3);
  });

  test('deleted orders appear neither in data nor in the total', async () => {
    const { user, token } = await customer();
    const kept = await order(user.id);
    const gone = await order(user.id, { status: 'cancelled' });
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${gone}` })).statusCode, 204);
    const res = await get(token, '/orders');
    assert.deepEqual(res.json(), { data: [await orderInDb(kept)], meta: { total: 1, page: 1, pageSize: 20, totalPages: 1 } });
    assert.deepEqual(ids(await get(token, '/orders?status=cancelled')), []);
    assert.equal((await get(await staffToken(), `/orders?customerId=${user.id}&status=cancelled`)).json().meta.total, 0);
    const { rows } = await t.db.query<{ deleted: boolean }>('SELECT deleted_at IS NOT NULL AS deleted FROM orders WHERE id = $1', [gone]);
    assert.deepEqual(rows, [{ deleted: true }]);
  });
});
