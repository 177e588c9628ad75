// Payments in atomic phases (docs/payments.md, "How a payment is made"): recorded as processing
// before the processor is asked, reserving the order while in progress; decided by whichever driver
// learns the outcome first (the request, another request with its key, the completer); shown in v1
// and v2 only once decided, a request there waiting a bounded time for it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { advancePayment } from '../../../src/flows/settle-payment.ts';
import type { ChargeState, PaymentProcessor } from '../../../src/payments/processor.ts';
import { createSimulatedProcessor } from '../../../src/payments/simulator.ts';
import { createCustomer, get } from '../../helpers/actors.ts';
import { paymentsConfig, startTestApp, type TestApp } from '../../helpers/app.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { createFailpoints, createHoldableProcessor } from '../idempotency/gates.ts';
import { eventsAbout, keyRows, paymentsOfOrder, postPayment, readOrderRow } from './payments.ts';
import { eventually } from '../../helpers/webhooks.ts';

const IN_PROGRESS_DETAIL = (orderId: number) =>
  `A payment of order ${orderId} is in progress; only if it does not succeed can the order be paid again.`;

describe('a payment in progress reserves its order', () => {
  let t: TestApp;
  const holdable = createHoldableProcessor();
  before(async () => {
    t = await startTestApp({}, undefined, { paymentProcessor: holdable.processor });
  });
  after(() => t.close());

  test('while the processor confirms: another key → 409 PAYMENT_ORDER_PAYMENT_IN_PROGRESS (not kept), cancel and delete → 409 ORDER_PAYMENT_IN_PROGRESS, reads show the order pending and no payment; then 201, paid once', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 2700, currency: 'EUR' });
    const body = { amount: 2700, currency: 'EUR', orderId: order.id };
    const held = holdable.holdNextCharge();
    const paying = postPayment(t, token, body);
    await held.reached;

    const otherKey = randomUUID();
    expectProblem(
      await postPayment(t, token, body, { key: otherKey }),
      409,
      'PAYMENT_ORDER_PAYMENT_IN_PROGRESS',
      '/payments',
      IN_PROGRESS_DETAIL(order.id),
      {
        paymentStatus: 'processing',
      },
    );
    assert.deepEqual(await keyRows(t.db, otherKey), [{ method: 'POST', path: '/payments', state: 'in_flight', responseStatus: null }]);
    const inProgress = (change: string) =>
      `A payment of order ${order.id} is in progress; the order cannot be ${change} until its outcome is known. Retry shortly.`;
    const cancel = await t.request(token, { method: 'PUT', url: `/orders/${order.id}`, payload: { status: 'cancelled' } });
    expectProblem(cancel, 409, 'ORDER_PAYMENT_IN_PROGRESS', `/orders/${order.id}`, inProgress('cancelled'), {
      paymentStatus: 'processing',
    });
    const remove = await t.request(token, { method: 'DELETE', url: `/orders/${order.id}` });
    expectProblem(remove, 409, 'ORDER_PAYMENT_IN_PROGRESS', `/orders/${order.id}`, inProgress('deleted'), { paymentStatus: 'processing' });
    assert.equal((await get(t, token, `/orders/${order.id}`)).json().status, 'pending');
    assert.equal((await get(t, token, `/payments?orderId=${order.id}`)).json().meta.total, 0);

    held.release();
    const paid = await paying;
    assert.equal(paid.statusCode, 201, paid.body);
    assert.equal(paid.json().status, 'succeeded');
    assert.deepEqual(await readOrderRow(t.db, order.id).then((o) => [o.status, o.version]), ['paid', 2]);
    // The other key's 409 was not its result: its retry finds the order paid now.
    const retried = await postPayment(t, token, body, { key: otherKey });
    expectProblem(retried, 409, 'PAYMENT_ORDER_NOT_PAYABLE', '/payments', 'The order is paid; only a pending order can be paid.', {
      currentStatus: 'paid',
    });
    assert.deepEqual(
      (await paymentsOfOrder(t.db, order.id)).map((p) => p.status),
      ['succeeded'],
    );
    assert.deepEqual(await eventsAbout(t, { id: paid.json().id, orderId: order.id }), ['payment.succeeded', 'order.paid']);
  });

  test('10 keys paying one order at once: one payment succeeds, every other answer a 409; the order paid once, charged once', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 3300, currency: 'EUR' });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => postPayment(t, token, { amount: 3300, currency: 'EUR', orderId: order.id })),
    );
    const created = answers.filter((a) => a.statusCode === 201);
    assert.equal(created.length, 1, answers.map((a) => a.body).join('\n'));
    for (const answer of answers.filter((a) => a.statusCode !== 201)) {
      assert.equal(answer.statusCode, 409, answer.body);
      assert.ok(['PAYMENT_ORDER_PAYMENT_IN_PROGRESS', 'PAYMENT_ORDER_NOT_PAYABLE'].includes(answer.json().code), answer.body);
    }
    const payments = await paymentsOfOrder(t.db, order.id);
    assert.deepEqual(
      payments.map((p) => [p.id, p.status]),
      [[created[0]!.json().id, 'succeeded']],
    );
    assert.equal((await readOrderRow(t.db, order.id)).status, 'paid');
  });
});

describe('the completer finishes what no request did', () => {
  let t: TestApp;
  const failpoints = createFailpoints();
  before(async () => {
    // A request's claim (and its lease on the payment) lasts a second: then the completer may take over.
    t = await startTestApp({ idempotency: { lockSeconds: 1, retentionSeconds: 86_400 } }, undefined, { failpoint: failpoints.failpoint });
  });
  after(() => t.close());

  for (const point of ['idempotency.after-recovery-point', 'payments.before-outcome'] as const) {
    test(`a request that failed at ${point} and was never retried: the completer pays the order, once; the retry then answers 201 with that payment`, async () => {
      const { user, token } = await createCustomer(t);
      const order = await createOrder(t.db, user.id, { price: 2900, currency: 'EUR' });
      const body = { amount: 2900, currency: 'EUR', orderId: order.id };
      const key = randomUUID();
      failpoints.throwOnceAt(point);
      assert.equal((await postPayment(t, token, body, { key })).statusCode, 500);
      const [payment] = await paymentsOfOrder(t.db, order.id);
      assert.equal(payment?.status, 'processing');

      // The completer runs every second in every process: wait for what it commits.
      await eventually(async () => (await readOrderRow(t.db, order.id)).status === 'paid', 'the completer to pay the order', 20_000);
      assert.deepEqual(
        (await paymentsOfOrder(t.db, order.id)).map((p) => [p.id, p.status, p.version]),
        [[payment!.id, 'succeeded', 1]],
      );
      assert.deepEqual(await eventsAbout(t, { id: payment!.id, orderId: order.id }), ['payment.succeeded', 'order.paid']);

      const retry = await postPayment(t, token, body, { key });
      assert.equal(retry.statusCode, 201, retry.body);
      assert.equal(retry.headers['idempotent-replayed'], undefined);
      assert.deepEqual([retry.json().id, retry.json().status], [payment!.id, 'succeeded']);
      const replay = await postPayment(t, token, body, { key });
      assert.deepEqual([replay.statusCode, replay.body, replay.headers['idempotent-replayed']], [201, retry.body, 'true']);
    });
  }
});

describe('v1 and v2 wait for an outcome that comes later', () => {
  let t: TestApp;
  const simulator = createSimulatedProcessor();
  // Confirmed, the charge is processing; asked again, it says what `later` says.
  let later: ChargeState = { status: 'processing' };
  const asynchronous: PaymentProcessor = {
    ...simulator,
    confirmCharge: async () => ({ status: 'processing' }),
    retrieveCharge: async () => later,
  };
  before(async () => {
    t = await startTestApp({ payments: paymentsConfig({ retryScheduleSeconds: [1], waitMs: 2000 }) }, undefined, {
      paymentProcessor: asynchronous,
    });
  });
  after(() => t.close());

  test('no outcome within ORDERPAY_PAYMENTS_WAIT_MS → 503 PAYMENT_IN_PROGRESS with Retry-After, the key kept; decided meanwhile by another driver, the retry answers 201', async () => {
    later = { status: 'processing' };
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 3400, currency: 'EUR' });
    const body = { amount: 3400, currency: 'EUR', orderId: order.id };
    const key = randomUUID();
    const waited = await postPayment(t, token, body, { key, url: '/v1/payments' });
    expectProblem(
      waited,
      503,
      'PAYMENT_IN_PROGRESS',
      '/v1/payments',
      'The payment processor has not decided yet. Retry the request with the same Idempotency-Key to receive the outcome.',
    );
    assert.equal(waited.headers['retry-after'], '1');
    assert.deepEqual(await keyRows(t.db, key), [{ method: 'POST', path: '/v1/payments', state: 'in_flight', responseStatus: null }]);
    const [payment] = await paymentsOfOrder(t.db, order.id);
    assert.equal(payment?.status, 'processing');

    // The processor decides; whoever asks first (here: this test, as the completer would) commits it.
    later = { status: 'succeeded' };
    const decided = await advancePayment(t.app.paymentDriver, payment!.id);
    assert.equal(decided.status, 'succeeded');
    const retry = await postPayment(t, token, body, { key, url: '/v1/payments' });
    assert.equal(retry.statusCode, 201, retry.body);
    assert.deepEqual([retry.json().id, retry.json().status], [payment!.id, 'succeeded']);
    assert.equal((await readOrderRow(t.db, order.id)).status, 'paid');
  });

  test('decided by another driver while the request waits → 201 within the wait', async () => {
    later = { status: 'processing' };
    const { user, token } = await createCustomer(t);
    const key = randomUUID();
    const waiting = postPayment(t, token, { amount: { value: 3500, currency: 'EUR' } }, { key, url: '/v2/payments' });
    // Once the processor has named the charge, asking about it goes to the processor, which has decided.
    let payment: { id: number } | undefined;
    for (let read = 0; !payment; read++) {
      assert.ok(read < 10_000, 'the payment was never named by the processor');
      await new Promise((resolve) => setImmediate(resolve));
      const { rows } = await t.db.query<{ id: number }>(
        'SELECT id FROM payments WHERE customer_id = $1 AND processor_reference IS NOT NULL',
        [user.id],
      );
      payment = rows[0];
    }
    later = { status: 'declined', declineCode: 'do_not_honor' };
    await advancePayment(t.app.paymentDriver, payment.id);
    const answer = await waiting;
    assert.equal(answer.statusCode, 201, answer.body);
    // v2 knows three decline codes; the processor's own is shown as card_declined.
    assert.deepEqual([answer.json().id, answer.json().status, answer.json().declineCode], [payment.id, 'declined', 'card_declined']);
    assert.deepEqual(answer.json().amount, { value: 3500, currency: 'EUR' });
  });
});
