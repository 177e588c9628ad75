// Payments and refunds as the API shows them: the record less what is internal (the row version,
// the processor's reference), and the entity tag of that representation.
import { entityTag } from '../http/etag.ts';
import type { Payment, Refund } from './payments.schemas.ts';
import type { PaymentRecord, RefundRecord } from './payments.store.ts';
import { DECLINE_CODES, type DeclineCode } from './processor.ts';

/**
 * What a declined payment says of why, in the closed list of codes: a processor's own codes, and a
 * payment canceled before any money moved (its customer never completed an action; the processor
 * never answered), are card_declined.
 */
function declineCodeOf(record: PaymentRecord): DeclineCode | null {
  if (record.status === 'canceled') return 'card_declined';
  if (record.declineCode === null) return null;
  return (DECLINE_CODES as readonly string[]).includes(record.declineCode) ? (record.declineCode as DeclineCode) : 'card_declined';
}

export function paymentRepresentation(record: PaymentRecord): Payment {
  return {
    id: record.id,
    // No money moved: the payment is over, as a declined one is.
    status: record.status === 'canceled' ? 'declined' : (record.status as Payment['status']),
    amount: { value: record.amount, currency: record.currency },
    amountRefunded: { value: record.amountRefunded, currency: record.currency },
    orderId: record.orderId,
    customerId: record.customerId,
    declineCode: declineCodeOf(record),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function refundRepresentation(record: RefundRecord): Refund {
  return {
    id: record.id,
    paymentId: record.paymentId,
    amount: { value: record.amount, currency: record.currency },
    createdAt: record.createdAt,
  };
}

export function paymentEtag(record: Pick<PaymentRecord, 'id' | 'version'>, apiVersion: number): string {
  return entityTag('payment', record.id, record.version, apiVersion);
}

/** A refund never changes once made: its one revision is 1. */
export function refundEtag(record: Pick<RefundRecord, 'id'>, apiVersion: number): string {
  return entityTag('refund', record.id, 1, apiVersion);
}
