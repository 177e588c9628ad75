// What an order's payment in progress forbids: while the processor has not said whether the money
// was taken, the order is neither cancelled nor deleted (its payment could still pay it). The
// customer or staff retry once the outcome is known, seconds later (or when a customer's action
// expires: docs/payments.md).
import { DomainError } from '../core/errors.ts';
import type { Queryable } from '../db/db.ts';
import { isInProgress } from '../payments/payments.rules.ts';
import { lockReservingPaymentOfOrder } from '../payments/payments.store.ts';

/** Step, under the order's row lock (payments of the order queue on it): refuses a change while a payment of it is in progress. */
export async function assertNoPaymentInProgress(tx: Queryable, orderId: number, change: string): Promise<void> {
  const payment = await lockReservingPaymentOfOrder(tx, orderId);
  if (!payment || !isInProgress(payment.status)) return;
  throw new DomainError(
    'ORDER_PAYMENT_IN_PROGRESS',
    `A payment of order ${orderId} is in progress; the order cannot be ${change} until its outcome is known. Retry shortly.`,
    { extensions: { paymentStatus: payment.status } },
  );
}
