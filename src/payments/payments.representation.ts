// Payments and refunds as the API shows them (the latest version: src/http/versions/ gives the
// older ones): the record less what is internal (the row version, our reference, the processor's
// ids, the completer's schedule), and the entity tag of that representation.
import { entityTag } from '../http/etag.ts';
import type { Payment, Refund } from './payments.schemas.ts';
import type { PaymentRecord, RefundRecord } from './payments.store.ts';

/** What the customer must do, naming the processor whose library handles it. */
function nextActionOf(record: PaymentRecord): Payment['nextAction'] {
  const action = record.nextAction;
  if (!action) return null;
  // Member by member, in the schema's order: the stored JSON (jsonb) keeps its keys in its own.
  if (action.type === 'redirect_to_url') return { type: action.type, url: action.url };
  return { type: action.type, processor: record.processor, clientSecret: action.clientSecret };
}

export function paymentRepresentation(record: PaymentRecord): Payment {
  return {
    id: record.id,
    status: record.status,
    amount: { value: record.amount, currency: record.currency },
    amountRefunded: { value: record.amountRefunded, currency: record.currency },
    orderId: record.orderId,
    customerId: record.customerId,
    declineCode: record.declineCode,
    cancellationReason: record.cancellationReason,
    nextAction: nextActionOf(record),
    actionExpiresAt: record.actionExpiresAt,
    paymentMethod: record.paymentMethod,
    returnUrl: record.returnUrl,
    livemode: record.livemode,
    needsAttention:
      record.needsAttentionSince === null ? null : { since: record.needsAttentionSince, reason: record.attentionReason ?? '' },
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function refundRepresentation(record: RefundRecord): Refund {
  return {
    id: record.id,
    paymentId: record.paymentId,
    status: record.status,
    amount: { value: record.amount, currency: record.currency },
    failureReason: record.failureReason,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function paymentEtag(record: Pick<PaymentRecord, 'id' | 'version'>, apiVersion: number): string {
  return entityTag('payment', record.id, record.version, apiVersion);
}

/**
 * A refund's tag: revision 1 once decided (it never changes after), 0 while pending; a version
 * that shows only decided refunds only ever sees 1.
 */
export function refundEtag(record: Pick<RefundRecord, 'id' | 'status'>, apiVersion: number): string {
  return entityTag('refund', record.id, record.status === 'pending' ? 0 : 1, apiVersion);
}
