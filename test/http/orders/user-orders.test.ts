// GET /users/{userId}/orders: one user's orders, with the query parameters and collection rules of
// GET /orders; customerId there can only agree with the path's user or select nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ErrorCode } from '../../../src/core/errors.ts';
import { createCustomer, createServiceToken, createStaffToken, get } from '../../helpers/actors.ts';
import { PUBLIC_URL, setUpTestApp } from '../../helpers/app.ts';
import { EMPTY_FIRST_PAGE_META, readableMeta } from '../../helpers/paging.ts';
import { expectProblem, pagingLinks } from '../../helpers/problems.ts';
import { createOrderRow, idsOf, readStoredOrder } from './stored-orders.ts';

const t = setUpTestApp();

const JSON_TYPE = 'application/json; charset=utf-8';
const MISSING_USER = 2_000_000_000;

describe('GET /users/{userId}/orders: who may list', () => {
  test('a customer lists their own orders: 200, the envelope, Link, caching headers', async () => {
    const me = await createCustomer(t);
    const other = await createCustomer(t);
    const first = await createOrderRow(t.db, me.user.id, { createdAt: '2026-02-01T00:00:00Z' });
    const second = await createOrderRow(t.db, me.user.id, { status: 'paid', createdAt: '2026-02-02T00:00:00Z' });
    await createOrderRow(t.db, other.user.id);
    const path = `/users/${me.user.id}/orders`;

    const res = await get(t, me.token, path);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'private, no-cache');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(pagingLinks(res), `<${PUBLIC_URL}${path}?page=1>; rel="first", <${PUBLIC_URL}${path}?page=1>; rel="last"`);
    assert.deepEqual(res.json(), {
      data: [await readStoredOrder(t.db, first), await readStoredOrder(t.db, second)],
      meta: { total: 2, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    });
  });

  test("a customer asking for another user's orders → 403", async () => {
    const me = await createCustomer(t);
    const other = await createCustomer(t);
    await createOrderRow(t.db, other.user.id);
    const path = `/users/${other.user.id}/orders`;
    expectProblem(await get(t, me.token, path), 403, 'AUTH_FORBIDDEN', path, 'Customers can list only their own orders.');
    // Whether the user exists or not: nothing is revealed.
    const missing = `/users/${MISSING_USER}/orders`;
    expectProblem(await get(t, me.token, missing), 403, 'AUTH_FORBIDDEN', missing, 'Customers can list only their own orders.');
  });

  test("staff and service clients list any user's orders", async () => {
    const someone = await createCustomer(t);
    const a = await createOrderRow(t.db, someone.user.id, { createdAt: '2026-02-01T00:00:00Z' });
    const b = await createOrderRow(t.db, someone.user.id, { status: 'shipped', createdAt: '2026-02-03T00:00:00Z' });
    const expected = {
      data: [await readStoredOrder(t.db, a), await readStoredOrder(t.db, b)],
      meta: { total: 2, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    };
    for (const token of [await createStaffToken(t), await createServiceToken(t, ['orders:read'])]) {
      const res = await get(t, token, `/users/${someone.user.id}/orders`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), expected);
    }
  });

  test('staff asking for a user that exists without orders → 200 empty', async () => {
    const someone = await createCustomer(t);
    const res = await get(t, await createStaffToken(t), `/users/${someone.user.id}/orders`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      data: [],
      meta: EMPTY_FIRST_PAGE_META,
    });
  });

  test('staff or a service client asking for an unknown user → 404 USER_NOT_FOUND', async () => {
    const path = `/users/${MISSING_USER}/orders`;
    for (const token of [await createStaffToken(t), await createServiceToken(t, ['orders:read'])]) {
      expectProblem(await get(t, token, path), 404, 'USER_NOT_FOUND', path, `User ${MISSING_USER} does not exist.`);
    }
  });

  test('/v1/users/{userId}/orders answers the same, links under /v1', async () => {
    const me = await createCustomer(t);
    await createOrderRow(t.db, me.user.id);
    const path = `/v1/users/${me.user.id}/orders`;
    const res = await get(t, me.token, path);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), (await get(t, me.token, `/users/${me.user.id}/orders`)).json());
    assert.equal(pagingLinks(res), `<${PUBLIC_URL}${path}?page=1>; rel="first", <${PUBLIC_URL}${path}?page=1>; rel="last"`);
  });

  test('without a token → 401; without orders:read → 403 insufficient_scope', async () => {
    const me = await createCustomer(t);
    const path = `/users/${me.user.id}/orders`;
    expectProblem(
      await get(t, undefined, path),
      401,
      'AUTH_TOKEN_MISSING',
      path,
      'This endpoint requires an access token: Authorization: Bearer <token>.',
    );
    const res = await get(t, await t.token({ userId: me.user.id, scopes: ['orders:write'] }), path);
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', path, 'This operation requires the scope "orders:read".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:read"');
  });
});

describe('GET /users/{userId}/orders: filters, sort, paging', () => {
  async function fixture() {
    const me = await createCustomer(t);
    const a = await createOrderRow(t.db, me.user.id, { status: 'pending', total: 500, createdAt: '2026-03-03T00:00:00Z' });
    const b = await createOrderRow(t.db, me.user.id, { status: 'paid', total: 1500, createdAt: '2026-03-01T00:00:00Z' });
    const c = await createOrderRow(t.db, me.user.id, { status: 'pending', total: 1500, createdAt: '2026-03-02T00:00:00Z' });
    const d = await createOrderRow(t.db, me.user.id, { status: 'shipped', total: 200, createdAt: '2026-03-02T00:00:00Z' });
    // Another customer's orders must never leak in, whatever the filter.
    const other = await createCustomer(t);
    await createOrderRow(t.db, other.user.id, { status: 'pending', total: 1500, createdAt: '2026-03-02T00:00:00Z' });
    return { ...me, path: `/users/${me.user.id}/orders`, a, b, c, d };
  }

  test('status, minTotal and both combined', async () => {
    const { token, path, a, b, c } = await fixture();
    assert.deepEqual(idsOf(await get(t, token, `${path}?status=pending`)), [c, a]);
    assert.deepEqual(idsOf(await get(t, token, `${path}?minTotal=500`)), [b, c, a]);
    const both = await get(t, token, `${path}?status=pending&minTotal=1000`);
    assert.deepEqual(both.json(), {
      data: [await readStoredOrder(t.db, c)],
      meta: { total: 1, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    });
    assert.deepEqual(idsOf(await get(t, token, `${path}?status=delivered`)), []);
  });

  test('sort: keys in order, "-" descending, id as the last tie-breaker', async () => {
    const { token, path, a, b, c, d } = await fixture();
    assert.deepEqual(idsOf(await get(t, token, path)), [b, c, d, a]);
    assert.deepEqual(idsOf(await get(t, token, `${path}?sort=-createdAt`)), [a, d, c, b]);
    assert.deepEqual(idsOf(await get(t, token, `${path}?sort=status,-total`)), [b, c, a, d]);
    assert.deepEqual(idsOf(await get(t, token, `${path}?sort=total`)), [d, a, b, c]);
    assert.deepEqual(idsOf(await get(t, token, `${path}?sort=-total,-createdAt`)), [c, b, a, d]);
  });

  test('paging with exact totals and Link', async () => {
    const { token, path, a, b, c, d } = await fixture();
    const res = await get(t, token, `${path}?sort=-id&pageSize=3&page=2`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(body.data, [await readStoredOrder(t.db, a)]);
    // The last page: a cursor back to the page before (a's id, 3 rows before it), none forward.
    assert.deepEqual(readableMeta(body.meta), {
      total: 4,
      page: 2,
      pageSize: 3,
      totalPages: 2,
      nextCursor: null,
      prevCursor: { v: [a], n: 3 },
    });
    const q = (page: number) => `sort=-id&pageSize=3&page=${page}`;
    assert.equal(
      pagingLinks(res),
      [
        `<${PUBLIC_URL}${path}?${q(1)}>; rel="first"`,
        `<${PUBLIC_URL}${path}?sort=-id&pageSize=3&before=${body.meta.prevCursor}>; rel="prev"`,
        `<${PUBLIC_URL}${path}?${q(2)}>; rel="last"`,
      ].join(', '),
    );
    assert.deepEqual(idsOf(await get(t, token, `${path}?sort=-id&pageSize=3&before=${body.meta.prevCursor}`)), [d, c, b]);
    assert.deepEqual(idsOf(await get(t, token, `${path}?sort=-id&pageSize=3`)), [d, c, b]);
  });

  test('meta.total follows creates, status changes and deletes', async () => {
    const { user, token, path, a, c } = await fixture();
    const total = async (query = '') => (await get(t, token, `${path}${query}`)).json().meta.total as number;
    assert.equal(await total(), 4);
    assert.equal((await t.request(token, { method: 'PUT', url: `/orders/${a}`, payload: { status: 'cancelled' } })).statusCode, 200);
    assert.equal(await total('?status=pending'), 1);
    assert.equal(await total('?status=cancelled'), 1);
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${c}` })).statusCode, 204);
    assert.equal(await total(), 3);
    assert.equal(await total('?status=pending'), 0);
    await createOrderRow(t.db, user.id);
    assert.equal(await total(), 4);
    assert.equal(await total('?status=pending'), 1);
    assert.equal(await total('?minTotal=1000'), 2);
    const staffView = await get(t, await createStaffToken(t), `${path}?status=pending`);
    assert.equal(staffView.json().meta.total, 1);
  });

  test("customerId of the path's user: the same page as without it, Link keeping the parameter", async () => {
    const { user, token, path, a, b, c, d } = await fixture();
    const res = await get(t, token, `${path}?customerId=${user.id}&status=pending`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), (await get(t, token, `${path}?status=pending`)).json());
    assert.deepEqual(idsOf(res), [c, a]);
    const query = `customerId=${user.id}&status=pending&page=1`;
    assert.equal(pagingLinks(res), `<${PUBLIC_URL}${path}?${query}>; rel="first", <${PUBLIC_URL}${path}?${query}>; rel="last"`);
    assert.deepEqual(idsOf(await get(t, token, `${path}?customerId=${user.id}&sort=-total,-createdAt`)), [c, b, a, d]);
    const staffView = await get(t, await createStaffToken(t), `${path}?customerId=${user.id}`);
    assert.deepEqual(idsOf(staffView), [b, c, d, a]);
  });

  test('customerId of anyone else: 200 with an empty page (no order belongs to two customers)', async () => {
    const { token, path } = await fixture();
    const other = await createCustomer(t);
    await createOrderRow(t.db, other.user.id);
    const empty = { data: [], meta: EMPTY_FIRST_PAGE_META };
    for (const [caller, query] of [
      [token, `customerId=${other.user.id}`],
      [token, `customerId=${MISSING_USER}&status=pending&minTotal=100&sort=-createdAt`],
      [await createStaffToken(t), `customerId=${other.user.id}`],
      [await createServiceToken(t, ['orders:read']), `customerId=${other.user.id}`],
    ] as const) {
      const res = await get(t, caller, `${path}?${query}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      assert.deepEqual(res.json(), empty);
      assert.equal(
        pagingLinks(res),
        `<${PUBLIC_URL}${path}?${query}&page=1>; rel="first", <${PUBLIC_URL}${path}?${query}&page=1>; rel="last"`,
      );
    }
  });

  test('customerId changes nothing of who may list: 403 for another customer, 404 for an unknown user, 400 for a bad sort', async () => {
    const me = await createCustomer(t);
    const other = await createCustomer(t);
    const path = `/users/${other.user.id}/orders`;
    for (const customerId of [me.user.id, other.user.id]) {
      expectProblem(
        await get(t, me.token, `${path}?customerId=${customerId}`),
        403,
        'AUTH_FORBIDDEN',
        path,
        'Customers can list only their own orders.',
      );
    }
    const missing = `/users/${MISSING_USER}/orders`;
    expectProblem(
      await get(t, await createStaffToken(t), `${missing}?customerId=${other.user.id}`),
      404,
      'USER_NOT_FOUND',
      missing,
      `User ${MISSING_USER} does not exist.`,
    );
    const mine = `/users/${me.user.id}/orders`;
    const detail = '"name" is not a sort key of this collection; use createdAt, status, total, id';
    expectProblem(await get(t, me.token, `${mine}?customerId=${other.user.id}&sort=name`), 400, 'QUERY_UNKNOWN_SORT_KEY', mine, detail, {
      errors: [{ detail, parameter: 'sort' }],
    });
  });

  test('deleted orders are excluded', async () => {
    const { token, path, a, b, c, d } = await fixture();
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${a}` })).statusCode, 204);
    const res = await get(t, token, path);
    assert.deepEqual(idsOf(res), [b, c, d]);
    assert.equal(res.json().meta.total, 3);
  });
});

describe('GET /users/{userId}/orders: malformed parameters → 400 naming the parameter', () => {
  const param = (parameter: string, message: string) => {
    const detail = `query parameter "${parameter}" ${message}`;
    return { code: 'REQUEST_PARAMETER_INVALID' as ErrorCode, detail, errors: [{ detail, parameter }] };
  };
  const sortProblem = (code: ErrorCode, detail: string) => ({ code, detail, errors: [{ detail, parameter: 'sort' }] });
  const cases: [string, { code: ErrorCode; detail: string; errors: { detail: string; parameter: string }[] }][] = [
    ['status=lost', param('status', 'must be equal to one of the allowed values')],
    ['minTotal=-5', param('minTotal', 'must be >= 0')],
    ['minTotal=5.5', param('minTotal', 'must be integer')],
    ['page=0', param('page', 'must be >= 1')],
    ['pageSize=101', param('pageSize', 'must be <= 100')],
    ['status=paid&status=paid', param('status', 'may appear only once')],
    [
      'sort=customerId',
      sortProblem('QUERY_UNKNOWN_SORT_KEY', '"customerId" is not a sort key of this collection; use createdAt, status, total, id'),
    ],
    ['sort=total,-total', sortProblem('QUERY_DUPLICATE_SORT_KEY', '"total" appears more than once in sort')],
  ];
  for (const [query, expected] of cases) {
    test(`?${query} → 400 ${expected.code}`, async () => {
      const me = await createCustomer(t);
      const path = `/users/${me.user.id}/orders`;
      expectProblem(await get(t, me.token, `${path}?${query}`), 400, expected.code, path, expected.detail, { errors: expected.errors });
    });
  }

  for (const [query, message] of [
    ['customerId=abc', 'must be integer'],
    ['customerId=0', 'must be >= 1'],
    ['customerId=1&customerId=1', 'may appear only once'],
  ] as const) {
    test(`?${query} → 400 naming customerId`, async () => {
      const me = await createCustomer(t);
      const path = `/users/${me.user.id}/orders`;
      const detail = `query parameter "customerId" ${message}`;
      expectProblem(await get(t, me.token, `${path}?${query}`), 400, 'REQUEST_PARAMETER_INVALID', path, detail, {
        errors: [{ detail, parameter: 'customerId' }],
      });
    });
  }

  test('an unknown parameter → 400 QUERY_UNKNOWN_PARAMETER', async () => {
    const me = await createCustomer(t);
    const path = `/users/${me.user.id}/orders`;
    const detail = 'query parameter "userId" is not supported by this collection';
    expectProblem(await get(t, me.token, `${path}?userId=${me.user.id}`), 400, 'QUERY_UNKNOWN_PARAMETER', path, detail, {
      errors: [{ detail, parameter: 'userId' }],
    });
  });

  test('sort with an empty key → 400', async () => {
    const me = await createCustomer(t);
    const path = `/users/${me.user.id}/orders`;
    expectProblem(await get(t, me.token, `${path}?sort=`), 400, 'REQUEST_PARAMETER_INVALID', path, 'sort has an empty key.', {
      errors: [{ detail: 'sort has an empty key', parameter: 'sort' }],
    });
  });

  for (const [userId, message] of [
    ['abc', 'must be integer'],
    ['0', 'must be >= 1'],
    ['1e2', 'must be integer'],
  ] as const) {
    test(`a malformed userId ${userId} → 400 naming the path parameter`, async () => {
      const me = await createCustomer(t);
      const path = `/users/${userId}/orders`;
      const detail = `path parameter "userId" ${message}`;
      expectProblem(await get(t, me.token, path), 400, 'REQUEST_PARAMETER_INVALID', path, detail, {
        errors: [{ detail, parameter: 'userId' }],
      });
    });
  }
});
