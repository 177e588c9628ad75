// Payment use cases. Writes run inside the transaction the idempotency layer opens, so the
// payment, the order it pays and the stored response commit together (docs/payments.md).
import type { Db, Queryable } from '../db/db.ts';
import { isStaffOrService, ownerScope, type Principal } from '../http/authenticate.ts';
import { parseSortParam, toCollection, type Collection } from '../http/collection.ts';
import { entityTag } from '../http/etag.ts';
import { ProblemError } from '../http/problem.ts';
import { decideTransition, refuseTransition } from '../orders/orders.rules.ts';
import { lockOrder, updateOrderStatus, type OrderRow } from '../orders/orders.store.ts';
import { checkOrderAmount, decideRefund, PAYMENT_SORT_KEYS } from './payments.rules.ts';
import type { CreatePaymentBody, CreateRefundBody, ListPaymentsQuery, ListRefundsQuery, Payment, Refund } from './payments.schemas.ts';
import {
  findPayment, findRefund, insertPayment, insertRefund, lockPayment, lockSettledPaymentOfOrder, selectPaymentPage,
  selectRefunds, toPayment, type PaymentRow,
} from './payments.store.ts';
import { userExists } from '../users/users.store.ts';
import { ProcessorUnavailableError, type ChargeResult, type PaymentProcessor } from './processor.ts';

export interface TaggedPayment {
  payment: Payment;
  etag: string;
}

export const taggedPayment = (row: PaymentRow, apiVersion: number): TaggedPayment => ({
  payment: toPayment(row),
  etag: entityTag('p', row.id, row.version, apiVersion),
});

const notFound = (id: number) => new ProblemError('PAYMENT_NOT_FOUND', `Payment ${id} does not exist.`);

/** Runs a processor call; its failure is a 503 that rolls the payment back and releases the key. */
async function callProcessor<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ProcessorUnavailableError)) throw error;
    throw new ProblemError('PAYMENT_PROCESSOR_UNAVAILABLE', 'The payment processor did not complete the operation; nothing was recorded. Retry the request (with the same Idempotency-Key, if it had one).', {
      headers: { 'retry-after': '1' },
    });
  }
}

/** Step: a payment without an order belongs to the paying user, who must (still) exist. */
async function checkPayerExists(tx: Queryable, principal: Principal): Promise<void> {
  if (principal.kind === 'user' && !(await userExists(tx, principal.userId))) {
    throw new ProblemError('AUTH_SUBJECT_UNKNOWN', `User ${principal.userId} named by the access token does not exist.`);
  }
}

/** Step: the order to pay, locked, owned by the caller, pending, and for exactly this amount. */
async function lockPayableOrder(tx: Queryable, principal: Principal, body: CreatePaymentBody & { orderId: number }): Promise<OrderRow> {
  const order = await lockOrder(tx, body.orderId, ownerScope(principal));
  if (!order || order.deleted) {
    throw new ProblemError('PAYMENT_ORDER_NOT_FOUND', `Order ${body.orderId} does not exist.`, { errors: [{ pointer: '/orderId', detail: 'no such order' }] });
  }
  if (order.status !== 'pending') {
    throw new ProblemError('PAYMENT_ORDER_NOT_PAYABLE', `The order is ${order.status}; only a pending order can be paid.`, { extensions: { currentStatus: order.status } });
  }
  checkOrderAmount(order, body);
  return order;
}

/** Step: a successful payment of an order moves it to paid (the state machine's 'payment' actor). */
async function markOrderPaid(tx: Queryable, order: OrderRow): Promise<void> {
  const decision = decideTransition(order.status, 'paid', ['payment']);
  if (decision.kind !== 'change') throw refuseTransition(order.status, 'paid', decision.kind === 'refused' ? decision.allowed : []);
  await updateOrderStatus(tx, order.id, 'paid');
}

export async function createPayment(
  tx: Queryable,
  processor: PaymentProcessor,
  principal: Principal,
  body: CreatePaymentBody,
  reference: string,
): Promise<PaymentRow> {
  // Every check before the charge: nothing after it may refuse a payment the processor took.
  const order = body.orderId !== undefined ? await lockPayableOrder(tx, principal, { ...body, orderId: body.orderId }) : undefined;
  if (!order) await checkPayerExists(tx, principal);
  const charge: ChargeResult = await callProcessor(() => processor.charge({ reference, amount: body.amount, currency: body.currency }));
  const payment = await insertPayment(tx, {
    customerId: order?.customerId ?? (principal.kind === 'user' ? principal.userId : null),
    clientId: principal.clientId,
    orderId: order?.id ?? null,
    amount: body.amount,
    currency: body.currency,
    status: charge.outcome,
    declineCode: charge.outcome === 'declined' ? charge.declineCode : null,
    processor: processor.name,
    processorReference: charge.processorReference,
  });
  if (order && charge.outcome === 'succeeded') await markOrderPaid(tx, order);
  return payment;
}

/** Refunds are the merchant's decision: staff users and service clients make them. */
export function requireRefunder(principal: Principal): void {
  if (!isStaffOrService(principal)) throw new ProblemError('AUTH_FORBIDDEN', 'Refunds are made by staff or service clients.');
}

/** A refund by a staff user or service client (the route checks that first: requireRefunder). */
export async function refundPayment(
  tx: Queryable,
  processor: PaymentProcessor,
  paymentId: number,
  body: CreateRefundBody,
  reference: string,
): Promise<Refund> {
  const payment = await lockPayment(tx, paymentId, undefined);
  if (!payment) throw notFound(paymentId);
  return (await refundLockedPayment(tx, processor, payment, body.amount, reference)).refund;
}

async function refundLockedPayment(tx: Queryable, processor: PaymentProcessor, payment: PaymentRow, amount: number | undefined, reference: string) {
  const decision = decideRefund(payment, amount);
  const { processorReference } = await callProcessor(() => processor.refund({
    reference, chargeReference: payment.processorReference, amount: decision.amount, currency: payment.currency,
  }));
  return insertRefund(tx, { paymentId: payment.id, amount: decision.amount, status: decision.status, processorReference });
}

/**
 * Cancelling a paid order gives its money back: whatever is left of its payment is refunded in
 * the cancellation's transaction (the order row is already locked by the caller).
 */
export async function refundOrderPayment(tx: Queryable, processor: PaymentProcessor, orderId: number): Promise<void> {
  const payment = await lockSettledPaymentOfOrder(tx, orderId);
  if (!payment || payment.status === 'refunded') return;
  // One settled payment per order, refunded in full at most once: the reference is stable across
  // retries of the cancellation and names nothing else.
  await refundLockedPayment(tx, processor, payment, undefined, `cancel_payment_${payment.id}`);
}

export async function getPayment(db: Db, principal: Principal, id: number, apiVersion: number): Promise<TaggedPayment> {
  const row = await findPayment(db, id, ownerScope(principal));
  if (!row) throw notFound(id);
  return taggedPayment(row, apiVersion);
}

export async function listPayments(db: Db, principal: Principal, query: ListPaymentsQuery): Promise<Collection<Payment>> {
  const sort = parseSortParam(query.sort, PAYMENT_SORT_KEYS, [{ field: 'createdAt', descending: false }]);
  const filters = { status: query.status, orderId: query.orderId, customerId: ownerScope(principal)?.customerId };
  const page = { page: query.page ?? 1, pageSize: query.pageSize ?? 20 };
  const { rows, total } = await selectPaymentPage(db, filters, sort, page);
  return toCollection(rows.map(toPayment), total, page);
}

export async function listRefunds(db: Db, principal: Principal, paymentId: number, query: ListRefundsQuery): Promise<Collection<Refund>> {
  if (!(await findPayment(db, paymentId, ownerScope(principal)))) throw notFound(paymentId);
  const page = { page: query.page ?? 1, pageSize: query.pageSize ?? 20 };
  const { refunds, total } = await selectRefunds(db, paymentId, page);
  return toCollection(refunds, total, page);
}

export async function getRefund(db: Db, principal: Principal, paymentId: number, refundId: number): Promise<Refund> {
  if (!(await findPayment(db, paymentId, ownerScope(principal)))) throw notFound(paymentId);
  const refund = await findRefund(db, paymentId, refundId);
  if (!refund) throw new ProblemError('PAYMENT_REFUND_NOT_FOUND', `Payment ${paymentId} has no refund ${refundId}.`);
  return refund;
}
