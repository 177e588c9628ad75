// POST /payments, phase 1: a payment (payments), optionally of a pending order that it reserves
// (orders), recorded as processing in the transaction the idempotency layer opens. Every refusal
// comes here, before the processor is asked: nothing after it may refuse a payment the processor
// took. Phases 2 and 3 are src/flows/settle-payment.ts.
import { DomainError } from '../core/errors.ts';
import { ownerScope, type Principal } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { lockOrder, type OrderRecord } from '../orders/orders.store.ts';
import { checkOrderAmount, isInProgress } from '../payments/payments.rules.ts';
import { type PaymentContext, recordNewPayment } from '../payments/payments.service.ts';
import { lockReservingPaymentOfOrder, type PaymentRecord } from '../payments/payments.store.ts';
import { forExistingSubject } from '../users/users.service.ts';

export interface PayCommand {
  amount: number;
  currency: string;
  orderId?: number;
  /** The processor's idempotency reference (src/idempotency/). */
  reference: string;
  paymentMethod?: string;
  returnUrl?: string;
  /** Whether the request's version shows a payment waiting for the customer (requires_action). */
  customerMayAct: boolean;
}

/** 409 while another payment of the order is in progress: its outcome decides whether the order is paid. */
function orderPaymentInProgress(orderId: number, payment: PaymentRecord): DomainError {
  return new DomainError(
    'PAYMENT_ORDER_PAYMENT_IN_PROGRESS',
    `A payment of order ${orderId} is in progress; only if it does not succeed can the order be paid again.`,
    { extensions: { paymentStatus: payment.status } },
  );
}

/**
 * Step: the order to pay, locked, owned by the caller, pending, for exactly this amount, and with
 * no other payment in progress (payments_order_reserved_key backs the check: payments of one order
 * queue on its row lock, so the check sees every one of them).
 */
async function reservePayableOrder(
  tx: Queryable,
  principal: Principal,
  orderId: number,
  payment: { amount: number; currency: string },
): Promise<OrderRecord> {
  const order = await lockOrder(tx, orderId, ownerScope(principal));
  if (!order || order.deleted) {
    throw new DomainError('PAYMENT_ORDER_NOT_FOUND', `Order ${orderId} does not exist.`, {
      errors: [{ pointer: '/orderId', detail: 'no such order' }],
    });
  }
  if (order.status !== 'pending') {
    throw new DomainError('PAYMENT_ORDER_NOT_PAYABLE', `The order is ${order.status}; only a pending order can be paid.`, {
      extensions: { currentStatus: order.status },
    });
  }
  checkOrderAmount(order, payment);
  const reserving = await lockReservingPaymentOfOrder(tx, order.id);
  if (reserving && isInProgress(reserving.status)) throw orderPaymentInProgress(order.id, reserving);
  return order;
}

/**
 * Step: a processor that charges a payment method needs one named, or a customer who can give it
 * (Stripe's Payment Element, from the client secret in nextAction); a version that cannot show a
 * payment waiting for the customer would leave it waiting unseen until it expires.
 */
function checkPaymentMethod(context: PaymentContext, command: PayCommand): void {
  if (!context.processor.needsPaymentMethod || command.paymentMethod !== undefined || command.customerMayAct) return;
  throw new DomainError(
    'PAYMENT_METHOD_REQUIRED',
    `The payment processor (${context.processor.name}) charges a payment method: name one in paymentMethod, with API version 3 or later.`,
    { errors: [{ pointer: '/paymentMethod', detail: 'required by the payment processor' }] },
  );
}

/** Phase 1: the order reserved, the payment recorded as processing. */
export async function beginPayment(
  tx: Queryable,
  principal: Principal,
  context: PaymentContext,
  command: PayCommand,
): Promise<PaymentRecord> {
  checkPaymentMethod(context, command);
  const order = command.orderId === undefined ? undefined : await reservePayableOrder(tx, principal, command.orderId, command);
  // A payment without an order belongs to the paying user, who must (still) exist.
  return forExistingSubject(principal, () =>
    recordNewPayment(tx, principal, context, {
      amount: command.amount,
      currency: command.currency,
      customerId: order?.customerId ?? (principal.kind === 'user' ? principal.userId : null),
      orderId: order?.id ?? null,
      reference: command.reference,
      paymentMethod: command.paymentMethod ?? null,
      returnUrl: command.returnUrl ?? null,
    }),
  );
}
