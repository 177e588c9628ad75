// POST /payments/{id}/refunds, GET /payments/{id}/refunds and /refunds/{refundId}: staff and
// service clients give money back, never more than was paid, however many refunds run at once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createCustomer, createServiceToken, createStaffToken, get } from '../../helpers/actors.ts';
import { PUBLIC_URL, setUpTestApp } from '../../helpers/app.ts';
import { readableMeta } from '../../helpers/paging.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem, pagingLinks } from '../../helpers/problems.ts';
import {
  expectPayment,
  JSON_TYPE,
  makePayment,
  makeRefund,
  MISSING_ID,
  paymentTag,
  postRefund,
  readPaymentRow,
  readStoredPayment,
  readStoredRefunds,
  refundRepresentation,
  refundTag,
  TIMESTAMP,
} from './payments.ts';

const t = setUpTestApp();

const REFUND_REFERENCE = /^sim_re_[A-Za-z0-9_-]{24}$/;

/** A customer's succeeded payment of `amount` (no order), and tokens to refund and read it. */
async function paidPayment(amount: number, currency = 'EUR') {
  const customer = await createCustomer(t);
  const payment = await makePayment(t, customer.token, { amount, currency });
  return { customer, payment, staff: await createStaffToken(t) };
}

/** 201 with the refund as stored, its Location, its ETag and no-store. */
async function expectRefund(res: LightMyRequestResponse, paymentId: number, prefix = '') {
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.headers['content-type'], JSON_TYPE);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.vary, 'Accept');
  const body = res.json();
  assert.equal(res.headers.etag, refundTag(body.id));
  assert.equal(res.headers.location, `${PUBLIC_URL}${prefix}/payments/${paymentId}/refunds/${body.id}`);
  const stored = (await readStoredRefunds(t.db, paymentId)).find((r) => r.id === body.id);
  assert.ok(stored, `refund ${body.id} is stored`);
  assert.match(stored.processorReference, REFUND_REFERENCE);
  assert.deepEqual(body, refundRepresentation(stored));
  assert.match(body.createdAt, TIMESTAMP);
  return body;
}

/** The collection envelope of a payment's refunds with no-store. */
/** 200, no-store; these refunds and this meta (its cursors as readableMeta reads them). */
function expectRefundPage(res: LightMyRequestResponse, data: unknown[], meta: object) {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], JSON_TYPE);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.etag, undefined);
  const body = res.json();
  assert.deepEqual({ data: body.data, meta: readableMeta(body.meta) }, { data, meta });
}

describe('POST /payments/{id}/refunds: 201', () => {
  test('a partial refund, then the rest: partially_refunded, then refunded', async () => {
    const { customer, payment, staff } = await paidPayment(1000, 'USD');

    const first = await expectRefund(await postRefund(t, staff, payment.id, { amount: 300 }), payment.id);
    assert.deepEqual(first, { id: first.id, paymentId: payment.id, amount: 300, currency: 'USD', createdAt: first.createdAt });
    const afterFirst = await expectPayment(t.db, await get(t, customer.token, `/payments/${payment.id}`), 200);
    assert.deepEqual(afterFirst, { ...payment, status: 'partially_refunded', amountRefunded: 300, updatedAt: afterFirst.updatedAt });
    assert.equal((await readPaymentRow(t.db, payment.id)).version, 2);

    const rest = await expectRefund(await postRefund(t, staff, payment.id, { amount: 700 }), payment.id);
    assert.deepEqual(rest, { id: rest.id, paymentId: payment.id, amount: 700, currency: 'USD', createdAt: rest.createdAt });
    const afterRest = await expectPayment(t.db, await get(t, customer.token, `/payments/${payment.id}`), 200);
    assert.deepEqual(afterRest, { ...payment, status: 'refunded', amountRefunded: 1000, updatedAt: afterRest.updatedAt });
    assert.equal(afterRest.id, payment.id);
    assert.equal((await readPaymentRow(t.db, payment.id)).version, 3);
    assert.deepEqual((await readStoredRefunds(t.db, payment.id)).map(refundRepresentation), [first, rest]);

    // The list, oldest first, to the owner and to staff alike; each Location answers with its refund.
    for (const token of [customer.token, staff]) {
      const list = await get(t, token, `/payments/${payment.id}/refunds`);
      expectRefundPage(list, [first, rest], { total: 2, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null });
      assert.equal(
        pagingLinks(list),
        [
          `<${PUBLIC_URL}/payments/${payment.id}/refunds?page=1>; rel="first"`,
          `<${PUBLIC_URL}/payments/${payment.id}/refunds?page=1>; rel="last"`,
        ].join(', '),
      );
      for (const refund of [first, rest]) {
        const one = await get(t, token, `/payments/${payment.id}/refunds/${refund.id}`);
        assert.equal(one.statusCode, 200);
        assert.equal(one.headers['content-type'], JSON_TYPE);
        assert.equal(one.headers['cache-control'], 'no-store');
        assert.equal(one.headers.etag, refundTag(refund.id));
        assert.deepEqual(one.json(), refund);
      }
    }
  });

  test('on /v1 the Location is under /v1; the refunds list pages with Link', async () => {
    const { payment, staff } = await paidPayment(900);
    const refunds = [];
    for (let i = 0; i < 3; i++)
      refunds.push(await expectRefund(await postRefund(t, staff, payment.id, { amount: 100 }, { prefix: '/v1' }), payment.id, '/v1'));
    const page = await get(t, staff, `/v1/payments/${payment.id}/refunds?pageSize=2&page=2`);
    expectRefundPage(page, [refunds[2]], {
      total: 3,
      page: 2,
      pageSize: 2,
      totalPages: 2,
      nextCursor: null,
      prevCursor: { v: [refunds[2]!.id], n: 2 },
    });
    const base = `${PUBLIC_URL}/v1/payments/${payment.id}/refunds?pageSize=2`;
    const link = (n: number, rel: string) => `<${base}&page=${n}>; rel="${rel}"`;
    assert.equal(
      pagingLinks(page),
      [link(1, 'first'), `<${base}&before=${page.json().meta.prevCursor}>; rel="prev"`, link(2, 'last')].join(', '),
    );
    const first = await get(t, staff, `/payments/${payment.id}/refunds?pageSize=2`);
    expectRefundPage(first, refunds.slice(0, 2), {
      ...{ total: 3, page: 1, pageSize: 2, totalPages: 2 },
      ...{ nextCursor: { v: [refunds[1]!.id], n: 1 }, prevCursor: null },
    });
    // The cursors lead to the pages beside, in either version.
    assert.deepEqual(
      (await get(t, staff, `/v1/payments/${payment.id}/refunds?pageSize=2&after=${first.json().meta.nextCursor}`)).json(),
      page.json(),
    );
    assert.deepEqual(
      (await get(t, staff, `/payments/${payment.id}/refunds?pageSize=2&before=${page.json().meta.prevCursor}`)).json(),
      first.json(),
    );
  });

  test('amount omitted: all that is left, on a fresh and on a partially refunded payment', async () => {
    const fresh = await paidPayment(1234, 'JPY');
    const all = await expectRefund(await postRefund(t, fresh.staff, fresh.payment.id, {}), fresh.payment.id);
    assert.deepEqual(all, { id: all.id, paymentId: fresh.payment.id, amount: 1234, currency: 'JPY', createdAt: all.createdAt });
    assert.deepEqual(await readStoredPayment(t.db, fresh.payment.id), {
      ...fresh.payment,
      status: 'refunded',
      amountRefunded: 1234,
      updatedAt: (await readStoredPayment(t.db, fresh.payment.id)).updatedAt,
    });

    const partial = await paidPayment(1000);
    await makeRefund(t, partial.staff, partial.payment.id, { amount: 250 });
    const rest = await expectRefund(await postRefund(t, partial.staff, partial.payment.id, {}), partial.payment.id);
    assert.equal(rest.amount, 750);
    const stored = await readStoredPayment(t.db, partial.payment.id);
    assert.deepEqual([stored.status, stored.amountRefunded], ['refunded', 1000]);
    assert.deepEqual(
      (await readStoredRefunds(t.db, partial.payment.id)).map((r) => r.amount),
      [250, 750],
    );
  });

  test('a service client refunds; a payment of an order is refunded like any other', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 600 });
    const payment = await makePayment(t, token, { amount: 600, currency: 'EUR', orderId: order.id });
    const service = await createServiceToken(t, ['payments:write']);
    const refund = await expectRefund(await postRefund(t, service, payment.id, { amount: 1 }), payment.id);
    assert.deepEqual([refund.amount, refund.currency], [1, 'EUR']);
    const stored = await readStoredPayment(t.db, payment.id);
    assert.deepEqual([stored.status, stored.amountRefunded], ['partially_refunded', 1]);
  });
});

describe('POST /payments/{id}/refunds: refused, nothing changes', () => {
  /** The payment row and its refunds, to compare before and after a refusal. */
  const snapshot = async (paymentId: number) => ({
    payment: await readPaymentRow(t.db, paymentId),
    refunds: await readStoredRefunds(t.db, paymentId),
  });

  test('more than is left → 422 PAYMENT_REFUND_EXCEEDS_BALANCE with refundableAmount', async () => {
    const { payment, staff } = await paidPayment(1000);
    const tooMuch = await postRefund(t, staff, payment.id, { amount: 1001 });
    expectProblem(
      tooMuch,
      422,
      'PAYMENT_REFUND_EXCEEDS_BALANCE',
      `/payments/${payment.id}/refunds`,
      "Only 1000 of the payment's 1000 can still be refunded.",
      {
        refundableAmount: 1000,
        errors: [{ pointer: '/amount', detail: 'must be at most 1000' }],
      },
    );
    await makeRefund(t, staff, payment.id, { amount: 600 });
    const before = await snapshot(payment.id);
    const res = await postRefund(t, staff, payment.id, { amount: 401 });
    expectProblem(
      res,
      422,
      'PAYMENT_REFUND_EXCEEDS_BALANCE',
      `/payments/${payment.id}/refunds`,
      "Only 400 of the payment's 1000 can still be refunded.",
      {
        refundableAmount: 400,
        errors: [{ pointer: '/amount', detail: 'must be at most 400' }],
      },
    );
    assert.deepEqual(await snapshot(payment.id), before);
    // Exactly what is left is fine.
    assert.equal((await expectRefund(await postRefund(t, staff, payment.id, { amount: 400 }), payment.id)).amount, 400);
  });

  test('a declined payment → 409 PAYMENT_NOT_REFUNDABLE, currentStatus declined', async () => {
    const customer = await createCustomer(t);
    const payment = await makePayment(t, customer.token, { amount: 40051, currency: 'EUR' });
    const staff = await createStaffToken(t);
    const before = await snapshot(payment.id);
    for (const body of [{}, { amount: 1 }]) {
      const res = await postRefund(t, staff, payment.id, body);
      expectProblem(
        res,
        409,
        'PAYMENT_NOT_REFUNDABLE',
        `/payments/${payment.id}/refunds`,
        'The payment is declined; only succeeded or partially refunded payments can be refunded.',
        { currentStatus: 'declined' },
      );
    }
    assert.deepEqual(await snapshot(payment.id), before);
    assert.deepEqual(before.refunds, []);
  });

  test('a refunded payment → 409 PAYMENT_NOT_REFUNDABLE, currentStatus refunded', async () => {
    const { payment, staff } = await paidPayment(500);
    await makeRefund(t, staff, payment.id, {});
    const before = await snapshot(payment.id);
    for (const body of [{}, { amount: 1 }]) {
      const res = await postRefund(t, staff, payment.id, body);
      expectProblem(
        res,
        409,
        'PAYMENT_NOT_REFUNDABLE',
        `/payments/${payment.id}/refunds`,
        'The payment is refunded; only succeeded or partially refunded payments can be refunded.',
        { currentStatus: 'refunded' },
      );
    }
    assert.deepEqual(await snapshot(payment.id), before);
  });

  test("a customer, even the payment's owner → 403 AUTH_FORBIDDEN", async () => {
    const { customer, payment } = await paidPayment(500);
    const other = await createCustomer(t);
    const before = await snapshot(payment.id);
    for (const token of [customer.token, other.token]) {
      expectProblem(
        await postRefund(t, token, payment.id, { amount: 100 }),
        403,
        'AUTH_FORBIDDEN',
        `/payments/${payment.id}/refunds`,
        'Refunds are made by staff or service clients.',
      );
    }
    assert.deepEqual(await snapshot(payment.id), before);
  });

  test('payments:refund alone refunds, and so does payments:write alone (as before payments:refund existed)', async () => {
    const { payment } = await paidPayment(500);
    for (const scopes of [['payments:refund'], ['payments:write']] as const) {
      const staff = await createStaffToken(t, [...scopes]);
      await expectRefund(await postRefund(t, staff, payment.id, { amount: 100 }), payment.id);
    }
    const service = await createServiceToken(t, ['payments:refund']);
    await expectRefund(await postRefund(t, service, payment.id, { amount: 100 }), payment.id);
    assert.equal((await readPaymentRow(t.db, payment.id)).amountRefunded, 300);
  });

  test('with neither payments:refund nor payments:write → 403 insufficient_scope naming payments:refund; without a token → 401', async () => {
    const { payment } = await paidPayment(500);
    const before = await snapshot(payment.id);
    const res = await postRefund(t, await createStaffToken(t, ['payments:read', 'orders:write']), payment.id, { amount: 100 });
    expectProblem(
      res,
      403,
      'AUTH_INSUFFICIENT_SCOPE',
      `/payments/${payment.id}/refunds`,
      'This operation requires the scope "payments:refund".',
    );
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="payments:refund"');
    expectProblem(
      await postRefund(t, undefined, payment.id, { amount: 100 }),
      401,
      'AUTH_TOKEN_MISSING',
      `/payments/${payment.id}/refunds`,
      'This endpoint requires an access token: Authorization: Bearer <token>.',
    );
    assert.deepEqual(await snapshot(payment.id), before);
  });

  test('an unknown payment → 404 PAYMENT_NOT_FOUND', async () => {
    const staff = await createStaffToken(t);
    expectProblem(
      await postRefund(t, staff, MISSING_ID, { amount: 100 }),
      404,
      'PAYMENT_NOT_FOUND',
      `/payments/${MISSING_ID}/refunds`,
      `Payment ${MISSING_ID} does not exist.`,
    );
    const { rows } = await t.db.query('SELECT id FROM refunds WHERE payment_id = $1', [MISSING_ID]);
    assert.deepEqual(rows, []);
  });

  const invalid = (pointer: string, message: string) => ({ pointer, detail: `${pointer} ${message}` });
  for (const [name, body, errors] of [
    ['amount 0', { amount: 0 }, [invalid('/amount', 'must be >= 1')]],
    ['amount -5', { amount: -5 }, [invalid('/amount', 'must be >= 1')]],
    ['amount 2.5', { amount: 2.5 }, [invalid('/amount', 'must be integer')]],
    ['amount "100"', { amount: '100' }, [invalid('/amount', 'must be integer')]],
    ['amount 100 000 000', { amount: 100_000_000 }, [invalid('/amount', 'must be <= 99999999')]],
    ['an unknown field', { amount: 100, reason: 'x' }, [invalid('/reason', 'is not a known field')]],
  ] as const) {
    test(`${name} → 400 REQUEST_BODY_INVALID`, async () => {
      const { payment, staff } = await paidPayment(500);
      const before = await snapshot(payment.id);
      const res = await postRefund(t, staff, payment.id, body);
      expectProblem(res, 400, 'REQUEST_BODY_INVALID', `/payments/${payment.id}/refunds`, errors.map((e) => e.detail).join('; '), {
        errors,
      });
      assert.deepEqual(await snapshot(payment.id), before);
    });
  }
});

describe('GET /payments/{id}/refunds and /refunds/{refundId}: not found', () => {
  test('a refund id of another payment → 404 PAYMENT_REFUND_NOT_FOUND', async () => {
    const a = await paidPayment(500);
    const b = await paidPayment(500);
    const refund = await makeRefund(t, a.staff, a.payment.id, { amount: 100 });
    for (const token of [a.staff, b.customer.token]) {
      expectProblem(
        await get(t, token, `/payments/${b.payment.id}/refunds/${refund.id}`),
        404,
        'PAYMENT_REFUND_NOT_FOUND',
        `/payments/${b.payment.id}/refunds/${refund.id}`,
        `Payment ${b.payment.id} has no refund ${refund.id}.`,
      );
    }
    expectProblem(
      await get(t, a.staff, `/payments/${a.payment.id}/refunds/${MISSING_ID}`),
      404,
      'PAYMENT_REFUND_NOT_FOUND',
      `/payments/${a.payment.id}/refunds/${MISSING_ID}`,
      `Payment ${a.payment.id} has no refund ${MISSING_ID}.`,
    );
  });

  test("another customer's payment: its refunds are 404 PAYMENT_NOT_FOUND, like a missing payment", async () => {
    const { payment, staff } = await paidPayment(500);
    const refund = await makeRefund(t, staff, payment.id, { amount: 100 });
    const other = await createCustomer(t);
    for (const id of [payment.id, MISSING_ID]) {
      expectProblem(
        await get(t, other.token, `/payments/${id}/refunds`),
        404,
        'PAYMENT_NOT_FOUND',
        `/payments/${id}/refunds`,
        `Payment ${id} does not exist.`,
      );
      expectProblem(
        await get(t, other.token, `/payments/${id}/refunds/${refund.id}`),
        404,
        'PAYMENT_NOT_FOUND',
        `/payments/${id}/refunds/${refund.id}`,
        `Payment ${id} does not exist.`,
      );
    }
  });

  test('a payment without refunds: an empty page', async () => {
    const { customer, payment } = await paidPayment(500);
    expectRefundPage(await get(t, customer.token, `/payments/${payment.id}/refunds`), [], {
      ...{ total: 0, page: 1, pageSize: 20, totalPages: 0 },
      ...{ nextCursor: null, prevCursor: null },
    });
  });
});

describe('POST /payments/{id}/refunds: concurrent refunds never exceed the payment', () => {
  test('20 concurrent refunds of 150 on a payment of 1000: 6 succeed, 14 → 422, the balance exact', async () => {
    const { customer, payment, staff } = await paidPayment(1000);
    const responses = await Promise.all(Array.from({ length: 20 }, () => postRefund(t, staff, payment.id, { amount: 150 })));

    const statuses = responses.map((r) => r.statusCode);
    assert.deepEqual(
      statuses.filter((s) => s >= 500),
      [],
      responses
        .filter((r) => r.statusCode >= 500)
        .map((r) => r.body)
        .join('\n'),
    );
    const succeeded = responses.filter((r) => r.statusCode === 201);
    const refused = responses.filter((r) => r.statusCode !== 201);
    assert.equal(succeeded.length, 6, statuses.join(','));
    assert.equal(refused.length, 14);
    for (const res of succeeded) await expectRefund(res, payment.id);
    // Every refusal came after the sixth refund, with 100 left.
    for (const res of refused) {
      expectProblem(
        res,
        422,
        'PAYMENT_REFUND_EXCEEDS_BALANCE',
        `/payments/${payment.id}/refunds`,
        "Only 100 of the payment's 1000 can still be refunded.",
        {
          refundableAmount: 100,
          errors: [{ pointer: '/amount', detail: 'must be at most 100' }],
        },
      );
    }

    const { rows } = await t.db.query<{ refunded: number; amount_refunded: number; amount: number; status: string; version: number }>(
      `SELECT (SELECT coalesce(sum(amount), 0)::bigint FROM refunds WHERE payment_id = p.id) AS refunded, amount_refunded, amount, status, version
         FROM payments p WHERE id = $1`,
      [payment.id],
    );
    assert.deepEqual(rows, [{ refunded: 900, amount_refunded: 900, amount: 1000, status: 'partially_refunded', version: 7 }]);
    assert.deepEqual(
      (await readStoredRefunds(t.db, payment.id)).map((r) => r.id).sort((a, b) => a - b),
      succeeded.map((r) => r.json().id as number).sort((a, b) => a - b),
    );
    const read = await expectPayment(t.db, await get(t, customer.token, `/payments/${payment.id}`), 200);
    assert.equal(read.amountRefunded, 900);
    assert.equal((await get(t, customer.token, `/payments/${payment.id}`)).headers.etag, paymentTag(payment.id, 7));
  });
});
