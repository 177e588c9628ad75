// orderpay configured with ORDERPAY_PAYMENT_PROCESSOR=stripe, through the official SDK against a
// local server that speaks Stripe's API (test/helpers/stripe-stand-in.ts): 3-D Secure decided by
// Stripe's signed event at POST /processors/stripe/events (applied once, however often it comes;
// refused unsigned), a payment method the customer gives in the browser, v1/v2 refused without one,
// and Stripe taking a charge without answering.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { paymentsConfig, startTestApp, type TestApp } from '../../helpers/app.ts';
import { createCustomer, get } from '../../helpers/actors.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { type StripeStandIn, startStripeStandIn } from '../../helpers/stripe-stand-in.ts';
import { eventsAbout, paymentsOfOrder, postPayment, readOrderRow } from './payments.ts';
import { eventually } from '../../helpers/webhooks.ts';

const WEBHOOK_SECRET = `whsec_${randomUUID().replaceAll('-', '')}`;
const RETURN_URL = 'https://shop.example/checkout/done';

let standIn: StripeStandIn;
let t: TestApp;

before(async () => {
  standIn = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  t = await startTestApp(
    {
      payments: paymentsConfig({
        processor: 'stripe',
        stripe: { secretKey: 'sk_test_orderpay', webhookSecret: WEBHOOK_SECRET, apiBase: standIn.url },
      }),
    },
    undefined,
    // A charge Stripe takes without answering is given up on quickly here.
    { processorTimeoutMs: 1000 },
  );
});

after(async () => {
  await t.close();
  await standIn.close();
});

/** The PaymentIntent behind a payment, as Stripe (the stand-in) holds it. */
async function intentOf(paymentId: number) {
  const { rows } = await t.db.query<{ ref: string }>('SELECT processor_reference AS ref FROM payments WHERE id = $1', [paymentId]);
  const intent = standIn.intents().find((i) => i.id === rows[0]!.ref);
  assert.ok(intent, `payment ${paymentId} has a PaymentIntent`);
  return intent;
}

/** Stripe delivering an event to orderpay, signed as its dashboard's endpoint signs it unless told otherwise. */
function deliver(payload: string, headers: Record<string, string>) {
  return t.app.inject({
    method: 'POST',
    url: '/processors/stripe/events',
    payload,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

async function payInV3(body: Record<string, unknown>) {
  const { user, token } = await createCustomer(t);
  const order = await createOrder(t.db, user.id, { price: 2500, currency: 'EUR' });
  const res = await postPayment(
    t,
    token,
    { amount: { value: 2500, currency: 'EUR' }, orderId: order.id, ...body },
    { url: '/v3/payments' },
  );
  return { res, order, token };
}

describe('ORDERPAY_PAYMENT_PROCESSOR=stripe', () => {
  test('3-D Secure: 201 requires_action with the redirect; Stripe’s signed payment_intent.succeeded pays the order, once, however often it comes', async () => {
    const { res, order, token } = await payInV3({ paymentMethod: 'pm_card_threeDSecure2Required', returnUrl: RETURN_URL });
    assert.equal(res.statusCode, 201, res.body);
    const payment = res.json();
    assert.equal(payment.status, 'requires_action');
    assert.equal(payment.nextAction.type, 'redirect_to_url');
    assert.match(payment.nextAction.url, /^http:\/\/127\.0\.0\.1:\d+\/3ds\/pi_/);
    assert.equal(payment.livemode, false);
    assert.equal(payment.paymentMethod, 'pm_card_threeDSecure2Required');
    // v2 shows decisions only.
    assert.equal((await get(t, token, `/v2/payments/${payment.id}`)).statusCode, 404);
    assert.equal((await readOrderRow(t.db, order.id)).status, 'pending');

    const intent = await intentOf(payment.id);
    standIn.completeAction(intent.id, 'succeeded');
    const event = standIn.signedEvent('payment_intent.succeeded', (await intentOf(payment.id)) as object);
    // Applied once under the event's id; sent again (Stripe sends at least once), the same answer.
    for (let delivery = 0; delivery < 2; delivery++) {
      const answer = await deliver(event.payload, event.headers);
      assert.equal(answer.statusCode, 200, answer.body);
      assert.deepEqual(answer.json(), { received: true });
      assert.equal(answer.headers['cache-control'], 'no-store');
    }
    const { rows: keys } = await t.db.query<{ state: string }>(
      "SELECT state FROM idempotency_keys WHERE client_id = 'processor:stripe' AND key = $1",
      [JSON.parse(event.payload).id],
    );
    assert.deepEqual(keys, [{ state: 'completed' }]);
    const read = (await get(t, token, `/v3/payments/${payment.id}`)).json();
    assert.equal(read.status, 'succeeded');
    assert.equal(read.nextAction, null);
    assert.equal((await readOrderRow(t.db, order.id)).status, 'paid');
    assert.deepEqual(await eventsAbout(t, payment), ['payment.requires_action', 'payment.succeeded', 'order.paid']);
    assert.equal(standIn.intentsByReference(intent.metadata.orderpay_reference!), 1);
  });

  test('an event not signed with the shared secret (none, another secret, an altered body) → 400 PAYMENT_PROCESSOR_EVENT_INVALID; nothing changes', async () => {
    const { res } = await payInV3({ paymentMethod: 'pm_card_threeDSecure2Required', returnUrl: RETURN_URL });
    const payment = res.json();
    const intent = await intentOf(payment.id);
    standIn.completeAction(intent.id, 'succeeded');
    const signed = standIn.signedEvent('payment_intent.succeeded', (await intentOf(payment.id)) as object);
    const forged = standIn.signedEvent('payment_intent.succeeded', (await intentOf(payment.id)) as object, { secret: 'whsec_notours' });
    for (const [payload, headers] of [
      [signed.payload, {}],
      [forged.payload, forged.headers],
      [signed.payload.replace('"succeeded"', '"succeeded" '), signed.headers],
    ] as const) {
      const answer = await deliver(payload, headers);
      expectProblem(answer, 400, 'PAYMENT_PROCESSOR_EVENT_INVALID', '/processors/stripe/events', answer.json().detail);
    }
    assert.deepEqual(await eventsAbout(t, payment), ['payment.requires_action']);
    assert.equal((await readOrderRow(t.db, payment.orderId)).status, 'pending');
  });

  test('no payment method: v3 waits for the customer to give it in the browser (use_processor_sdk); v1 and v2 → 422 PAYMENT_METHOD_REQUIRED, nothing recorded', async () => {
    const { res } = await payInV3({});
    assert.equal(res.statusCode, 201, res.body);
    const payment = res.json();
    assert.equal(payment.status, 'requires_action');
    assert.deepEqual(payment.nextAction, {
      type: 'use_processor_sdk',
      processor: 'stripe',
      clientSecret: (await intentOf(payment.id)).client_secret,
    });

    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 2500, currency: 'EUR' });
    for (const [url, body] of [
      ['/v2/payments', { amount: { value: 2500, currency: 'EUR' }, orderId: order.id }],
      ['/v1/payments', { amount: 2500, currency: 'EUR', orderId: order.id }],
    ] as const) {
      expectProblem(
        await postPayment(t, token, body, { url }),
        422,
        'PAYMENT_METHOD_REQUIRED',
        url,
        'The payment processor (stripe) charges a payment method: name one in paymentMethod, with API version 3 or later.',
        { errors: [{ pointer: '/paymentMethod', detail: 'required by the payment processor' }] },
      );
    }
    assert.deepEqual(await paymentsOfOrder(t.db, order.id), []);
  });

  test('a card that succeeds at once → 201 succeeded; a declined one → 201 declined with Stripe’s own code (v3), card_declined in v2', async () => {
    const paid = await payInV3({ paymentMethod: 'pm_card_visa' });
    assert.equal(paid.res.json().status, 'succeeded');
    assert.equal((await readOrderRow(t.db, paid.order.id)).status, 'paid');
    const declined = await payInV3({ paymentMethod: 'pm_card_chargeDeclined' });
    const payment = declined.res.json();
    assert.deepEqual([payment.status, payment.declineCode], ['declined', 'generic_decline']);
    const inV2 = (await get(t, declined.token, `/v2/payments/${payment.id}`)).json();
    assert.deepEqual([inV2.status, inV2.declineCode], ['declined', 'card_declined']);
  });

  test('Stripe takes the charge and never answers: 201 processing, the same again for the key; the completer asks Stripe what became of it → succeeded, one PaymentIntent', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 2500, currency: 'EUR' });
    const key = randomUUID();
    const body = { amount: { value: 2500, currency: 'EUR' }, orderId: order.id, paymentMethod: 'pm_card_visa' };
    // Stripe creates the PaymentIntent and never answers: the request gives up after its timeout.
    standIn.failNext(1, 'take-then-hang');
    const first = await postPayment(t, token, body, { url: '/v3/payments', key });
    assert.equal(first.statusCode, 201, first.body);
    const payment = first.json();
    assert.equal(payment.status, 'processing');
    // v3's answer for the key is the payment as it stood: replayed as it was.
    const retry = await postPayment(t, token, body, { url: '/v3/payments', key });
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(retry.json().status, 'processing');
    // The completer asks again on the retry schedule (first step: 1 s).
    await eventually(async () => (await readOrderRow(t.db, order.id)).status === 'paid', 'the completer to pay the order', 20_000);
    const settled = (await get(t, token, `/v3/payments/${payment.id}`)).json();
    assert.equal(settled.status, 'succeeded');
    const { rows } = await t.db.query<{ reference: string }>('SELECT reference FROM payments WHERE id = $1', [payment.id]);
    assert.equal(standIn.intentsByReference(rows[0]!.reference), 1);
    assert.equal((await paymentsOfOrder(t.db, order.id)).length, 1);
  });

  test('two keys pay one order at once (a double click): one payment, the other key 409 while it is in progress; Stripe asked for one PaymentIntent', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 2500, currency: 'EUR' });
    const body = { amount: { value: 2500, currency: 'EUR' }, orderId: order.id, paymentMethod: 'pm_card_visa' };
    const before = standIn.intents().length;
    // Stripe answers slowly: the second key arrives while the first payment is at Stripe.
    standIn.slowNext(2, 300);
    const answers = await Promise.all([1, 2].map(() => postPayment(t, token, body, { url: '/v3/payments' })));
    const statuses = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(statuses, [201, 409], answers.map((a) => a.body).join('\n'));
    const refused = answers.find((a) => a.statusCode === 409)!;
    assert.ok(['PAYMENT_ORDER_PAYMENT_IN_PROGRESS', 'PAYMENT_ORDER_NOT_PAYABLE'].includes(refused.json().code), refused.body);
    assert.equal(standIn.intents().length - before, 1);
    assert.deepEqual(
      (await paymentsOfOrder(t.db, order.id)).map((p) => p.status),
      ['succeeded'],
    );
  });

  test('another processor’s path → 404', async () => {
    const answer = await t.app.inject({
      method: 'POST',
      url: '/processors/simulator/events',
      payload: '{}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(answer.statusCode, 404);
  });
});
