// Payment use cases and the payment steps of flows (src/flows/pay.ts, settle-payment.ts,
// settle-refund.ts). Writes run inside the transaction their caller opens: phase 1 of a payment or
// refund in the idempotency layer's, phase 3 in the settlement's (docs/payments.md). Callers get
// records, never wire shapes.
import { actorOf, requesterOf, SYSTEM_ACTOR, type Actor } from '../core/actor.ts';
import { readReport, type Report, type ReportQuery } from '../core/day-range.ts';
import { DomainError } from '../core/errors.ts';
import { parseSortParam, planPage, toCollection, type Collection, type PageRequest } from '../core/paging.ts';
import { isStaffOrService, ownerScope, type Principal } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import type { EventType } from '../events/events.rules.ts';
import { recordEvent } from '../events/events.store.ts';
import { type DailyPaymentOutcomeRecord, selectDailyPaymentOutcomes } from './daily-payment-outcomes.store.ts';
import {
  assertRefundCurrency,
  cancellationRefundReference,
  type ChargeOutcome,
  decideRefund,
  isInProgress,
  PAYMENT_SORT_KEYS,
  type PaymentStatus,
  type RefundStatus,
} from './payments.rules.ts';
import {
  changePaymentStatus,
  changeRefundStatus,
  findPayment,
  findRefund,
  findRefundById,
  insertPayment,
  insertRefund,
  lockPayment,
  lockReservingPaymentOfOrder,
  restoreRefundedAmount,
  selectPaymentPage,
  selectRefunds,
  type PaymentRecord,
  type RefundRecord,
} from './payments.store.ts';
import { flagPayment } from './in-progress.store.ts';
import type { RefundState } from './processor.ts';

const notFound = (id: number) => new DomainError('PAYMENT_NOT_FOUND', `Payment ${id} does not exist.`);

export interface NewPaymentCommand {
  amount: number;
  currency: string;
  /** Whose payment it is: the order's customer, or the paying user; null for a service client. */
  customerId: number | null;
  orderId: number | null;
  /** Our name for the charge, the processor's idempotency key: the same on every retry of the operation. */
  reference: string;
  paymentMethod: string | null;
  returnUrl: string | null;
}

/** Which processor a payment is made with, and how long its request has before the completer may drive it. */
export interface PaymentContext {
  processor: { name: string; livemode: boolean; needsPaymentMethod: boolean };
  leaseSeconds: number;
}

/** Step of phase 1: the payment recorded as processing; the processor is asked after the commit. */
export function recordNewPayment(
  tx: Queryable,
  principal: Principal,
  context: PaymentContext,
  command: NewPaymentCommand,
): Promise<PaymentRecord> {
  return insertPayment(tx, {
    ...command,
    requestedBy: actorOf(principal),
    clientId: principal.clientId,
    processor: context.processor.name,
    livemode: context.processor.livemode,
    leaseSeconds: context.leaseSeconds,
  });
}

/** The event of each status a payment reaches by its processor's answer. */
const OUTCOME_EVENTS: Partial<Record<PaymentStatus, EventType>> = {
  succeeded: 'payment.succeeded',
  declined: 'payment.declined',
  requires_action: 'payment.requires_action',
  canceled: 'payment.canceled',
};

/** How long the customer has to act on a payment that requires it, and how often the processor is asked meanwhile. */
export interface ActionTimes {
  actionExpirySeconds: number;
  actionCheckSeconds: number;
}

/**
 * Step of phase 3: the payment moves from the status it was read in to the processor's outcome,
 * with its event; undefined when another driver moved it first.
 */
export async function recordPaymentOutcome(
  tx: Queryable,
  payment: PaymentRecord,
  outcome: ChargeOutcome,
  times: ActionTimes,
): Promise<PaymentRecord | undefined> {
  const changed = await changePaymentStatus(tx, payment.id, payment.status, {
    ...outcome,
    ...(outcome.status === 'requires_action'
      ? {
          actionExpiresInSeconds: times.actionExpirySeconds,
          nextAttemptInSeconds: Math.min(times.actionCheckSeconds, times.actionExpirySeconds),
        }
      : {}),
  });
  const event = changed && OUTCOME_EVENTS[changed.status];
  // An outcome is of the payment someone asked for, whoever records it (the request, the completer, a notification).
  if (event) await recordEvent(tx, event, changed, requesterOf(changed));
  return changed;
}

/**
 * Step: the payment needs a person (the processor has not answered about it through the retry
 * schedule): flagged once, with its event, in the caller's transaction.
 */
export async function flagPaymentForAttention(tx: Queryable, paymentId: number, reason: string): Promise<void> {
  if (!(await flagPayment(tx, paymentId, reason))) return;
  const flagged = await findPayment(tx, paymentId, undefined);
  if (flagged) await recordEvent(tx, 'payment.needs_attention', flagged, SYSTEM_ACTOR);
}

/** Refunds are the merchant's decision: staff users and service clients make them. */
export function requireRefunder(principal: Principal): void {
  if (!isStaffOrService(principal)) throw new DomainError('AUTH_FORBIDDEN', 'Refunds are made by staff or service clients.');
}

export interface RefundCommand {
  paymentId: number;
  /** Omitted: all that is left. */
  amount?: number;
  /** The currency the request named for amount, if any: it must be the payment's. */
  currency?: string;
  reference: string;
  /** Who asks for it: the refund's outcome event names them. */
  requestedBy: Actor;
}

/**
 * Phase 1 of a refund by a staff user or service client (the route checks that first:
 * requireRefunder): the payment locked, the refund recorded as pending, its amount taken from
 * what is left to refund. The processor is asked after the commit.
 */
export async function beginRefund(tx: Queryable, command: RefundCommand, leaseSeconds: number): Promise<RefundRecord> {
  const payment = await lockPayment(tx, command.paymentId, undefined);
  if (!payment) throw notFound(command.paymentId);
  assertRefundCurrency(payment, command.currency);
  return (await recordNewRefund(tx, payment, command.amount, command.reference, leaseSeconds, command.requestedBy)).refund;
}

async function recordNewRefund(
  tx: Queryable,
  payment: PaymentRecord,
  amount: number | undefined,
  reference: string,
  leaseSeconds: number,
  requestedBy: Actor,
) {
  const decision = decideRefund(payment, amount);
  return insertRefund(tx, {
    paymentId: payment.id,
    amount: decision.amount,
    paymentStatus: decision.status,
    reference,
    leaseSeconds,
    requestedBy,
  });
}

/**
 * Step: cancelling a paid order gives its money back: whatever is left of its payment is refunded
 * (the order row is already locked by the caller). The refund is recorded as pending in the
 * cancellation's transaction and asked of the processor after it; undefined when nothing is left.
 */
export async function beginOrderRefund(
  tx: Queryable,
  orderId: number,
  leaseSeconds: number,
  requestedBy: Actor,
): Promise<RefundRecord | undefined> {
  const payment = await lockReservingPaymentOfOrder(tx, orderId);
  if (!payment || payment.status === 'refunded' || isInProgress(payment.status)) return undefined;
  // One settled payment per order, refunded in full at most once: the reference is stable across
  // retries of the cancellation and names nothing else.
  return (await recordNewRefund(tx, payment, undefined, cancellationRefundReference(payment.id), leaseSeconds, requestedBy)).refund;
}

/** Step of a refund's phase 3: pending → succeeded or failed (its amount given back), with its event; undefined when another driver did it first. */
export async function recordRefundOutcome(tx: Queryable, refund: RefundRecord, state: RefundState): Promise<RefundRecord | undefined> {
  if (state.status === 'pending') return undefined;
  const changed = await changeRefundStatus(tx, refund.id, {
    status: state.status,
    processorReference: state.processorReference,
    failureReason: state.status === 'failed' ? state.reason : undefined,
  });
  if (!changed) return undefined;
  if (changed.status === 'failed') await restoreRefundedAmount(tx, changed.paymentId, changed.amount);
  await recordEvent(tx, changed.status === 'failed' ? 'refund.failed' : 'refund.succeeded', changed, requesterOf(changed));
  return changed;
}

/** A refund by its id alone, for its own request's phases: scoped by the payment already checked. */
export async function getRefundById(db: Queryable, refundId: number): Promise<RefundRecord> {
  const refund = await findRefundById(db, refundId);
  if (!refund) throw new Error(`refund ${refundId} does not exist`);
  return refund;
}

/** What the reader's API version shows: payments and refunds in other statuses are not there for it. */
export interface ShownStatuses {
  payments?: readonly PaymentStatus[];
  refunds?: readonly RefundStatus[];
}

export async function getPayment(
  db: Queryable,
  principal: Principal,
  paymentId: number,
  shown: ShownStatuses = {},
): Promise<PaymentRecord> {
  const payment = await findPayment(db, paymentId, ownerScope(principal), shown.payments);
  if (!payment) throw notFound(paymentId);
  return payment;
}

export interface ListPaymentsCommand {
  page: PageRequest;
  status?: PaymentStatus;
  orderId?: number;
  needsAttention?: boolean;
  sort?: string;
  shown?: ShownStatuses;
}

export async function listPayments(db: Queryable, principal: Principal, command: ListPaymentsCommand): Promise<Collection<PaymentRecord>> {
  const sort = parseSortParam(command.sort, PAYMENT_SORT_KEYS, [{ field: 'createdAt', descending: false }]);
  const filters = {
    status: command.status,
    orderId: command.orderId,
    needsAttention: command.needsAttention,
    customerId: ownerScope(principal)?.customerId,
    shownStatuses: command.shown?.payments,
  };
  const plan = planPage(command.page, 'payments', filters, sort);
  return toCollection(await selectPaymentPage(db, filters, plan), plan);
}

export async function listRefunds(
  db: Queryable,
  principal: Principal,
  command: { paymentId: number; page: PageRequest; shown?: ShownStatuses },
): Promise<Collection<RefundRecord>> {
  const shown = command.shown ?? {};
  const plan = planPage(command.page, 'refunds', { paymentId: command.paymentId, shown: shown.refunds }, [
    { field: 'id', descending: false },
  ]);
  await getPayment(db, principal, command.paymentId, shown);
  return toCollection(await selectRefunds(db, command.paymentId, shown.refunds, plan), plan);
}

export async function getRefund(
  db: Queryable,
  principal: Principal,
  paymentId: number,
  refundId: number,
  shown: ShownStatuses = {},
): Promise<RefundRecord> {
  await getPayment(db, principal, paymentId, shown);
  const refund = await findRefund(db, paymentId, refundId, shown.refunds);
  if (!refund) throw new DomainError('PAYMENT_REFUND_NOT_FOUND', `Payment ${paymentId} has no refund ${refundId}.`);
  return refund;
}

/** Payments per UTC day of their creation, status, decline code and currency: a customer's own, every one for staff and service clients. */
export function dailyPaymentOutcomes(
  db: Queryable,
  principal: Principal,
  query: ReportQuery,
  now: Date,
): Promise<Report<DailyPaymentOutcomeRecord>> {
  return readReport(query, now, (filter) => selectDailyPaymentOutcomes(db, ownerScope(principal), filter));
}
