// The Stripe processor (src/payments/stripe.ts) through the official SDK, against a stand-in that
// speaks Stripe's wire format (test/helpers/stripe-stand-in.ts): creation idempotent by reference,
// confirmation and its outcomes (a decline, 3-D Secure, a payment method the customer gives), Stripe
// failing or not answering, cancellation, refunds, and webhook events whose signature is verified.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import {
  type ChargeRequest,
  type KnownCharge,
  type PaymentProcessor,
  ProcessorEventRejectedError,
  ProcessorUnavailableError,
} from '../../src/payments/processor.ts';
import { chargeStateOf, createStripeProcessor, type PaymentIntentState, refundStateOf } from '../../src/payments/stripe.ts';
import { type StandInPaymentIntent, type StripeStandIn, startStripeStandIn } from '../helpers/stripe-stand-in.ts';

const SECRET_KEY = 'sk_test_orderpay';
const WEBHOOK_SECRET = `whsec_${randomUUID().replaceAll('-', '')}`;
const RETURN_URL = 'https://shop.example/orders/7/paid';

let standIn: StripeStandIn;
/** Waits as long as orderpay would. */
let stripe: PaymentProcessor;
/** Gives up on a request after 300 ms: a hang is over quickly. */
let impatient: PaymentProcessor;

before(async () => {
  standIn = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  stripe = createStripeProcessor({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, apiBase: standIn.url });
  impatient = createStripeProcessor({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, apiBase: standIn.url, timeoutMs: 300 });
});

after(() => standIn.close());

function chargeRequest(fields: Partial<ChargeRequest> = {}): ChargeRequest {
  return { reference: `op_${randomUUID()}`, amount: 2500, currency: 'EUR', paymentMethod: 'pm_card_visa', returnUrl: null, ...fields };
}

async function createdCharge(fields: Partial<ChargeRequest> = {}): Promise<KnownCharge> {
  const request = chargeRequest(fields);
  const { processorReference } = await stripe.createCharge(request);
  return { ...request, processorReference, attempt: 0 };
}

function intentOf(id: string): StandInPaymentIntent {
  const intent = standIn.intents().find((i) => i.id === id);
  assert.ok(intent, `the stand-in has no ${id}`);
  return intent;
}

/** The idempotency keys of the requests to one path, in order. */
const keysSentTo = (path: string) => standIn.requests.filter((r) => r.path === path).map((r) => r.idempotencyKey);

async function rejectsAsUnavailable(call: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof ProcessorUnavailableError, String(error));
    assert.match(error.message, message);
    return true;
  });
}

describe('what it says of itself', () => {
  test('livemode from the key: live secret and restricted keys move real money, test keys do not', () => {
    const livemodeOf = (secretKey: string) => createStripeProcessor({ secretKey, webhookSecret: undefined }).livemode;
    assert.equal(livemodeOf('sk_live_abc'), true);
    assert.equal(livemodeOf('rk_live_abc'), true);
    assert.equal(livemodeOf('sk_test_abc'), false);
    assert.equal(livemodeOf('rk_test_abc'), false);
  });

  test('its name, that it needs a payment method, and Stripe keeping idempotency keys 24 hours', () => {
    assert.equal(stripe.name, 'stripe');
    assert.equal(stripe.needsPaymentMethod, true);
    assert.equal(stripe.idempotencyWindowSeconds, 86_400);
  });

  test('an API base with a path is refused: the SDK would drop it', () => {
    assert.throws(
      () => createStripeProcessor({ secretKey: SECRET_KEY, webhookSecret: undefined, apiBase: `${standIn.url}/stripe` }),
      /no path/,
    );
  });
});

describe('createCharge', () => {
  test('names one PaymentIntent per reference, however often it is asked, and confirms nothing', async () => {
    const request = chargeRequest();
    const first = await stripe.createCharge(request);
    const second = await stripe.createCharge(request);
    assert.equal(second.processorReference, first.processorReference);
    assert.match(first.processorReference, /^pi_/);
    assert.equal(standIn.intentsByReference(request.reference), 1);
    const intent = intentOf(first.processorReference);
    assert.deepEqual(
      {
        amount: intent.amount,
        currency: intent.currency,
        status: intent.status,
        payment_method: intent.payment_method,
        metadata: intent.metadata,
        automatic_payment_methods: intent.automatic_payment_methods,
      },
      {
        amount: 2500,
        currency: 'eur',
        status: 'requires_confirmation',
        payment_method: 'pm_card_visa',
        metadata: { orderpay_reference: request.reference },
        automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      },
    );
    assert.deepEqual(keysSentTo('/v1/payment_intents').slice(-2), [request.reference, request.reference]);
  });

  test('with a return URL, redirect-based payment methods are allowed', async () => {
    const charge = await createdCharge({ returnUrl: RETURN_URL });
    assert.deepEqual(intentOf(charge.processorReference).automatic_payment_methods, { enabled: true, allow_redirects: 'always' });
  });

  test('the same reference with other parameters is our bug: Stripe refuses it, and it is thrown as it is', async () => {
    const request = chargeRequest();
    await stripe.createCharge(request);
    await assert.rejects(stripe.createCharge({ ...request, amount: 2600 }), Stripe.errors.StripeIdempotencyError);
    assert.equal(standIn.intentsByReference(request.reference), 1);
  });

  test('a key Stripe refuses is not Stripe being unavailable', async () => {
    const live = createStripeProcessor({ secretKey: 'sk_live_orderpay0001', webhookSecret: undefined, apiBase: standIn.url });
    await assert.rejects(live.createCharge(chargeRequest()), Stripe.errors.StripeAuthenticationError);
  });
});

describe('confirmCharge', () => {
  test('pm_card_visa succeeds, once, under the reference’s confirmation key', async () => {
    const charge = await createdCharge();
    assert.deepEqual(await stripe.confirmCharge(charge), { status: 'succeeded' });
    assert.deepEqual(await stripe.confirmCharge(charge), { status: 'succeeded' });
    const intent = intentOf(charge.processorReference);
    assert.equal(intent.status, 'succeeded');
    assert.equal(intent.amount_received, 2500);
    assert.deepEqual(keysSentTo(`/v1/payment_intents/${charge.processorReference}/confirm`), [
      `${charge.reference}:confirm`,
      `${charge.reference}:confirm`,
    ]);
  });

  test('confirming a succeeded charge again under a new attempt’s key answers its state', async () => {
    const charge = await createdCharge();
    await stripe.confirmCharge(charge);
    assert.deepEqual(await stripe.confirmCharge({ ...charge, attempt: 2 }), { status: 'succeeded' });
    assert.equal(intentOf(charge.processorReference).amount_received, 2500);
  });

  test('a declined card is declined with the issuer’s decline code, and stays so when asked again', async () => {
    const generic = await createdCharge({ paymentMethod: 'pm_card_chargeDeclined' });
    assert.deepEqual(await stripe.confirmCharge(generic), { status: 'declined', declineCode: 'generic_decline' });
    assert.deepEqual(await stripe.retrieveCharge(generic), { status: 'declined', declineCode: 'generic_decline' });
    const intent = intentOf(generic.processorReference);
    assert.equal(intent.status, 'requires_payment_method');
    assert.equal(intent.last_payment_error?.decline_code, 'generic_decline');

    const poor = await createdCharge({ paymentMethod: 'pm_card_chargeDeclinedInsufficientFunds' });
    assert.deepEqual(await stripe.confirmCharge(poor), { status: 'declined', declineCode: 'insufficient_funds' });
  });

  test('3-D Secure with a return URL: the customer is sent to Stripe’s page; once they pass, the charge succeeded', async () => {
    const charge = await createdCharge({ paymentMethod: 'pm_card_threeDSecure2Required', returnUrl: RETURN_URL });
    assert.deepEqual(await stripe.confirmCharge(charge), {
      status: 'requires_action',
      nextAction: { type: 'redirect_to_url', url: `${standIn.url}/3ds/${charge.processorReference}` },
    });
    assert.deepEqual(await stripe.retrieveCharge(charge), {
      status: 'requires_action',
      nextAction: { type: 'redirect_to_url', url: `${standIn.url}/3ds/${charge.processorReference}` },
    });
    standIn.completeAction(charge.processorReference, 'succeeded');
    assert.deepEqual(await stripe.retrieveCharge(charge), { status: 'succeeded' });
  });

  test('3-D Secure failed by the customer is a decline', async () => {
    const charge = await createdCharge({ paymentMethod: 'pm_card_threeDSecure2Required', returnUrl: RETURN_URL });
    await stripe.confirmCharge(charge);
    standIn.completeAction(charge.processorReference, 'declined');
    assert.deepEqual(await stripe.retrieveCharge(charge), { status: 'declined', declineCode: 'payment_intent_authentication_failure' });
  });

  test('3-D Secure without a return URL is left to Stripe.js, with the client secret', async () => {
    const charge = await createdCharge({ paymentMethod: 'pm_card_threeDSecure2Required' });
    assert.deepEqual(await stripe.confirmCharge(charge), {
      status: 'requires_action',
      nextAction: { type: 'use_processor_sdk', clientSecret: intentOf(charge.processorReference).client_secret },
    });
  });

  test('no payment method: nothing is confirmed; the customer gives one to Stripe.js with the client secret', async () => {
    const charge = await createdCharge({ paymentMethod: null, returnUrl: RETURN_URL });
    const { client_secret } = intentOf(charge.processorReference);
    assert.match(client_secret, new RegExp(`^${charge.processorReference}_secret_`));
    assert.deepEqual(await stripe.confirmCharge(charge), {
      status: 'requires_action',
      nextAction: { type: 'use_processor_sdk', clientSecret: client_secret },
    });
    assert.deepEqual(keysSentTo(`/v1/payment_intents/${charge.processorReference}/confirm`), []);
    assert.equal(intentOf(charge.processorReference).status, 'requires_payment_method');
    // The customer confirmed in the browser; the outcome comes later.
    standIn.setProcessing(charge.processorReference);
    assert.deepEqual(await stripe.confirmCharge(charge), { status: 'processing' });
    standIn.settle(charge.processorReference);
    assert.deepEqual(await stripe.retrieveCharge(charge), { status: 'succeeded' });
  });
});

describe('when Stripe fails or does not answer', () => {
  test('a 500 is unavailable, and Stripe answers the same 500 to the same key', async () => {
    const request = chargeRequest();
    standIn.failNext(1, 500);
    await rejectsAsUnavailable(
      stripe.createCharge(request),
      /^Stripe did not create the PaymentIntent: HTTP 500 An unknown error occurred \(request req_/,
    );
    await rejectsAsUnavailable(stripe.createCharge(request), /HTTP 500/);
    assert.equal(standIn.intentsByReference(request.reference), 0);
  });

  test('a 429 is unavailable, and kept under no key: the retry creates the intent', async () => {
    const request = chargeRequest();
    standIn.failNext(1, 429);
    await rejectsAsUnavailable(stripe.createCharge(request), /HTTP 429/);
    const { processorReference } = await stripe.createCharge(request);
    assert.equal(intentOf(processorReference).metadata.orderpay_reference, request.reference);
    assert.equal(standIn.intentsByReference(request.reference), 1);
  });

  test('no answer within the timeout is unavailable', async () => {
    const request = chargeRequest();
    standIn.failNext(1, 'hang');
    await rejectsAsUnavailable(impatient.createCharge(request), /timeout being reached \(300ms\)/);
    assert.equal(standIn.intentsByReference(request.reference), 0);
  });

  test('a creation Stripe did but never answered: the retry gets that intent, not a second one', async () => {
    const request = chargeRequest();
    standIn.failNext(1, 'take-then-hang');
    await rejectsAsUnavailable(impatient.createCharge(request), /timeout/);
    assert.equal(standIn.intentsByReference(request.reference), 1);
    const { processorReference } = await stripe.createCharge(request);
    assert.equal(intentOf(processorReference).metadata.orderpay_reference, request.reference);
    assert.equal(standIn.intentsByReference(request.reference), 1);
  });

  test('a second creation while the first is in flight under the key: 409, unavailable, still one intent', async () => {
    const request = chargeRequest();
    standIn.slowNext(1, 400);
    const outcomes = await Promise.allSettled([stripe.createCharge(request), stripe.createCharge(request)]);
    const rejected = outcomes.filter((o) => o.status === 'rejected');
    assert.equal(rejected.length, 1);
    assert.ok(rejected[0]!.reason instanceof ProcessorUnavailableError);
    assert.match(rejected[0]!.reason.message, /HTTP 409/);
    assert.equal(standIn.intentsByReference(request.reference), 1);
  });

  test('a confirmation that got a 500 is confirmed under the next attempt’s own key, while the first key keeps its 500', async () => {
    const charge = await createdCharge();
    standIn.failNext(1, 500);
    await rejectsAsUnavailable(stripe.confirmCharge(charge), /^Stripe did not confirm pi_\w+: HTTP 500/);
    await rejectsAsUnavailable(stripe.confirmCharge(charge), /HTTP 500/);
    // orderpay asks before confirming again: never confirmed.
    assert.deepEqual(await stripe.retrieveCharge(charge), { status: 'created' });
    assert.deepEqual(await stripe.confirmCharge({ ...charge, attempt: 1 }), { status: 'succeeded' });
    assert.deepEqual(keysSentTo(`/v1/payment_intents/${charge.processorReference}/confirm`), [
      `${charge.reference}:confirm`,
      `${charge.reference}:confirm`,
      `${charge.reference}:confirm:1`,
    ]);
    assert.equal(intentOf(charge.processorReference).amount_received, 2500);
  });

  test('no connection is unavailable', async () => {
    const unreachable = createStripeProcessor({ secretKey: SECRET_KEY, webhookSecret: undefined, apiBase: 'http://127.0.0.1:1' });
    await rejectsAsUnavailable(unreachable.createCharge(chargeRequest()), /^Stripe did not create the PaymentIntent: .*ECONNREFUSED/);
  });

  test('a retrieval that does not answer is unavailable', async () => {
    const charge = await createdCharge();
    standIn.failNext(1, 'hang');
    await rejectsAsUnavailable(
      impatient.retrieveCharge(charge),
      new RegExp(`^Stripe did not retrieve ${charge.processorReference}: Request aborted`),
    );
  });
});

describe('cancelCharge', () => {
  test('cancels a charge waiting for the customer, under the reference’s cancellation key', async () => {
    const charge = await createdCharge({ paymentMethod: null });
    assert.deepEqual(await stripe.cancelCharge(charge), { status: 'canceled' });
    assert.equal(intentOf(charge.processorReference).status, 'canceled');
    assert.deepEqual(keysSentTo(`/v1/payment_intents/${charge.processorReference}/cancel`), [`${charge.reference}:cancel`]);
  });

  test('too late: a charge that succeeded, or is processing, keeps its state', async () => {
    const succeeded = await createdCharge();
    await stripe.confirmCharge(succeeded);
    assert.deepEqual(await stripe.cancelCharge(succeeded), { status: 'succeeded' });
    assert.equal(intentOf(succeeded.processorReference).status, 'succeeded');

    const processing = await createdCharge();
    standIn.setProcessing(processing.processorReference);
    assert.deepEqual(await stripe.cancelCharge(processing), { status: 'processing' });
  });
});

describe('refund and retrieveRefund', () => {
  test('a refund is made once per reference, and retrieved by its id', async () => {
    const charge = await createdCharge();
    await stripe.confirmCharge(charge);
    const request = { reference: `rf_${randomUUID()}`, chargeReference: charge.processorReference, amount: 1000, currency: 'EUR' };
    const refund = await stripe.refund(request);
    assert.equal(refund.status, 'succeeded');
    assert.match(refund.processorReference, /^re_/);
    assert.deepEqual(await stripe.refund(request), refund);
    assert.deepEqual(
      standIn
        .refunds()
        .filter((r) => r.payment_intent === charge.processorReference)
        .map((r) => ({ id: r.id, amount: r.amount, currency: r.currency, metadata: r.metadata })),
      [{ id: refund.processorReference, amount: 1000, currency: 'eur', metadata: { orderpay_reference: request.reference } }],
    );
    assert.deepEqual(await stripe.retrieveRefund({ ...request, processorReference: refund.processorReference }), refund);
  });

  test('more than is left to refund is our bug: thrown as Stripe raised it', async () => {
    const charge = await createdCharge();
    await stripe.confirmCharge(charge);
    const request = { reference: `rf_${randomUUID()}`, chargeReference: charge.processorReference, amount: 2501, currency: 'EUR' };
    await assert.rejects(stripe.refund(request), Stripe.errors.StripeInvalidRequestError);
  });
});

describe('parseEvent', () => {
  const parse = (event: { payload: string; headers: Record<string, string> }, processor = stripe) =>
    processor.parseEvent!(Buffer.from(event.payload), event.headers);
  const idOf = (payload: string) => (JSON.parse(payload) as { id: string }).id;

  test('a signed payment_intent.succeeded says the charge succeeded', async () => {
    const charge = await createdCharge();
    await stripe.confirmCharge(charge);
    const event = standIn.signedEvent('payment_intent.succeeded', intentOf(charge.processorReference));
    assert.match(idOf(event.payload), /^evt_/);
    assert.deepEqual(parse(event), {
      id: idOf(event.payload),
      type: 'payment_intent.succeeded',
      charge: { processorReference: charge.processorReference, state: { status: 'succeeded' } },
    });
  });

  test('payment_intent.payment_failed says the charge was declined', async () => {
    const charge = await createdCharge({ paymentMethod: 'pm_card_chargeDeclined' });
    await stripe.confirmCharge(charge);
    const event = standIn.signedEvent('payment_intent.payment_failed', intentOf(charge.processorReference));
    assert.deepEqual(parse(event).charge, {
      processorReference: charge.processorReference,
      state: { status: 'declined', declineCode: 'generic_decline' },
    });
  });

  test('refund.failed and charge.refund.updated say what became of a refund', async () => {
    const charge = await createdCharge();
    await stripe.confirmCharge(charge);
    const { processorReference } = await stripe.refund({
      reference: `rf_${randomUUID()}`,
      chargeReference: charge.processorReference,
      amount: 500,
      currency: 'EUR',
    });
    const refund = standIn.refunds().find((r) => r.id === processorReference)!;
    const failed = standIn.signedEvent('refund.failed', { ...refund, status: 'failed', failure_reason: 'expired_or_canceled_card' });
    assert.deepEqual(parse(failed).refund, {
      processorReference,
      state: { status: 'failed', processorReference, reason: 'expired_or_canceled_card' },
    });
    const updated = standIn.signedEvent('charge.refund.updated', refund);
    assert.deepEqual(parse(updated).refund, { processorReference, state: { status: 'succeeded', processorReference } });
  });

  test('an event of another type says nothing of charges or refunds', () => {
    const event = standIn.signedEvent('customer.created', { id: 'cus_1', object: 'customer' });
    assert.deepEqual(parse(event), { id: idOf(event.payload), type: 'customer.created' });
  });

  test('rejected: unsigned, signed with another secret, altered after signing, or signed too long ago', () => {
    const event = standIn.signedEvent('customer.created', { id: 'cus_1', object: 'customer' });
    const rejects = (attempt: () => unknown, message: RegExp) =>
      assert.throws(attempt, (error: unknown) => {
        assert.ok(error instanceof ProcessorEventRejectedError, String(error));
        assert.match(error.message, message);
        return true;
      });
    rejects(() => stripe.parseEvent!(Buffer.from(event.payload), {}), /no single Stripe-Signature header/);
    rejects(() => stripe.parseEvent!(Buffer.from(event.payload), { 'stripe-signature': [event.headers['stripe-signature']] }), /no single/);
    const otherSecret = standIn.signedEvent('customer.created', { id: 'cus_1' }, { secret: 'whsec_someone_else' });
    rejects(() => parse(otherSecret), /No signatures found matching the expected signature/);
    rejects(() => parse({ ...event, payload: event.payload.replace('cus_1', 'cus_2') }), /No signatures found matching/);
    const stale = standIn.signedEvent('customer.created', { id: 'cus_1' }, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    rejects(() => parse(stale), /Timestamp outside the tolerance zone/);
    const unconfigured = createStripeProcessor({ secretKey: SECRET_KEY, webhookSecret: undefined, apiBase: standIn.url });
    rejects(() => parse(event, unconfigured), /no Stripe webhook signing secret/);
  });

  test('a signed body that is not an event is rejected', () => {
    for (const [payload, message] of [
      ['not json', /not an event signed by Stripe/],
      ['{"object": "list", "data": []}', /signed, but not a Stripe event/],
    ] as const) {
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
      assert.throws(() => parse({ payload, headers: { 'stripe-signature': signature } }), { name: 'ProcessorEventRejectedError', message });
    }
  });
});

describe('chargeStateOf', () => {
  const intent = (fields: Partial<PaymentIntentState>): PaymentIntentState => ({
    status: 'requires_payment_method',
    client_secret: 'pi_1_secret_2',
    next_action: null,
    last_payment_error: null,
    ...fields,
  });

  test('each status', () => {
    assert.deepEqual(chargeStateOf(intent({ status: 'succeeded' })), { status: 'succeeded' });
    assert.deepEqual(chargeStateOf(intent({ status: 'processing' })), { status: 'processing' });
    assert.deepEqual(chargeStateOf(intent({ status: 'requires_capture' })), { status: 'processing' });
    assert.deepEqual(chargeStateOf(intent({ status: 'canceled' })), { status: 'canceled' });
    assert.deepEqual(chargeStateOf(intent({ status: 'requires_payment_method' })), { status: 'created' });
    assert.deepEqual(chargeStateOf(intent({ status: 'requires_confirmation' })), { status: 'created' });
    assert.throws(() => chargeStateOf(intent({ status: 'requires_reticulation' })), /requires_reticulation/);
  });

  test('requires_action: a redirect when Stripe gives its URL, else the client secret for Stripe.js', () => {
    const redirect = { type: 'redirect_to_url', redirect_to_url: { url: 'https://hooks.stripe.com/3ds/1', return_url: RETURN_URL } };
    assert.deepEqual(chargeStateOf(intent({ status: 'requires_action', next_action: redirect })), {
      status: 'requires_action',
      nextAction: { type: 'redirect_to_url', url: 'https://hooks.stripe.com/3ds/1' },
    });
    assert.deepEqual(chargeStateOf(intent({ status: 'requires_action', next_action: { type: 'use_stripe_sdk', use_stripe_sdk: {} } })), {
      status: 'requires_action',
      nextAction: { type: 'use_processor_sdk', clientSecret: 'pi_1_secret_2' },
    });
  });

  test('a failed attempt is a decline: the decline code, else the error code, else card_declined', () => {
    const failedWith = (error: Partial<NonNullable<PaymentIntentState['last_payment_error']>>) =>
      chargeStateOf(intent({ last_payment_error: { type: 'card_error', ...error } }));
    assert.deepEqual(failedWith({ code: 'card_declined', decline_code: 'insufficient_funds' }), {
      status: 'declined',
      declineCode: 'insufficient_funds',
    });
    assert.deepEqual(failedWith({ code: 'expired_card' }), { status: 'declined', declineCode: 'expired_card' });
    assert.deepEqual(failedWith({}), { status: 'declined', declineCode: 'card_declined' });
  });
});

describe('refundStateOf', () => {
  test('each status', () => {
    const of = (status: string | null, failure_reason?: string) => refundStateOf({ id: 're_1', status, failure_reason });
    assert.deepEqual(of('succeeded'), { status: 'succeeded', processorReference: 're_1' });
    assert.deepEqual(of('pending'), { status: 'pending', processorReference: 're_1' });
    assert.deepEqual(of('requires_action'), { status: 'pending', processorReference: 're_1' });
    assert.deepEqual(of('failed', 'lost_or_stolen_card'), { status: 'failed', processorReference: 're_1', reason: 'lost_or_stolen_card' });
    assert.deepEqual(of('canceled'), { status: 'failed', processorReference: 're_1', reason: 'canceled' });
  });
});
