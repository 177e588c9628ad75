// Phases 2 and 3 of a payment (docs/payments.md, "How a payment is made"): ask the processor about
// a payment in progress with no transaction open, then commit what it said (the payment's new
// status, its order paid, their events) in one short transaction. The request that made the
// payment, the completer job and the processor's events all drive payments through here; whichever
// learns an outcome first commits it, the others find it committed.
import { requesterOf } from '../core/actor.ts';
import { DomainError } from '../core/errors.ts';
import type { Failpoint } from '../core/failpoints.ts';
import type { Db, Queryable } from '../db/db.ts';
import { markOrderPaid } from '../orders/orders.service.ts';
import { lockOrder } from '../orders/orders.store.ts';
import { chargeOutcome, type ChargeOutcome, isInProgress, nextAttempt } from '../payments/payments.rules.ts';
import { flagPaymentForAttention, recordPaymentOutcome } from '../payments/payments.service.ts';
import { recordProcessorReference, schedulePaymentAttempt } from '../payments/in-progress.store.ts';
import { findPayment, type PaymentRecord, type RefundRecord } from '../payments/payments.store.ts';
import { type ChargeState, type KnownCharge, type PaymentProcessor, ProcessorUnavailableError } from '../payments/processor.ts';

/** What drives payments: the processor, and how long to wait before asking it again. */
export interface PaymentDriver {
  db: Db;
  processor: PaymentProcessor;
  /** Seconds before each new question after the processor did not answer (ORDERPAY_PAYMENTS_RETRY_SCHEDULE). */
  retryScheduleSeconds: readonly number[];
  /** How long a customer has to act (3-D Secure) before the payment is canceled (ORDERPAY_PAYMENTS_ACTION_EXPIRY_SECONDS). */
  actionExpirySeconds: number;
  failpoint?: Failpoint;
  /** A payment or refund the processor decided, once the driver that committed the decision has committed it (business metrics). */
  onDecided?: { payment(payment: PaymentRecord): void; refund(refund: RefundRecord): void };
}

/**
 * While the customer may act, how often the processor is asked whether they did: its event says so
 * at once, this catches an event that never arrived.
 */
const ACTION_CHECK_SECONDS = 300;

/** Runs in the transaction that commits a payment's new status, with the payment as changed. */
export type WithinSettlement = (tx: Queryable, payment: PaymentRecord) => Promise<void>;

/** 503 when the processor did not answer: the payment stays in progress, asked about again later. */
export function processorUnavailable(): DomainError {
  return new DomainError(
    'PAYMENT_PROCESSOR_UNAVAILABLE',
    'The payment processor did not answer. The payment is kept in progress and asked about again; retry the request with the same Idempotency-Key to receive its outcome.',
  );
}

/** Whether an error is the processor not answering (the payment stays in progress). */
export function isProcessorUnavailable(error: unknown): boolean {
  return error instanceof DomainError && error.code === 'PAYMENT_PROCESSOR_UNAVAILABLE';
}

/**
 * Drives the payment one step towards its outcome and returns it as it then is (unchanged when it
 * is final, or when the processor has nothing new to say). `within` runs in the transaction that
 * commits a new status. Throws PAYMENT_PROCESSOR_UNAVAILABLE when the processor did not answer.
 * Given the record phase 1 just committed, it is not read again.
 */
export async function advancePayment(
  driver: PaymentDriver,
  recorded: number | PaymentRecord,
  within?: WithinSettlement,
): Promise<PaymentRecord> {
  const payment = typeof recorded === 'number' ? await findPayment(driver.db, recorded, undefined) : recorded;
  if (!payment) throw new Error(`payment ${String(recorded)} does not exist`);
  if (!isInProgress(payment.status)) return payment;
  let state: ChargeState;
  try {
    state = await askProcessor(driver, payment);
  } catch (error) {
    if (!(error instanceof ProcessorUnavailableError)) throw error;
    await scheduleAfterFailure(driver, payment);
    throw processorUnavailable();
  }
  await driver.failpoint?.('payments.before-outcome');
  const outcome = chargeOutcome(state);
  if (outcome.status === payment.status) {
    // Nothing new: asked again when the customer may have acted, else at the end of the lease.
    if (payment.status === 'requires_action')
      await schedulePaymentAttempt(driver.db, payment.id, { delaySeconds: ACTION_CHECK_SECONDS, failed: false });
    return payment;
  }
  return (await commitOutcome(driver, payment, outcome, within)) ?? payment;
}

/**
 * What the processor said of a payment's charge without being asked (its event), committed as its
 * answer to a question would be. Nothing changes when the payment is decided already, when the state
 * is the one it is in, or when the charge merely exists (no decision, nothing the customer did): an
 * event sent twice, or late, changes nothing.
 */
export async function settleFromProcessor(
  driver: PaymentDriver,
  payment: PaymentRecord,
  state: ChargeState,
  within?: WithinSettlement,
): Promise<PaymentRecord> {
  if (!isInProgress(payment.status) || state.status === 'created') return payment;
  const outcome = chargeOutcome(state);
  if (outcome.status === payment.status) return payment;
  return (await commitOutcome(driver, payment, outcome, within)) ?? payment;
}

/**
 * Step: what the processor says of the charge. A charge it never named is created (idempotent by
 * our reference) and its id committed before it is confirmed: from then on a retry asks about that
 * charge by its id instead of creating it again.
 */
async function askProcessor({ db, processor, failpoint }: PaymentDriver, payment: PaymentRecord): Promise<ChargeState> {
  const charge = {
    reference: payment.reference,
    amount: payment.amount,
    currency: payment.currency,
    paymentMethod: payment.paymentMethod,
    returnUrl: payment.returnUrl,
  };
  if (payment.processorReference === null) {
    const { processorReference } = await processor.createCharge(charge);
    await recordProcessorReference(db, payment.id, processorReference);
    await failpoint?.('payments.before-confirm');
    return processor.confirmCharge({ ...charge, processorReference, attempt: payment.attempts });
  }
  const known: KnownCharge = { ...charge, processorReference: payment.processorReference, attempt: payment.attempts };
  // The customer did not act in time: the charge is given up (unless the processor says it is too late).
  if (payment.status === 'requires_action' && payment.actionExpiresAt !== null && Date.parse(payment.actionExpiresAt) <= Date.now()) {
    return processor.cancelCharge(known);
  }
  const state = await processor.retrieveCharge(known);
  return state.status === 'created' ? processor.confirmCharge(known) : state;
}

/**
 * Step: the processor did not answer; ask again on the schedule. Once the schedule has run out, a
 * charge the processor never named was never confirmed, so took no money: the payment is canceled
 * (its order free again), and flagged for a person where the processor may have created a charge
 * we never learned of, which is never created again once its idempotency key has expired. A named
 * charge is asked about by its id from then on, at the last step's interval, its payment flagged.
 */
async function scheduleAfterFailure(driver: PaymentDriver, payment: PaymentRecord): Promise<void> {
  const { db, retryScheduleSeconds, processor } = driver;
  const { delaySeconds, exhausted } = nextAttempt(retryScheduleSeconds, payment.attempts + 1);
  await schedulePaymentAttempt(db, payment.id, { delaySeconds, failed: true });
  if (!exhausted) return;
  if (payment.processorReference !== null) {
    await db.transaction((tx) =>
      flagPaymentForAttention(tx, payment.id, `${processor.name} has not answered about this payment through the whole retry schedule.`),
    );
    return;
  }
  await commitOutcome(driver, payment, { status: 'canceled', cancellationReason: 'processor_unavailable' }, async (tx) => {
    if (Number.isFinite(processor.idempotencyWindowSeconds)) {
      await flagPaymentForAttention(
        tx,
        payment.id,
        `${processor.name} never named this charge through the whole retry schedule: look for a charge never confirmed under reference ${payment.reference} in its dashboard.`,
      );
    }
  });
}

/**
 * Phase 3: the outcome committed, once: the payment's status (from the status it was read in, so
 * that of several drivers only the first changes it), its order paid when it succeeded, their
 * events. When another driver committed first, the payment as it committed it.
 */
async function commitOutcome(
  { db, actionExpirySeconds, onDecided }: PaymentDriver,
  payment: PaymentRecord,
  outcome: ChargeOutcome,
  within: WithinSettlement | undefined,
): Promise<PaymentRecord | undefined> {
  const committed = await db.transaction(async (tx) => {
    const changed = await recordPaymentOutcome(tx, payment, outcome, { actionExpirySeconds, actionCheckSeconds: ACTION_CHECK_SECONDS });
    if (!changed) return undefined;
    if (changed.status === 'succeeded' && changed.orderId !== null) await payOrder(tx, changed);
    await within?.(tx, changed);
    return changed;
  });
  if (committed && !isInProgress(committed.status)) onDecided?.payment(committed);
  return committed ?? (await findPayment(db, payment.id, undefined));
}

/**
 * Step: a succeeded payment pays its order. The order was pending when the payment began and stays
 * so while the payment reserves it (cancelling and deleting wait for the outcome).
 */
async function payOrder(tx: Queryable, payment: PaymentRecord): Promise<void> {
  const order = await lockOrder(tx, payment.orderId!, undefined);
  if (order) await markOrderPaid(tx, order, requesterOf(payment));
}
