// The payment processor behind orderpay: the interface a card processor's adapter implements
// (docs/payments.md, "Processors"), modelled on Medusa's payment providers: small, idempotent by our
// reference, able to say what became of a charge it was asked for before. orderpay never calls it
// inside a transaction: each call sits between two commits (src/flows/settle-payment.ts).

/** Decline codes v1 and v2 know; other codes a processor gives are shown there as card_declined (docs/payments.md). */
export const DECLINE_CODES = ['card_declined', 'insufficient_funds', 'expired_card'] as const;
export type DeclineCode = (typeof DECLINE_CODES)[number];

/** What the customer must do before the processor can decide (3-D Secure). */
export type NextAction =
  /** Send the customer's browser to url; the processor brings it back to the payment's returnUrl. */
  | { type: 'redirect_to_url'; url: string }
  /** Hand clientSecret to the processor's own library in the browser (Stripe.js handleNextAction). */
  | { type: 'use_processor_sdk'; clientSecret: string };

/** What the processor says of a charge. */
export type ChargeState =
  /** Known to the processor, not confirmed: no money has moved. */
  | { status: 'created' }
  /** Confirmed; the outcome comes later. */
  | { status: 'processing' }
  | { status: 'requires_action'; nextAction: NextAction }
  | { status: 'succeeded' }
  /** Refused by the card network or the processor; declineCode is the processor's own. */
  | { status: 'declined'; declineCode: string }
  /** Given up before any money moved. */
  | { status: 'canceled' };

/** A charge as orderpay asks for it: the same on every call about it. */
export interface ChargeRequest {
  /**
   * Stable across retries of one logical payment (it survives a crash of this process): the
   * processor's own idempotency key for creating the charge, so a retried creation is never two.
   */
  reference: string;
  amount: number;
  currency: string;
  /** The processor's payment method (Stripe: pm_…), when the request named one. */
  paymentMethod: string | null;
  /** Where the customer's browser comes back after an action, when the request named one. */
  returnUrl: string | null;
}

/** A charge the processor has named. */
export interface KnownCharge extends ChargeRequest {
  processorReference: string;
  /**
   * How many times the processor failed to answer about this payment before. A processor that
   * keeps a failed answer under its idempotency key (Stripe keeps its 5xx) confirms under a key of
   * this attempt's own, sent only once the charge is known not to be confirmed.
   */
  attempt: number;
}

export interface RefundRequest {
  /** Stable across retries of one refund: the processor's idempotency key for it. */
  reference: string;
  /** The processorReference of the charge being refunded. */
  chargeReference: string;
  amount: number;
  currency: string;
}

export type RefundState =
  | { status: 'pending'; processorReference: string }
  | { status: 'succeeded'; processorReference: string }
  | { status: 'failed'; processorReference: string; reason: string };

export interface PaymentProcessor {
  /** Names it in payments and in the path of its events: POST /processors/{name}/events. */
  readonly name: string;
  /** False in a test mode where no real money moves (the simulator; Stripe's test keys). */
  readonly livemode: boolean;
  /**
   * True when a charge needs a payment method the request names or the customer gives (Stripe's
   * pm_… or its Payment Element): a version that cannot show a payment waiting for the customer
   * (v1, v2) must name one, which it cannot, so it is refused with PAYMENT_METHOD_REQUIRED.
   */
  readonly needsPaymentMethod: boolean;
  /**
   * How long the processor replays a request sent again under the same idempotency key (Stripe: 24
   * hours). A creation never recorded is not sent again after this: it could make a second charge.
   */
  readonly idempotencyWindowSeconds: number;
  /** Creates the charge unconfirmed (no money moves), idempotent by reference; returns its id. */
  createCharge(charge: ChargeRequest): Promise<{ processorReference: string }>;
  /** Confirms a created charge (idempotent: confirming it again answers its state). */
  confirmCharge(charge: KnownCharge): Promise<ChargeState>;
  /** The charge's state as the processor knows it now. */
  retrieveCharge(charge: KnownCharge): Promise<ChargeState>;
  /** Gives up on a charge that is waiting for the customer; its state after (succeeded if it was too late). */
  cancelCharge(charge: KnownCharge): Promise<ChargeState>;
  /** Refunds part or all of a succeeded charge, idempotent by reference. */
  refund(request: RefundRequest): Promise<RefundState>;
  /** A refund's state as the processor knows it now. */
  retrieveRefund(request: RefundRequest & { processorReference: string }): Promise<RefundState>;
  /**
   * An event the processor sent to POST /processors/{name}/events, its signature verified against
   * the raw body; throws ProcessorEventRejectedError when it is not the processor's. Without it,
   * the processor sends no events and the path answers 404.
   */
  parseEvent?(payload: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): ProcessorEvent;
}

/** An event from the processor, verified: what it says of one of our charges or refunds, if anything. */
export interface ProcessorEvent {
  /** The processor's id of the event: an event is applied once, however often it is sent. */
  id: string;
  /** The processor's type of the event (payment_intent.succeeded), for the log. */
  type: string;
  charge?: { processorReference: string; state: ChargeState };
  refund?: { processorReference: string; state: RefundState };
}

/** An event whose signature does not verify (or which is not an event at all): answered 400, nothing changes. */
export class ProcessorEventRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProcessorEventRejectedError';
  }
}

/** Thrown when the processor cannot be reached or fails: the call may or may not have been done; a retry under the same reference is safe. */
export class ProcessorUnavailableError extends Error {
  constructor(message = 'payment processor unavailable') {
    super(message);
    this.name = 'ProcessorUnavailableError';
  }
}

/** How long one processor call may take before it counts as unavailable (a retry reuses the reference). */
const PROCESSOR_TIMEOUT_MS = 10_000;

/** The processor, with every call that outlasts timeoutMs failing as unavailable. */
export function withProcessorTimeout(processor: PaymentProcessor, timeoutMs = PROCESSOR_TIMEOUT_MS): PaymentProcessor {
  async function bounded<T>(call: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new ProcessorUnavailableError(`payment processor did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([call(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
  return {
    name: processor.name,
    livemode: processor.livemode,
    needsPaymentMethod: processor.needsPaymentMethod,
    idempotencyWindowSeconds: processor.idempotencyWindowSeconds,
    // Verifying a signature is local: nothing to time out.
    ...(processor.parseEvent && { parseEvent: processor.parseEvent.bind(processor) }),
    createCharge: (charge) => bounded(() => processor.createCharge(charge)),
    confirmCharge: (charge) => bounded(() => processor.confirmCharge(charge)),
    retrieveCharge: (charge) => bounded(() => processor.retrieveCharge(charge)),
    cancelCharge: (charge) => bounded(() => processor.cancelCharge(charge)),
    refund: (request) => bounded(() => processor.refund(request)),
    retrieveRefund: (request) => bounded(() => processor.retrieveRefund(request)),
  };
}
