// API v3 shows the payment lifecycle (docs/migrating-to-v3.md): 201 with the payment as it stands
// (processing when the processor did not answer, requires_action while the customer may act, then
// canceled when they do not), the lifecycle's events in v3 only, the needsAttention filter in every
// version, and webhook endpoints pinned to v3 out of sight of earlier versions.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ChargeState, PaymentProcessor } from '../../../src/payments/processor.ts';
import { createSimulatedProcessor } from '../../../src/payments/simulator.ts';
import { eventTypesAt } from '../../../src/events/events.rules.ts';
import { createCustomer, createStaffToken, get } from '../../helpers/actors.ts';
import { paymentsConfig, startTestApp, type TestApp } from '../../helpers/app.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { send, webhookTestConfig } from '../webhooks/webhooks.ts';
import { postPayment, readOrderRow } from './payments.ts';
import { eventually } from '../../helpers/webhooks.ts';

/** An amount for which the processor asks the customer to authenticate (3-D Secure), and never hears back. */
const ACTION_AMOUNT = 3333;
const ACTION: ChargeState = { status: 'requires_action', nextAction: { type: 'redirect_to_url', url: 'https://acs.example/challenge' } };

/** The simulator, with 3-D Secure for one amount: the customer never acts, so cancelling it cancels it. */
function processorWithAction(): PaymentProcessor {
  const simulator = createSimulatedProcessor();
  const decide = (amount: number, otherwise: () => Promise<ChargeState>) =>
    amount === ACTION_AMOUNT ? Promise.resolve(ACTION) : otherwise();
  return {
    ...simulator,
    confirmCharge: (charge) => decide(charge.amount, () => simulator.confirmCharge(charge)),
    retrieveCharge: (charge) => decide(charge.amount, () => simulator.retrieveCharge(charge)),
    cancelCharge: async (charge) => (charge.amount === ACTION_AMOUNT ? { status: 'canceled' } : simulator.cancelCharge(charge)),
  };
}

let t: TestApp;
before(async () => {
  t = await startTestApp(
    { payments: paymentsConfig({ actionExpirySeconds: 1, retryScheduleSeconds: [3600] }), ...webhookTestConfig() },
    undefined,
    { paymentProcessor: processorWithAction() },
  );
});
after(() => t.close());

const money = (value: number) => ({ value, currency: 'EUR' });

async function orderOf(amount: number) {
  const { user, token } = await createCustomer(t);
  const order = await createOrder(t.db, user.id, { price: amount, currency: 'EUR' });
  return { order, token };
}

/** The types of the events about a payment, as a version's GET /events lists them. */
async function listedTypes(token: string, version: number, paymentId: number): Promise<string[]> {
  const res = await get(t, token, `/v${version}/events?pageSize=100`);
  assert.equal(res.statusCode, 200, res.body);
  const events = res.json().data as { type: string; data: { object: { id: number } } }[];
  return events
    .filter((e) => e.type.startsWith('payment.') && e.data.object.id === paymentId)
    .map((e) => e.type)
    .reverse();
}

describe('v3: a payment as it stands', () => {
  test('the processor does not answer: v3 → 201 processing (kept in progress, the key answered); v2 → 503 PAYMENT_PROCESSOR_UNAVAILABLE', async () => {
    const { order, token } = await orderOf(40091);
    const res = await postPayment(t, token, { amount: money(40091), orderId: order.id }, { url: '/v3/payments' });
    assert.equal(res.statusCode, 201, res.body);
    const payment = res.json();
    assert.deepEqual([payment.status, payment.livemode, payment.needsAttention, payment.nextAction], ['processing', false, null, null]);
    assert.equal((await get(t, token, `/v2/payments/${payment.id}`)).statusCode, 404);

    const other = await orderOf(40091);
    const v2 = await postPayment(t, other.token, { amount: money(40091), orderId: other.order.id }, { url: '/v2/payments' });
    assert.equal(v2.statusCode, 503, v2.body);
    assert.equal(v2.json().code, 'PAYMENT_PROCESSOR_UNAVAILABLE');
  });

  test('3-D Secure never completed: 201 requires_action with nextAction until actionExpiresAt; then canceled (action_expired), the order free; events in v3 only', async () => {
    const { order, token } = await orderOf(ACTION_AMOUNT);
    const res = await postPayment(t, token, { amount: money(ACTION_AMOUNT), orderId: order.id }, { url: '/v3/payments' });
    assert.equal(res.statusCode, 201, res.body);
    const payment = res.json();
    assert.equal(payment.status, 'requires_action');
    assert.deepEqual(payment.nextAction, ACTION.status === 'requires_action' && ACTION.nextAction);
    assert.ok(Date.parse(payment.actionExpiresAt) > Date.parse(payment.createdAt));
    // Another payment of the order waits for this one.
    const second = await postPayment(t, token, { amount: money(ACTION_AMOUNT), orderId: order.id }, { url: '/v3/payments' });
    assert.equal(second.json().code, 'PAYMENT_ORDER_PAYMENT_IN_PROGRESS');

    // The completer cancels it once the customer's time is up.
    await eventually(
      async () => (await get(t, token, `/v3/payments/${payment.id}`)).json().status === 'canceled',
      'the completer to cancel the payment',
      20_000,
    );
    const canceled = (await get(t, token, `/v3/payments/${payment.id}`)).json();
    assert.deepEqual([canceled.cancellationReason, canceled.nextAction, canceled.actionExpiresAt], ['action_expired', null, null]);
    // v2 shows it as declined.
    const inV2 = (await get(t, token, `/v2/payments/${payment.id}`)).json();
    assert.deepEqual([inV2.status, inV2.declineCode], ['declined', 'card_declined']);
    assert.equal((await readOrderRow(t.db, order.id)).status, 'pending');

    const staff = await createStaffToken(t, ['events:read']);
    assert.deepEqual(await listedTypes(staff, 3, payment.id), ['payment.requires_action', 'payment.canceled']);
    assert.deepEqual(await listedTypes(staff, 2, payment.id), []);
    // v2 knows only its own types: the list it names has none of v3's.
    const unknown = `"payment.canceled" is not an event type; use ${eventTypesAt(2).join(', ')}`;
    assert.ok(!eventTypesAt(2).includes('payment.canceled'));
    expectProblem(await get(t, staff, '/v2/events?type=payment.canceled'), 400, 'REQUEST_PARAMETER_INVALID', '/v2/events', unknown, {
      errors: [{ parameter: 'type', detail: unknown }],
    });
    assert.equal((await get(t, staff, '/v3/events?type=payment.canceled')).statusCode, 200);
  });

  test('GET /payments?needsAttention=true|false, in every version: the payments a person must look at, or the others', async () => {
    const { order, token } = await orderOf(1200);
    const flagged = (await postPayment(t, token, { amount: money(1200), orderId: order.id }, { url: '/v3/payments' })).json();
    const other = await orderOf(1300);
    const plain = (await postPayment(t, other.token, { amount: money(1300), orderId: other.order.id }, { url: '/v3/payments' })).json();
    // As the completer flags a payment the processor never answered about (src/payments/in-progress.store.ts).
    await t.db.query("UPDATE payments SET needs_attention_since = now(), attention_reason = 'the processor never answered' WHERE id = $1", [
      flagged.id,
    ]);
    const staff = await createStaffToken(t, ['payments:read']);
    for (const prefix of ['/v1', '/v2', '/v3']) {
      const ids = async (query: string) =>
        ((await get(t, staff, `${prefix}/payments?${query}&pageSize=100`)).json().data as { id: number }[]).map((p) => p.id);
      assert.ok((await ids('needsAttention=true')).includes(flagged.id), prefix);
      assert.ok(!(await ids('needsAttention=true')).includes(plain.id), prefix);
      assert.ok((await ids('needsAttention=false')).includes(plain.id), prefix);
      assert.ok(!(await ids('needsAttention=false')).includes(flagged.id), prefix);
    }
    const shown = (await get(t, staff, `/v3/payments/${flagged.id}`)).json();
    assert.equal(shown.needsAttention.reason, 'the processor never answered');
    expectProblem(
      await get(t, staff, '/v3/payments?needsAttention=maybe'),
      400,
      'REQUEST_PARAMETER_INVALID',
      '/v3/payments',
      'query parameter "needsAttention" must be boolean',
      { errors: [{ parameter: 'needsAttention', detail: 'query parameter "needsAttention" must be boolean' }] },
    );
  });
});

describe('v3: webhook endpoints and their versions', () => {
  test('an endpoint pinned to v3 is not there for v1 or v2 (404, not listed); created with v2 an endpoint is pinned to v2, and v2 cannot pin one to v3', async () => {
    const staff = await createStaffToken(t, ['webhooks:read', 'webhooks:write']);
    const endpoint = { url: 'https://93.184.215.14/hooks', enabledEvents: ['payment.canceled', 'order.paid'] };
    const v3 = await send(t, 'POST', staff, '/v3/webhook-endpoints', endpoint);
    assert.equal(v3.statusCode, 201, v3.body);
    assert.equal(v3.json().apiVersion, 3);
    const id = v3.json().id;
    for (const prefix of ['/v1', '/v2']) {
      expectProblem(
        await get(t, staff, `${prefix}/webhook-endpoints/${id}`),
        404,
        'WEBHOOK_ENDPOINT_NOT_FOUND',
        `${prefix}/webhook-endpoints/${id}`,
        `Webhook endpoint ${id} does not exist.`,
      );
      const listed = (await get(t, staff, `${prefix}/webhook-endpoints?pageSize=100`)).json().data as { id: number }[];
      assert.ok(!listed.some((e) => e.id === id), prefix);
    }
    assert.ok(((await get(t, staff, '/v3/webhook-endpoints?pageSize=100')).json().data as { id: number }[]).some((e) => e.id === id));

    // A v2 request cannot subscribe to a v3 type, nor pin an endpoint to v3.
    const inV2 = await send(t, 'POST', staff, '/v2/webhook-endpoints', { url: endpoint.url, enabledEvents: ['order.paid'] });
    assert.equal(inV2.json().apiVersion, 2);
    const v3Type = await send(t, 'POST', staff, '/v2/webhook-endpoints', endpoint);
    expectProblem(v3Type, 400, 'REQUEST_BODY_INVALID', '/v2/webhook-endpoints', v3Type.json().detail, {
      errors: [{ pointer: '/enabledEvents/0', detail: '"payment.canceled" is an event of API v3; the endpoint\'s apiVersion is 2' }],
    });
    const pinned = await send(t, 'POST', staff, '/v2/webhook-endpoints', { ...endpoint, apiVersion: 3 });
    expectProblem(pinned, 400, 'REQUEST_BODY_INVALID', '/v2/webhook-endpoints', '/apiVersion must be <= 2', {
      errors: [{ pointer: '/apiVersion', detail: '/apiVersion must be <= 2' }],
    });
  });
});
