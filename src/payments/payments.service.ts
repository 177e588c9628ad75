// Payment use cases and the payment steps of flows (src/flows/pay.ts). Writes run inside the
// transaction their caller opens (the idempotency layer's), so the payment, what it changes and
// the stored response commit together (docs/payments.md). Callers get records, never wire shapes.
import { DomainError } from '../core/errors.ts';
import { parseSortParam, planPage, toCollection, type Collection, type PageRequest } from '../core/paging.ts';
import { isStaffOrService, ownerScope, type Principal } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { recordEvent } from '../events/events.store.ts';
import { assertRefundCurrency, decideRefund, PAYMENT_SORT_KEYS, type PaymentStatus } from './payments.rules.ts';
import {
  findPayment,
  findRefund,
  insertPayment,
  insertRefund,
  lockPayment,
  lockSettledPaymentOfOrder,
  selectPaymentPage,
  selectRefunds,
  type PaymentRecord,
  type RefundRecord,
} from './payments.store.ts';
import { ProcessorUnavailableError, type PaymentProcessor } from './processor.ts';

const notFound = (id: number) => new DomainError('PAYMENT_NOT_FOUND', `Payment ${id} does not exist.`);

/** Runs a processor call; its failure is a 503 that rolls the payment back and releases the key. */
async function callProcessor<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ProcessorUnavailableError)) throw error;
    throw new DomainError(
      'PAYMENT_PROCESSOR_UNAVAILABLE',
      'The payment processor did not complete the operation; nothing was recorded. Retry the request (with the same Idempotency-Key, if it had one).',
    );
  }
}

export interface ChargeCommand {
  amount: number;
  currency: string;
  /** Whose payment it is: the order's customer, or the paying user; null for a service client. */
  customerId: number | null;
  orderId: number | null;
  /** The processor's idempotency reference, the same on every retry of the operation. */
  reference: string;
}

/** Step: charges through the processor and records the payment, succeeded or declined. */
export async function chargePayment(
  tx: Queryable,
  processor: PaymentProcessor,
  principal: Principal,
  command: ChargeCommand,
): Promise<PaymentRecord> {
  const charge = await callProcessor(() =>
    processor.charge({ reference: command.reference, amount: command.amount, currency: command.currency }),
  );
  const payment = await insertPayment(tx, {
    customerId: command.customerId,
    clientId: principal.clientId,
    orderId: command.orderId,
    amount: command.amount,
    currency: command.currency,
    status: charge.outcome,
    declineCode: charge.outcome === 'declined' ? charge.declineCode : null,
    processor: processor.name,
    processorReference: charge.processorReference,
  });
  await recordEvent(tx, payment.status === 'declined' ? 'payment.declined' : 'payment.succeeded', payment);
  return payment;
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
}

/** A refund by a staff user or service client (the route checks that first: requireRefunder). */
export async function refundPayment(tx: Queryable, processor: PaymentProcessor, command: RefundCommand): Promise<RefundRecord> {
  const payment = await lockPayment(tx, command.paymentId, undefined);
  if (!payment) throw notFound(command.paymentId);
  assertRefundCurrency(payment, command.currency);
  return (await refundLockedPayment(tx, processor, payment, command.amount, command.reference)).refund;
}

async function refundLockedPayment(
  tx: Queryable,
  processor: PaymentProcessor,
  payment: PaymentRecord,
  amount: number | undefined,
  reference: string,
) {
  const decision = decideRefund(payment, amount);
  const { processorReference } = await callProcessor(() =>
    processor.refund({ reference, chargeReference: payment.processorReference, amount: decision.amount, currency: payment.currency }),
  );
  const refunded = await insertRefund(tx, { paymentId: payment.id, amount: decision.amount, status: decision.status, processorReference });
  await recordEvent(tx, 'refund.succeeded', refunded.refund);
  return refunded;
}

/**
 * Step: cancelling a paid order gives its money back: whatever is left of its payment is refunded
 * in the cancellation's transaction (the order row is already locked by the caller). True when
 * something was refunded.
 */
export async function refundOrderPayment(tx: Queryable, processor: PaymentProcessor, orderId: number): Promise<boolean> {
  const payment = await lockSettledPaymentOfOrder(tx, orderId);
  if (!payment || payment.status === 'refunded') return false;
  // One settled payment per order, refunded in full at most once: the reference is stable across
  // retries of the cancellation and names nothing else.
  await refundLockedPayment(tx, processor, payment, undefined, `cancel_payment_${payment.id}`);
  return true;
}

export async function getPayment(db: Queryable, principal: Principal, paymentId: number): Promise<PaymentRecord> {
  const payment = await findPayment(db, paymentId, ownerScope(principal));
  if (!payment) throw notFound(paymentId);
  return payment;
}

export interface ListPaymentsCommand {
  page: PageRequest;
  status?: PaymentStatus;
  orderId?: number;
  sort?: string;
}

export async function listPayments(db: Queryable, principal: Principal, command: ListPaymentsCommand): Promise<Collection<PaymentRecord>> {
  const sort = parseSortParam(command.sort, PAYMENT_SORT_KEYS, [{ field: 'createdAt', descending: false }]);
  const filters = { status: command.status, orderId: command.orderId, customerId: ownerScope(principal)?.customerId };
  const plan = planPage(command.page, 'payments', filters, sort);
  return toCollection(await selectPaymentPage(db, filters, plan), plan);
}

export async function listRefunds(
  db: Queryable,
  principal: Principal,
  command: { paymentId: number; page: PageRequest },
): Promise<Collection<RefundRecord>> {
  const plan = planPage(command.page, 'refunds', { paymentId: command.paymentId }, [{ field: 'id', descending: false }]);
  if (!(await findPayment(db, command.paymentId, ownerScope(principal)))) throw notFound(command.paymentId);
  return toCollection(await selectRefunds(db, command.paymentId, plan), plan);
}

export async function getRefund(db: Queryable, principal: Principal, paymentId: number, refundId: number): Promise<RefundRecord> {
  if (!(await findPayment(db, paymentId, ownerScope(principal)))) throw notFound(paymentId);
  const refund = await findRefund(db, paymentId, refundId);
  if (!refund) throw new DomainError('PAYMENT_REFUND_NOT_FOUND', `Payment ${paymentId} has no refund ${refundId}.`);
  return refund;
}
