// POST /payments: a charge (payments), optionally of a pending order that it moves to paid
// (orders), in the transaction the idempotency layer opens. Every refusal comes before the
// charge: nothing after it may refuse a payment the processor took.
import { DomainError } from '../core/errors.ts';
import { ownerScope, type Principal } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { markOrderPaid } from '../orders/orders.service.ts';
import { lockOrder, type OrderRecord } from '../orders/orders.store.ts';
import { checkOrderAmount } from '../payments/payments.rules.ts';
import { chargePayment } from '../payments/payments.service.ts';
import type { PaymentRecord } from '../payments/payments.store.ts';
import type { PaymentProcessor } from '../payments/processor.ts';
import { assertSubjectExists } from '../users/users.service.ts';

export interface PayCommand {
  amount: number;
  currency: string;
  orderId?: number;
  /** The processor's idempotency reference (src/idempotency/). */
  reference: string;
}

/** Step: the order to pay, locked, owned by the caller, pending, and for exactly this amount. */
async function lockPayableOrder(
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
  return order;
}

export async function pay(tx: Queryable, processor: PaymentProcessor, principal: Principal, command: PayCommand): Promise<PaymentRecord> {
  const order = command.orderId === undefined ? undefined : await lockPayableOrder(tx, principal, command.orderId, command);
  // A payment without an order belongs to the paying user, who must (still) exist.
  if (!order) await assertSubjectExists(tx, principal);
  const payment = await chargePayment(tx, processor, principal, {
    amount: command.amount,
    currency: command.currency,
    customerId: order?.customerId ?? (principal.kind === 'user' ? principal.userId : null),
    orderId: order?.id ?? null,
    reference: command.reference,
  });
  if (order && payment.status === 'succeeded') await markOrderPaid(tx, order);
  return payment;
}
