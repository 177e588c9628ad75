// Payments and refunds as the API shows them: the record less what is internal (the row version,
// the processor's reference), and the entity tag of that representation.
import { entityTag } from '../http/etag.ts';
import type { Payment, Refund } from './payments.schemas.ts';
import type { PaymentRecord, RefundRecord } from './payments.store.ts';

export function paymentRepresentation(record: PaymentRecord): Payment {
  return {
    id: record.id,
    status: record.status,
    amount: { value: record.amount, currency: record.currency },
    amountRefunded: { value: record.amountRefunded, currency: record.currency },
    orderId: record.orderId,
    customerId: record.customerId,
    declineCode: record.declineCode,
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
