// Payment rules, pure: statuses, currencies and limits, what may be paid and refunded, and what a
// processor's answer does to a payment or refund in progress.
import { DomainError } from '../core/errors.ts';
import type { ChargeState, NextAction } from './processor.ts';

export const PAYMENT_STATUSES = [
  'processing',
  'requires_action',
  'succeeded',
  'declined',
  'canceled',
  'partially_refunded',
  'refunded',
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** Statuses whose outcome is not known yet: the payment reserves its order, the completer drives it. */
export const IN_PROGRESS_STATUSES = ['processing', 'requires_action'] as const satisfies readonly PaymentStatus[];
export type InProgressStatus = (typeof IN_PROGRESS_STATUSES)[number];

export function isInProgress(status: PaymentStatus): status is InProgressStatus {
  return (IN_PROGRESS_STATUSES as readonly PaymentStatus[]).includes(status);
}

export const REFUND_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/** What a processor's answer makes of a payment in progress. */
export type ChargeOutcome =
  | { status: 'processing' }
  | { status: 'requires_action'; nextAction: NextAction }
  | { status: 'succeeded' }
  | { status: 'declined'; declineCode: string }
  | { status: 'canceled'; cancellationReason: CancellationReason };

/** Why a payment was canceled before any money moved. */
export const CANCELLATION_REASONS = ['action_expired', 'processor_unavailable'] as const;
export type CancellationReason = (typeof CANCELLATION_REASONS)[number];

/**
 * The processor's state of a charge as the payment's next status. A charge the processor knows but
 * was never confirmed is still processing (the caller confirms it); a cancel it reports was ours,
 * made when the customer's action expired.
 */
export function chargeOutcome(state: ChargeState): ChargeOutcome {
  switch (state.status) {
    case 'created':
    case 'processing':
      return { status: 'processing' };
    case 'canceled':
      return { status: 'canceled', cancellationReason: 'action_expired' };
    default:
      return state;
  }
}

/**
 * When to ask the processor again after `failures` calls in a row found it unavailable: the
 * schedule's step (ORDERPAY_PAYMENTS_RETRY_SCHEDULE, seconds), the last step again once it has run
 * out, which is when the payment needs a person to look at it.
 */
export function nextAttempt(schedule: readonly number[], failures: number): { delaySeconds: number; exhausted: boolean } {
  const step = Math.max(failures - 1, 0);
  return { delaySeconds: schedule[Math.min(step, schedule.length - 1)] ?? 60, exhausted: step >= schedule.length };
}

/** Largest amount of one payment, in minor units (999,999.99 in a two-decimal currency). */
export const MAX_PAYMENT_AMOUNT = 99_999_999;

export const PAYMENT_SORT_KEYS = ['createdAt', 'id'] as const;
export type PaymentSortKey = (typeof PAYMENT_SORT_KEYS)[number];

export interface PaymentFilters {
  status?: PaymentStatus;
  orderId?: number;
  customerId?: number;
  needsAttention?: boolean;
  /** The statuses the reader's API version shows; undefined: every status. */
  shownStatuses?: readonly PaymentStatus[];
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

/** The reference of the refund that cancelling a paid order makes: stable across retries of the cancellation. */
export function cancellationRefundReference(paymentId: number): string {
  return `cancel_payment_${paymentId}`;
}

/** How a refund came about, by its reference: a refund asked for, or the refund of a cancelled order. */
export function refundCause(reference: string): 'refund' | 'cancellation' {
  return reference.startsWith('cancel_payment_') ? 'cancellation' : 'refund';
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
