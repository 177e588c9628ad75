// PUT /orders/{orderId} {"status":"cancelled"} on a paid order: staff cancel it and its payment
// gives back whatever is left, in the same transaction; repeating the PUT refunds nothing more,
// and a caller who may not cancel it leaves the money where it is.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createCustomer, createServiceToken, createStaffToken, get } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { readStoredOrder } from '../orders/stored-orders.ts';
import {
  expectPayment,
  JSON_TYPE,
  makePayment,
  makeRefund,
  paymentTag,
  postRefund,
  readOrderRow,
  readPaymentRow,
  readStoredRefunds,
  refundRepresentation,
} from './payments.ts';

const t = setUpTestApp();

const postRefundOf = (token: string, paymentId: number, amount: number) => postRefund(t, token, paymentId, { amount });
const cancel = (token: string, orderId: number) =>
  t.request(token, { method: 'PUT', url: `/orders/${orderId}`, payload: { status: 'cancelled' } });

/** A customer's order of `total` EUR, paid through the API. */
async function paidOrder(total: number) {
  const customer = await createCustomer(t);
  const order = await createOrder(t.db, customer.user.id, { price: total, currency: 'EUR' });
  const payment = await makePayment(t, customer.token, { amount: total, currency: 'EUR', orderId: order.id });
  return { customer, order, payment, staff: await createStaffToken(t) };
}

/** 200 with the order as now stored (cancelled) and the tag of its stored version. */
async function expectCancelled(res: LightMyRequestResponse, orderId: number): Promise<void> {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], JSON_TYPE);
  assert.equal(res.headers['cache-control'], 'no-store');
  const row = await readOrderRow(t.db, orderId);
  assert.equal(row.status, 'cancelled');
  assert.equal(res.headers.etag, `"o${orderId}.${row.version}.v1"`);
  assert.deepEqual(res.json(), await readStoredOrder(t.db, orderId));
}

/** The payment row and its refunds, to compare before and after. */
const snapshot = async (paymentId: number) => ({
  payment: await readPaymentRow(t.db, paymentId),
  refunds: await readStoredRefunds(t.db, paymentId),
});

describe('PUT /orders/{orderId} cancelled, by staff: the payment is refunded', () => {
  test('a paid order: 200 cancelled, its whole payment refunded in one refund', async () => {
    const { customer, order, payment, staff } = await paidOrder(2599);
    await expectCancelled(await cancel(staff, order.id), order.id);
    assert.equal((await readOrderRow(t.db, order.id)).version, 3);

    const [refund, ...more] = await readStoredRefunds(t.db, payment.id);
    assert.deepEqual(more, []);
    assert.match(refund!.processorReference, /^sim_re_[A-Za-z0-9_-]{24}$/);
    assert.deepEqual(refundRepresentation(refund!), {
      id: refund!.id,
      paymentId: payment.id,
      amount: 2599,
      currency: 'EUR',
      createdAt: refund!.createdAt,
    });

    const read = await get(t, customer.token, `/payments/${payment.id}`);
    const after = await expectPayment(t.db, read, 200);
    assert.equal(read.headers.etag, paymentTag(payment.id, 2));
    assert.deepEqual(after, { ...payment, status: 'refunded', amountRefunded: 2599, updatedAt: after.updatedAt });
    const list = await get(t, customer.token, `/payments/${payment.id}/refunds`);
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json(), {
      data: [refundRepresentation(refund!)],
      meta: { total: 1, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    });
    assert.deepEqual((await get(t, customer.token, `/orders/${order.id}`)).json(), await readStoredOrder(t.db, order.id));
  });

  test('a paid order already partially refunded: only the rest is refunded', async () => {
    const { order, payment, staff } = await paidOrder(1000);
    const partial = await makeRefund(t, staff, payment.id, { amount: 300 });
    await expectCancelled(await cancel(staff, order.id), order.id);
    const refunds = await readStoredRefunds(t.db, payment.id);
    assert.deepEqual(
      refunds.map((r) => [r.id === partial.id, r.amount]),
      [
        [true, 300],
        [false, 700],
      ],
    );
    const row = await readPaymentRow(t.db, payment.id);
    assert.deepEqual([row.status, row.amountRefunded, row.version], ['refunded', 1000, 3]);
  });

  test('repeating the PUT: 200 with the same order and tag, no second refund', async () => {
    const { order, payment, staff } = await paidOrder(1500);
    const first = await cancel(staff, order.id);
    await expectCancelled(first, order.id);
    const before = { order: await readOrderRow(t.db, order.id), ...(await snapshot(payment.id)) };
    for (const token of [staff, await createStaffToken(t)]) {
      const again = await cancel(token, order.id);
      await expectCancelled(again, order.id);
      assert.equal(again.headers.etag, first.headers.etag);
      assert.deepEqual(again.json(), first.json());
    }
    assert.deepEqual({ order: await readOrderRow(t.db, order.id), ...(await snapshot(payment.id)) }, before);
    assert.deepEqual(
      before.refunds.map((r) => r.amount),
      [1500],
    );
  });

  test('a paid order whose payment was already refunded in full: cancelled, nothing more refunded', async () => {
    const { order, payment, staff } = await paidOrder(800);
    await makeRefund(t, staff, payment.id, {});
    const before = await snapshot(payment.id);
    await expectCancelled(await cancel(staff, order.id), order.id);
    assert.deepEqual(await snapshot(payment.id), before);
    assert.deepEqual(
      before.refunds.map((r) => r.amount),
      [800],
    );
  });

  test('a pending order with a declined payment: cancelled, the declined payment untouched', async () => {
    const customer = await createCustomer(t);
    const order = await createOrder(t.db, customer.user.id, { price: 40002 });
    const declined = await makePayment(t, customer.token, { amount: 40002, currency: 'EUR', orderId: order.id });
    const before = await snapshot(declined.id);
    await expectCancelled(await cancel(await createStaffToken(t), order.id), order.id);
    assert.deepEqual(await snapshot(declined.id), before);
    assert.deepEqual(before.refunds, []);
  });
});

describe('PUT /orders/{orderId} cancelled while refunds of its payment run', () => {
  test('a cancellation racing 5 refunds of 300: the payment ends refunded exactly once in full', async () => {
    const { order, payment, staff } = await paidOrder(1000);
    const [cancelled, ...refunds] = await Promise.all([
      cancel(staff, order.id),
      ...Array.from({ length: 5 }, () => postRefundOf(staff, payment.id, 300)),
    ]);
    await expectCancelled(cancelled!, order.id);
    // Whichever ran first, what came after found less (422) or nothing (409) left.
    for (const res of refunds) {
      assert.ok([201, 409, 422].includes(res.statusCode), `${res.statusCode} ${res.body}`);
      if (res.statusCode === 409) assert.deepEqual([res.json().code, res.json().currentStatus], ['PAYMENT_NOT_REFUNDABLE', 'refunded']);
      if (res.statusCode === 422) assert.equal(res.json().code, 'PAYMENT_REFUND_EXCEEDS_BALANCE');
    }
    const { payment: row, refunds: stored } = await snapshot(payment.id);
    assert.deepEqual([row.status, row.amountRefunded], ['refunded', 1000]);
    assert.equal(
      stored.reduce((sum, r) => sum + r.amount, 0),
      1000,
    );
    const byApi = refunds.filter((r) => r.statusCode === 201).map((r) => r.json().amount as number);
    assert.ok(byApi.length <= 3, `at most three refunds of 300 fit: ${byApi}`);
    // The refunds the API made, plus the one the cancellation made for the rest (if any was left).
    assert.equal(stored.length, byApi.length + (byApi.length * 300 < 1000 ? 1 : 0));
  });
});

describe('PUT /orders/{orderId} cancelled on a paid order, by someone who may not: nothing refunded', () => {
  test('the customer → 409 ORDER_TRANSITION_NOT_ALLOWED; order and payment unchanged', async () => {
    const { customer, order, payment } = await paidOrder(1200);
    const orderBefore = await readOrderRow(t.db, order.id);
    const before = await snapshot(payment.id);
    const res = await cancel(customer.token, order.id);
    expectProblem(
      res,
      409,
      'ORDER_TRANSITION_NOT_ALLOWED',
      `/orders/${order.id}`,
      'The order is paid; it cannot become cancelled (no change of status is allowed to you from here).',
      { currentStatus: 'paid', allowedStatuses: [] },
    );
    assert.deepEqual(await readOrderRow(t.db, order.id), orderBefore);
    assert.deepEqual(await snapshot(payment.id), before);
    assert.deepEqual(before.refunds, []);
    assert.equal(before.payment.status, 'succeeded');
  });

  test('a service client → 409 (it may only ship a paid order); nothing refunded', async () => {
    const { order, payment } = await paidOrder(1200);
    const before = await snapshot(payment.id);
    const res = await cancel(await createServiceToken(t, ['orders:write']), order.id);
    expectProblem(
      res,
      409,
      'ORDER_TRANSITION_NOT_ALLOWED',
      `/orders/${order.id}`,
      'The order is paid; it cannot become cancelled (allowed: shipped).',
      { currentStatus: 'paid', allowedStatuses: ['shipped'] },
    );
    assert.equal((await readOrderRow(t.db, order.id)).status, 'paid');
    assert.deepEqual(await snapshot(payment.id), before);
  });

  test('staff without the power to refund (orders:write alone) → 403 insufficient_scope naming payments:refund', async () => {
    const { order, payment } = await paidOrder(1200);
    const orderBefore = await readOrderRow(t.db, order.id);
    const before = await snapshot(payment.id);
    const res = await cancel(await createStaffToken(t, ['orders:read', 'orders:write', 'payments:read']), order.id);
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', `/orders/${order.id}`, 'This operation requires the scope "payments:refund".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="payments:refund"');
    assert.deepEqual(await readOrderRow(t.db, order.id), orderBefore);
    assert.deepEqual(await snapshot(payment.id), before);
  });
});

describe('PUT /orders/{orderId} cancelled on a paid order: the power to refund', () => {
  test('staff with orders:write and payments:refund (no payments:write) → 200 cancelled and refunded', async () => {
    const { order, payment } = await paidOrder(700);
    await expectCancelled(await cancel(await createStaffToken(t, ['orders:write', 'payments:refund']), order.id), order.id);
    assert.deepEqual(
      (await readStoredRefunds(t.db, payment.id)).map((r) => r.amount),
      [700],
    );
  });

  test('a pending order needs no power to refund: staff with orders:write alone cancel it', async () => {
    const customer = await createCustomer(t);
    const order = await createOrder(t.db, customer.user.id, { price: 700, currency: 'EUR' });
    await expectCancelled(await cancel(await createStaffToken(t, ['orders:write']), order.id), order.id);
  });
});
