// Payment rules, pure: statuses, currencies and limits, what may be paid and refunded.
import { DomainError } from '../core/errors.ts';

export const PAYMENT_STATUSES = ['succeeded', 'declined', 'partially_refunded', 'refunded'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** Largest amount of one payment, in minor units (999,999.99 in a two-decimal currency). */
export const MAX_PAYMENT_AMOUNT = 99_999_999;

export const PAYMENT_SORT_KEYS = ['createdAt', 'id'] as const;
export type PaymentSortKey = (typeof PAYMENT_SORT_KEYS)[number];

export interface PaymentFilters {
  status?: PaymentStatus;
  orderId?: number;
  customerId?: number;
}

/** A payment of an order is for exactly its total, in its currency. */
export function checkOrderAmount(order: { total: number; currency: string }, payment: { amount: number; currency: string }): void {
  if (order.total === payment.amount && order.currency === payment.currency) return;
  throw new DomainError(
    'PAYMENT_AMOUNT_MISMATCH',
    `The order's total is ${order.total} ${order.currency}; a payment of it must be for exactly that.`,
    {
      extensions: { expectedAmount: order.total, expectedCurrency: order.currency },
      errors: [
        ...(order.total === payment.amount ? [] : [{ pointer: '/amount/value', detail: `must equal the order total ${order.total}` }]),
        ...(order.currency === payment.currency
          ? []
          : [{ pointer: '/amount/currency', detail: `must equal the order currency ${order.currency}` }]),
      ],
    },
  );
}

export interface RefundDecision {
  amount: number;
  status: PaymentStatus;
  amountRefunded: number;
}

/** A refund names the payment's currency, when it names one (v1 bodies do not). */
export function assertRefundCurrency(payment: { currency: string }, currency: string | undefined): void {
  if (currency === undefined || currency === payment.currency) return;
  throw new DomainError(
    'PAYMENT_REFUND_CURRENCY_MISMATCH',
    `The payment is in ${payment.currency}; a refund of it cannot be in ${currency}.`,
    {
      errors: [{ pointer: '/amount/currency', detail: `must be the payment's currency ${payment.currency}` }],
    },
  );
}

/**
 * A refund of `requested` (or, when absent, of all that is left): what is refunded and the
 * payment's status after it. Refunds never add up to more than the payment.
 */
export function decideRefund(
  payment: { status: PaymentStatus; amount: number; amountRefunded: number },
  requested: number | undefined,
): RefundDecision {
  if (payment.status !== 'succeeded' && payment.status !== 'partially_refunded') {
    throw new DomainError(
      'PAYMENT_NOT_REFUNDABLE',
      `The payment is ${payment.status}; only succeeded or partially refunded payments can be refunded.`,
      {
        extensions: { currentStatus: payment.status },
      },
    );
  }
  const refundable = payment.amount - payment.amountRefunded;
  const amount = requested ?? refundable;
  if (amount > refundable) {
    throw new DomainError(
      'PAYMENT_REFUND_EXCEEDS_BALANCE',
      `Only ${refundable} of the payment's ${payment.amount} can still be refunded.`,
      {
        extensions: { refundableAmount: refundable },
        errors: [{ pointer: '/amount/value', detail: `must be at most ${refundable}` }],
      },
    );
  }
  const amountRefunded = payment.amountRefunded + amount;
  return { amount, amountRefunded, status: amountRefunded === payment.amount ? 'refunded' : 'partially_refunded' };
}
