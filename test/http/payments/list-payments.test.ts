// GET /payments: the collection — who sees which payments, the status and orderId filters, sort,
// paging with meta and Link, and strict parameters. Lists of staff and service clients span every
// test's rows, so they are checked through filters on rows made here.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { V1Payment as Payment } from '../../helpers/v1-types.ts';
import { createCustomer, createServiceToken, createStaffToken, get } from '../../helpers/actors.ts';
import { PUBLIC_URL, setUpTestApp } from '../../helpers/app.ts';
import { readableMeta } from '../../helpers/paging.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem, pagingLinks } from '../../helpers/problems.ts';
import { JSON_TYPE, makePayment, makeRefund, readStoredPayment, VENDOR_TYPE } from './payments.ts';

const t = setUpTestApp();

const link = (path: string, query: string, rel: string) => `<${PUBLIC_URL}${path}?${query}>; rel="${rel}"`;
const ids = (res: LightMyRequestResponse): number[] => res.json().data.map((p: Payment) => p.id);

/** A payment of this customer, optionally moved to a chosen creation time. */
async function paymentOf(token: string, fields: { amount?: number; createdAt?: string; orderId?: number } = {}): Promise<number> {
  const payment = await makePayment(t, token, { amount: fields.amount ?? 1000, currency: 'EUR', orderId: fields.orderId });
  if (fields.createdAt) await t.db.query('UPDATE payments SET created_at = $2 WHERE id = $1', [payment.id, fields.createdAt]);
  return payment.id;
}

/** 200, JSON, no-store, no ETag; the page equal to these stored payments and this meta (its cursors as readableMeta reads them). */
async function expectPage(res: LightMyRequestResponse, paymentIds: number[], meta: object, contentType = JSON_TYPE): Promise<void> {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], contentType);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.vary, 'Accept');
  assert.equal(res.headers.etag, undefined);
  const body = res.json();
  assert.deepEqual(
    { data: body.data, meta: readableMeta(body.meta) },
    { data: await Promise.all(paymentIds.map((id) => readStoredPayment(t.db, id))), meta },
  );
}

const onePage = (total: number) => ({ total, page: 1, pageSize: 20, totalPages: total === 0 ? 0 : 1, nextCursor: null, prevCursor: null });

/** What a cursor at this payment holds, sorted by createdAt (either way) then id, n rows before it. */
async function cursorAt(paymentId: number, n: number) {
  return { v: [(await readStoredPayment(t.db, paymentId)).createdAt, paymentId], n };
}

describe('GET /payments: envelope and headers', () => {
  test('200 with exactly {data, meta}, each payment as it reads alone; Link to page 1', async () => {
    const { user, token } = await createCustomer(t);
    const first = await paymentOf(token, { amount: 500, createdAt: '2001-01-01T10:00:00Z' });
    const second = await paymentOf(token, { amount: 40002, createdAt: '2001-01-02T10:00:00Z' });
    const res = await get(t, token, '/payments');
    await expectPage(res, [first, second], onePage(2));
    assert.deepEqual(Object.keys(res.json()), ['data', 'meta']);
    assert.deepEqual(res.json().data[0], {
      id: first,
      status: 'succeeded',
      amount: 500,
      currency: 'EUR',
      amountRefunded: 0,
      orderId: null,
      customerId: user.id,
      declineCode: null,
      createdAt: '2001-01-01T10:00:00.000Z',
      updatedAt: res.json().data[0].updatedAt,
    });
    assert.equal(pagingLinks(res), `${link('/payments', 'page=1', 'first')}, ${link('/payments', 'page=1', 'last')}`);
    for (const payment of res.json().data) assert.deepEqual((await get(t, token, `/payments/${payment.id}`)).json(), payment);
  });

  test('no payments: total 0, totalPages 0', async () => {
    const { token } = await createCustomer(t);
    const res = await get(t, token, '/payments');
    await expectPage(res, [], onePage(0));
    assert.equal(pagingLinks(res), `${link('/payments', 'page=1', 'first')}, ${link('/payments', 'page=1', 'last')}`);
  });

  test('/v1/payments and the vendor media type answer the same collection', async () => {
    const { token } = await createCustomer(t);
    const a = await paymentOf(token);
    const b = await paymentOf(token);
    const versioned = await get(t, token, '/v1/payments?pageSize=1');
    await expectPage(versioned, [a], { total: 2, page: 1, pageSize: 1, totalPages: 2, nextCursor: await cursorAt(a, 0), prevCursor: null });
    assert.equal(
      pagingLinks(versioned),
      [
        link('/v1/payments', 'pageSize=1&page=1', 'first'),
        link('/v1/payments', `pageSize=1&after=${versioned.json().meta.nextCursor}`, 'next'),
        link('/v1/payments', 'pageSize=1&page=2', 'last'),
      ].join(', '),
    );
    await expectPage(await get(t, token, '/payments', { accept: VENDOR_TYPE }), [a, b], onePage(2), `${VENDOR_TYPE}; charset=utf-8`);
  });
});

describe('GET /payments: who sees what', () => {
  test('a customer sees their own payments only, those staff made of their orders included', async () => {
    const a = await createCustomer(t);
    const b = await createCustomer(t);
    const staff = await createStaffToken(t);
    const aAlone = await paymentOf(a.token);
    const aOrder = await createOrder(t.db, a.user.id, { price: 700 });
    const aByStaff = await paymentOf(staff, { amount: 700, orderId: aOrder.id });
    const bOrder = await createOrder(t.db, b.user.id, { price: 900 });
    const bPaid = await paymentOf(b.token, { amount: 900, orderId: bOrder.id });

    await expectPage(await get(t, a.token, '/payments'), [aAlone, aByStaff], onePage(2));
    await expectPage(await get(t, b.token, '/payments'), [bPaid], onePage(1));
    // Filtering by another customer's order finds nothing, and says nothing about it.
    await expectPage(await get(t, a.token, `/payments?orderId=${bOrder.id}`), [], onePage(0));
    await expectPage(await get(t, a.token, `/payments?orderId=${aOrder.id}`), [aByStaff], onePage(1));
  });

  test("staff and service clients see every customer's payments", async () => {
    const a = await createCustomer(t);
    const b = await createCustomer(t);
    const aOrder = await createOrder(t.db, a.user.id, { price: 300 });
    const bOrder = await createOrder(t.db, b.user.id, { price: 400 });
    const aPaid = await paymentOf(a.token, { amount: 300, orderId: aOrder.id });
    const bPaid = await paymentOf(b.token, { amount: 400, orderId: bOrder.id });
    for (const token of [await createStaffToken(t), await createServiceToken(t, ['payments:read'])]) {
      await expectPage(await get(t, token, `/payments?orderId=${aOrder.id}`), [aPaid], onePage(1));
      await expectPage(await get(t, token, `/payments?orderId=${bOrder.id}`), [bPaid], onePage(1));
      // Unfiltered: everyone's, newest first (this file's tests run one at a time).
      const all = await get(t, token, '/payments?sort=-createdAt&pageSize=2');
      assert.deepEqual(ids(all), [bPaid, aPaid]);
      const { rows } = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM payments');
      assert.equal(all.json().meta.total, rows[0]!.n);
    }
  });

  test('without payments:read → 403 insufficient_scope; without a token → 401', async () => {
    const { user } = await createCustomer(t);
    const res = await get(t, await t.token({ userId: user.id, scopes: ['orders:read'] }), '/payments');
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', '/payments', 'This operation requires the scope "payments:read".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="payments:read"');
    const anonymous = await get(t, undefined, '/payments');
    expectProblem(
      anonymous,
      401,
      'AUTH_TOKEN_MISSING',
      '/payments',
      'This endpoint requires an access token: Authorization: Bearer <token>.',
    );
  });
});

describe('GET /payments: filters', () => {
  /** One customer's payment in each status. */
  async function everyStatus() {
    const customer = await createCustomer(t);
    const staff = await createStaffToken(t);
    const succeeded = await paymentOf(customer.token, { amount: 100 });
    const declined = await paymentOf(customer.token, { amount: 40002 });
    const partial = await paymentOf(customer.token, { amount: 300 });
    await makeRefund(t, staff, partial, { amount: 100 });
    const refunded = await paymentOf(customer.token, { amount: 400 });
    await makeRefund(t, staff, refunded, {});
    return { ...customer, staff, byStatus: { succeeded, declined, partially_refunded: partial, refunded } };
  }

  test('status alone, for every status', async () => {
    const { token, byStatus } = await everyStatus();
    for (const [status, id] of Object.entries(byStatus))
      await expectPage(await get(t, token, `/payments?status=${status}`), [id], onePage(1));
  });

  test('status and orderId combine', async () => {
    const { user, token } = await createCustomer(t);
    const staff = await createStaffToken(t);
    const declinedOrder = await createOrder(t.db, user.id, { price: 40051 });
    const d1 = await paymentOf(token, { amount: 40051, orderId: declinedOrder.id });
    const d2 = await paymentOf(token, { amount: 40051, orderId: declinedOrder.id });
    const paidOrder = await createOrder(t.db, user.id, { price: 800 });
    const paid = await paymentOf(token, { amount: 800, orderId: paidOrder.id });
    await makeRefund(t, staff, paid, { amount: 100 });
    const unrelated = await paymentOf(token, { amount: 40051 });

    for (const reader of [token, staff]) {
      await expectPage(await get(t, reader, `/payments?orderId=${declinedOrder.id}&status=declined`), [d1, d2], onePage(2));
      await expectPage(await get(t, reader, `/payments?status=succeeded&orderId=${declinedOrder.id}`), [], onePage(0));
      await expectPage(await get(t, reader, `/payments?orderId=${paidOrder.id}&status=partially_refunded`), [paid], onePage(1));
      await expectPage(await get(t, reader, `/payments?orderId=${paidOrder.id}&status=declined`), [], onePage(0));
    }
    await expectPage(await get(t, token, '/payments?status=declined'), [d1, d2, unrelated], onePage(3));
  });
});

describe('GET /payments: sort', () => {
  // c and d tie on createdAt.
  async function sortFixture() {
    const { token } = await createCustomer(t);
    const a = await paymentOf(token, { createdAt: '2001-03-03T00:00:00Z' });
    const b = await paymentOf(token, { createdAt: '2001-03-01T00:00:00Z' });
    const c = await paymentOf(token, { createdAt: '2001-03-02T00:00:00Z' });
    const d = await paymentOf(token, { createdAt: '2001-03-02T00:00:00Z' });
    return { token, a, b, c, d };
  }

  test('default and createdAt: oldest first, id breaking ties', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(ids(await get(t, token, '/payments')), [b, c, d, a]);
    await expectPage(await get(t, token, '/payments?sort=createdAt'), [b, c, d, a], onePage(4));
  });

  test('-createdAt: newest first, the id tie-breaker descending with it', async () => {
    const { token, a, b, c, d } = await sortFixture();
    await expectPage(await get(t, token, '/payments?sort=-createdAt'), [a, d, c, b], onePage(4));
  });

  test('an explicit id key breaks ties as written', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(ids(await get(t, token, '/payments?sort=-createdAt,id')), [a, c, d, b]);
    assert.deepEqual(ids(await get(t, token, '/payments?sort=id')), [a, b, c, d]);
    assert.deepEqual(ids(await get(t, token, '/payments?sort=-id')), [d, c, b, a]);
  });
});

describe('GET /payments: paging', () => {
  test('page and pageSize: meta, and Link keeping every other parameter', async () => {
    const { token } = await createCustomer(t);
    const made: number[] = [];
    for (let i = 0; i < 5; i++) made.push(await paymentOf(token, { createdAt: `2001-04-0${i + 1}T00:00:00Z` }));
    const q = (page: number) => `status=succeeded&sort=-createdAt&pageSize=2&page=${page}`;
    const newest = [...made].reverse();

    const beside = (name: string, cursor: string) => `status=succeeded&sort=-createdAt&pageSize=2&${name}=${cursor}`;

    const middle = await get(t, token, `/payments?${q(2)}`);
    const cursors = { nextCursor: await cursorAt(newest[3]!, 3), prevCursor: await cursorAt(newest[2]!, 2) };
    await expectPage(middle, newest.slice(2, 4), { total: 5, page: 2, pageSize: 2, totalPages: 3, ...cursors });
    const { meta } = middle.json();
    assert.equal(
      pagingLinks(middle),
      [
        link('/payments', q(1), 'first'),
        link('/payments', beside('before', meta.prevCursor), 'prev'),
        link('/payments', beside('after', meta.nextCursor), 'next'),
        link('/payments', q(3), 'last'),
      ].join(', '),
    );

    const first = await get(t, token, `/payments?${q(1)}`);
    await expectPage(first, newest.slice(0, 2), {
      total: 5,
      page: 1,
      pageSize: 2,
      totalPages: 3,
      nextCursor: await cursorAt(newest[1]!, 1),
      prevCursor: null,
    });
    assert.equal(
      pagingLinks(first),
      [
        link('/payments', q(1), 'first'),
        link('/payments', beside('after', first.json().meta.nextCursor), 'next'),
        link('/payments', q(3), 'last'),
      ].join(', '),
    );
    // The cursors of page 2 lead to pages 1 and 3.
    assert.deepEqual((await get(t, token, `/payments?${beside('before', meta.prevCursor)}`)).json(), first.json());

    const last = await get(t, token, `/payments?${q(3)}`);
    await expectPage(last, newest.slice(4), {
      total: 5,
      page: 3,
      pageSize: 2,
      totalPages: 3,
      nextCursor: null,
      prevCursor: await cursorAt(newest[4]!, 4),
    });
    assert.equal(
      pagingLinks(last),
      [
        link('/payments', q(1), 'first'),
        link('/payments', beside('before', last.json().meta.prevCursor), 'prev'),
        link('/payments', q(3), 'last'),
      ].join(', '),
    );
    assert.deepEqual((await get(t, token, `/payments?${beside('after', meta.nextCursor)}`)).json(), last.json());

    const beyond = await get(t, token, `/payments?${q(9)}`);
    await expectPage(beyond, [], { total: 5, page: 9, pageSize: 2, totalPages: 3, nextCursor: null, prevCursor: null });
    assert.equal(
      pagingLinks(beyond),
      [link('/payments', q(1), 'first'), link('/payments', q(3), 'prev'), link('/payments', q(3), 'last')].join(', '),
    );

    await expectPage(await get(t, token, '/payments?pageSize=100'), made, {
      total: 5,
      page: 1,
      pageSize: 100,
      totalPages: 1,
      nextCursor: null,
      prevCursor: null,
    });
  });
});

describe('GET /payments: invalid parameters → 400 naming the parameter', () => {
  const invalid = (parameter: string, message: string) => ({
    code: 'REQUEST_PARAMETER_INVALID' as const,
    parameter,
    detail: `query parameter "${parameter}" ${message}`,
  });
  const unknown = (parameter: string) => ({
    code: 'QUERY_UNKNOWN_PARAMETER' as const,
    parameter,
    detail: `query parameter "${parameter}" is not supported by this collection`,
  });
  const sortKey = (key: string) => ({
    code: 'QUERY_UNKNOWN_SORT_KEY' as const,
    parameter: 'sort',
    detail: `"${key}" is not a sort key of this collection; use createdAt, id`,
  });
  const cases: [
    query: string,
    expected: {
      code: 'REQUEST_PARAMETER_INVALID' | 'QUERY_UNKNOWN_PARAMETER' | 'QUERY_UNKNOWN_SORT_KEY' | 'QUERY_DUPLICATE_SORT_KEY';
      parameter: string;
      detail: string;
    },
  ][] = [
    ['customerId=1', unknown('customerId')],
    ['amount=100', unknown('amount')],
    ['Status=succeeded', unknown('Status')],
    ['offset=20', unknown('offset')],
    ['sort=amount', sortKey('amount')],
    ['sort=-status', sortKey('status')],
    ['sort=updatedAt', sortKey('updatedAt')],
    [
      'sort=createdAt,-createdAt',
      { code: 'QUERY_DUPLICATE_SORT_KEY', parameter: 'sort', detail: '"createdAt" appears more than once in sort' },
    ],
    ['status=paid', invalid('status', 'must be equal to one of the allowed values')],
    ['orderId=0', invalid('orderId', 'must be >= 1')],
    ['orderId=abc', invalid('orderId', 'must be integer')],
    ['pageSize=101', invalid('pageSize', 'must be <= 100')],
    ['page=0', invalid('page', 'must be >= 1')],
  ];
  for (const [query, expected] of cases) {
    test(`${query} → 400 ${expected.code}`, async () => {
      const { token } = await createCustomer(t);
      const res = await get(t, token, `/payments?${query}`);
      expectProblem(res, 400, expected.code, '/payments', expected.detail, {
        errors: [{ detail: expected.detail, parameter: expected.parameter }],
      });
    });
  }
});
