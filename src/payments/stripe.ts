// The Stripe processor: orderpay's charges as PaymentIntents and its refunds as Refunds, through
// Stripe's official SDK (docs/payments.md, "Stripe"). Every call that changes
// something goes under an idempotency key made from our reference
// (https://docs.stripe.com/api/idempotent_requests): a retry after a crash or a timeout is never a
// second charge or a second refund.
import Stripe from 'stripe';
import {
  type ChargeRequest,
  type ChargeState,
  type KnownCharge,
  type PaymentProcessor,
  type ProcessorEvent,
  ProcessorEventRejectedError,
  ProcessorUnavailableError,
  type RefundState,
} from './processor.ts';

export interface StripeProcessorOptions {
  secretKey: string;
  /** The signing secret (whsec_…) of the webhook endpoint; without it, every event is rejected. */
  webhookSecret: string | undefined;
  /** e.g. http://127.0.0.1:12111 for a stand-in; default Stripe's own */
  apiBase?: string;
  /** How long one request to Stripe may take before it counts as unavailable (default 8 s). */
  timeoutMs?: number;
}

/**
 * Below the 10 s withProcessorTimeout puts on every call (processor.ts), so the SDK aborts its own
 * request first and no socket is left waiting on an answer nobody reads.
 */
const DEFAULT_TIMEOUT_MS = 8_000;

/** Stripe keeps an idempotency key at least 24 hours (https://docs.stripe.com/api/idempotent_requests). */
const IDEMPOTENCY_WINDOW_SECONDS = 24 * 3600;

/** What chargeStateOf reads of a PaymentIntent. */
export type PaymentIntentState = Pick<Stripe.PaymentIntent, 'status' | 'client_secret' | 'next_action' | 'last_payment_error'>;

/** What refundStateOf reads of a Refund. */
export type RefundObjectState = Pick<Stripe.Refund, 'id' | 'status' | 'failure_reason'>;

export function createStripeProcessor(options: StripeProcessorOptions): PaymentProcessor {
  const stripe = createClient(options);
  const retrieveCharge = async (charge: KnownCharge) => chargeStateOf(await retrieveIntent(stripe, charge));
  return {
    name: 'stripe',
    livemode: isLiveKey(options.secretKey),
    // A PaymentIntent is charged with a payment method the request names or the customer gives to Stripe.js.
    needsPaymentMethod: true,
    idempotencyWindowSeconds: IDEMPOTENCY_WINDOW_SECONDS,
    async createCharge(charge) {
      // Not confirmed: no money moves until confirmCharge.
      const intent = await askStripe('create the PaymentIntent', () =>
        stripe.paymentIntents.create(paymentIntentParamsOf(charge), { idempotencyKey: charge.reference }),
      );
      return { processorReference: intent.id };
    },
    async confirmCharge(charge) {
      const { paymentMethod } = charge;
      if (paymentMethod === null) return customerPaymentMethodState(await retrieveIntent(stripe, charge));
      try {
        const intent = await askStripe(`confirm ${charge.processorReference}`, () =>
          stripe.paymentIntents.confirm(charge.processorReference, confirmParamsOf(paymentMethod, charge.returnUrl), {
            idempotencyKey: attemptKeyOf(charge, 'confirm'),
          }),
        );
        return chargeStateOf(intent);
      } catch (error) {
        // A decline is Stripe's answer, not a failure to answer (https://docs.stripe.com/declines).
        if (error instanceof Stripe.errors.StripeCardError) return { status: 'declined', declineCode: declineCodeOf(error) };
        // No longer confirmable (it succeeded, is processing, or was canceled): its state is the answer.
        if (isUnexpectedState(error)) return retrieveCharge(charge);
        throw error;
      }
    },
    retrieveCharge,
    async cancelCharge(charge) {
      try {
        const intent = await askStripe(`cancel ${charge.processorReference}`, () =>
          stripe.paymentIntents.cancel(charge.processorReference, {}, { idempotencyKey: attemptKeyOf(charge, 'cancel') }),
        );
        return chargeStateOf(intent);
      } catch (error) {
        // Stripe refuses to cancel a PaymentIntent that succeeded or is processing
        // (https://docs.stripe.com/api/payment_intents/cancel): too late, its outcome stands.
        if (isUnexpectedState(error)) return retrieveCharge(charge);
        throw error;
      }
    },
    async refund(request) {
      const refund = await askStripe('create the refund', () =>
        stripe.refunds.create(
          { payment_intent: request.chargeReference, amount: request.amount, metadata: { orderpay_reference: request.reference } },
          { idempotencyKey: request.reference },
        ),
      );
      return refundStateOf(refund);
    },
    async retrieveRefund(request) {
      return refundStateOf(
        await askStripe(`retrieve ${request.processorReference}`, () => stripe.refunds.retrieve(request.processorReference)),
      );
    },
    parseEvent(payload, headers) {
      return processorEventOf(verifiedEventOf(stripe, payload, headers['stripe-signature'], options.webhookSecret));
    },
  };
}

function createClient(options: StripeProcessorOptions): Stripe {
  return new Stripe(options.secretKey, {
    // The version stripe@23.1.0 is pinned to: the shapes of the objects and events read here. A
    // newer SDK fails the type check here until its version is chosen on purpose.
    apiVersion: '2026-10-28.endive',
    // orderpay retries on its own schedule, under the same idempotency key (docs/payments.md, "When
    // the processor does not answer"). The SDK still resends once a request whose connection closed
    // under it, under the same key: safe.
    maxNetworkRetries: 0,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    appInfo: { name: 'orderpay' },
    ...(options.apiBase !== undefined && apiAddressOf(options.apiBase)),
  });
}

/** Live keys move real money; test keys do not (https://docs.stripe.com/keys). */
function isLiveKey(secretKey: string): boolean {
  return secretKey.startsWith('sk_live_') || secretKey.startsWith('rk_live_');
}

/** The SDK takes Stripe's address in parts. */
function apiAddressOf(apiBase: string): { host: string; port: number; protocol: 'http' | 'https' } {
  const url = new URL(apiBase);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`Stripe's API base must be an http(s) URL, not ${url.protocol}`);
  // The SDK puts /v1/… right after the host: a path here would be dropped without a word.
  if (url.pathname !== '/' || url.search !== '') throw new Error("Stripe's API base is an origin (scheme, host, port) with no path");
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port) || (protocol === 'http' ? 80 : 443), protocol };
}

function paymentIntentParamsOf(charge: ChargeRequest): Stripe.PaymentIntentCreateParams {
  return {
    amount: charge.amount,
    currency: charge.currency.toLowerCase(),
    ...(charge.paymentMethod !== null && { payment_method: charge.paymentMethod }),
    metadata: { orderpay_reference: charge.reference },
    // Without a return_url to come back to, Stripe refuses to confirm an intent that accepts
    // redirect-based methods, so they are left out (automatic_payment_methods.allow_redirects,
    // https://docs.stripe.com/api/payment_intents/create).
    automatic_payment_methods: { enabled: true, allow_redirects: charge.returnUrl !== null ? 'always' : 'never' },
  };
}

function confirmParamsOf(paymentMethod: string, returnUrl: string | null): Stripe.PaymentIntentConfirmParams {
  return { payment_method: paymentMethod, ...(returnUrl !== null && { return_url: returnUrl }) };
}

/**
 * Stripe keeps a 500 under its idempotency key and answers it again to every retry for 24 hours
 * (https://docs.stripe.com/api/idempotent_requests): after a failure, orderpay asks what became of
 * the intent and confirms again only one never confirmed, under its attempt's own key.
 */
function attemptKeyOf(charge: KnownCharge, step: 'confirm' | 'cancel'): string {
  return charge.attempt > 0 ? `${charge.reference}:${step}:${charge.attempt}` : `${charge.reference}:${step}`;
}

function retrieveIntent(stripe: Stripe, charge: KnownCharge): Promise<Stripe.PaymentIntent> {
  return askStripe(`retrieve ${charge.processorReference}`, () => stripe.paymentIntents.retrieve(charge.processorReference));
}

/**
 * A charge whose request named no payment method is never confirmed here: the customer's browser
 * gives one and confirms with Stripe.js (https://docs.stripe.com/payments/accept-a-payment). Until
 * it has, the customer must act.
 */
function customerPaymentMethodState(intent: Stripe.PaymentIntent): ChargeState {
  const waiting =
    (intent.status === 'requires_payment_method' && intent.last_payment_error === null) || intent.status === 'requires_confirmation';
  if (!waiting) return chargeStateOf(intent);
  return { status: 'requires_action', nextAction: { type: 'use_processor_sdk', clientSecret: clientSecretOf(intent) } };
}

/** What a PaymentIntent's status says of the charge (https://docs.stripe.com/payments/paymentintents/lifecycle). */
export function chargeStateOf(intent: PaymentIntentState): ChargeState {
  switch (intent.status) {
    case 'succeeded':
      return { status: 'succeeded' };
    case 'processing':
      return { status: 'processing' };
    // orderpay's intents capture automatically: one authorised but not captured is on its way.
    case 'requires_capture':
      return { status: 'processing' };
    case 'canceled':
      return { status: 'canceled' };
    case 'requires_action':
      return { status: 'requires_action', nextAction: nextActionOf(intent) };
    case 'requires_payment_method':
      // A failed attempt puts the intent back here with the reason (last_payment_error).
      if (intent.last_payment_error !== null) return { status: 'declined', declineCode: declineCodeOf(intent.last_payment_error) };
      return { status: 'created' };
    case 'requires_confirmation':
      return { status: 'created' };
    default:
      throw new Error(`Stripe gave a PaymentIntent status orderpay does not know: ${intent.status}`);
  }
}

/** A redirect when Stripe gives one (a return_url was sent), else the client secret for Stripe.js's handleNextAction. */
function nextActionOf(intent: PaymentIntentState): Extract<ChargeState, { status: 'requires_action' }>['nextAction'] {
  const url = intent.next_action?.type === 'redirect_to_url' ? intent.next_action.redirect_to_url?.url : null;
  if (url) return { type: 'redirect_to_url', url };
  return { type: 'use_processor_sdk', clientSecret: clientSecretOf(intent) };
}

function clientSecretOf(intent: PaymentIntentState): string {
  // Given to a secret key always; null only where a publishable key retrieves the intent.
  if (intent.client_secret === null) throw new Error('Stripe gave a PaymentIntent without its client_secret');
  return intent.client_secret;
}

function declineCodeOf(error: { decline_code?: string | undefined; code?: string | undefined }): string {
  return error.decline_code ?? error.code ?? 'card_declined';
}

/** What a Refund's status says (https://docs.stripe.com/api/refunds/object#refund_object-status). */
export function refundStateOf(refund: RefundObjectState): RefundState {
  const processorReference = refund.id;
  switch (refund.status) {
    case 'succeeded':
      return { status: 'succeeded', processorReference };
    case 'failed':
    case 'canceled':
      return { status: 'failed', processorReference, reason: refund.failure_reason ?? refund.status };
    // pending, requires_action, and any status not yet decided: asked again later.
    default:
      return { status: 'pending', processorReference };
  }
}

/** The error of a request Stripe refused for the object's state: payment_intent_unexpected_state. */
function isUnexpectedState(error: unknown): boolean {
  return error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'payment_intent_unexpected_state';
}

/**
 * One request to Stripe. Stripe not answering, or failing on its side, becomes
 * ProcessorUnavailableError (the request may or may not have been done: a retry under the same key
 * is safe); every other error (a refused key, a request that is our bug) is thrown as it is.
 */
async function askStripe<T>(what: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (isUnanswered(error)) throw new ProcessorUnavailableError(`Stripe did not ${what}: ${describeFailure(error)}`);
    throw error;
  }
}

/**
 * No connection or a timeout, a 5xx, 429 (https://docs.stripe.com/rate-limits), and 409: another
 * request under the same key is still in flight (https://docs.stripe.com/error-low-level), which the
 * SDK raises as StripeAPIError.
 */
function isUnanswered(error: unknown): error is Stripe.errors.StripeError {
  return (
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeAPIError ||
    error instanceof Stripe.errors.StripeRateLimitError ||
    (error instanceof Stripe.errors.StripeError && (error.statusCode ?? 0) >= 500)
  );
}

/** What happened, for the log: Stripe's own message (it names no key), the network's, and Stripe's request id. */
function describeFailure(error: Stripe.errors.StripeError): string {
  const network = error.detail instanceof Error && error.detail.message ? ` (${error.detail.message})` : '';
  const answer = error.statusCode === undefined ? `${error.message}${network}` : `HTTP ${error.statusCode} ${error.message}`;
  return error.requestId ? `${answer} (request ${error.requestId})` : answer;
}

/** Verified against the endpoint's secret with Stripe's default tolerance of 300 s against replays (https://docs.stripe.com/webhooks#verify-events). */
function verifiedEventOf(
  stripe: Stripe,
  payload: Buffer,
  signature: string | string[] | undefined,
  webhookSecret: string | undefined,
): Stripe.Event {
  if (!webhookSecret) throw new ProcessorEventRejectedError('no Stripe webhook signing secret is configured');
  if (typeof signature !== 'string') throw new ProcessorEventRejectedError('the event has no single Stripe-Signature header');
  let event: Stripe.Event;
  try {
    event = stripe.webhooks.constructEvent(payload, signature, webhookSecret);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new ProcessorEventRejectedError(`not an event signed by Stripe with this endpoint's secret: ${reason}`);
  }
  const object: unknown = event?.data?.object;
  if (typeof event?.id !== 'string' || typeof event.type !== 'string' || typeof object !== 'object' || object === null) {
    throw new ProcessorEventRejectedError('signed, but not a Stripe event');
  }
  return event;
}

/** What an event says of one of our charges or refunds (https://docs.stripe.com/api/events/types). */
function processorEventOf(event: Stripe.Event): ProcessorEvent {
  const { id, type } = event;
  switch (event.type) {
    case 'payment_intent.succeeded':
    case 'payment_intent.processing':
    case 'payment_intent.payment_failed':
    case 'payment_intent.canceled':
    case 'payment_intent.requires_action':
    case 'payment_intent.amount_capturable_updated': {
      const intent = event.data.object;
      return { id, type, charge: { processorReference: intent.id, state: chargeStateOf(intent) } };
    }
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed':
    case 'charge.refund.updated': {
      const refund = event.data.object;
      return { id, type, refund: { processorReference: refund.id, state: refundStateOf(refund) } };
    }
    default:
      return { id, type };
  }
}
