// A processor's event (POST /processors/{name}/events, docs/payments.md "Processor events"): what it
// says of one of our charges or refunds, committed like an answer to our own question. It is the
// quick way an outcome arrives (3-D Secure completed, a payment that was processing); the
// completer asks about anything whose event never comes.
import { findPaymentByProcessorReference, findRefundByProcessorReference } from '../payments/payments.store.ts';
import type { ProcessorEvent } from '../payments/processor.ts';
import { type PaymentDriver, settleFromProcessor } from './settle-payment.ts';
import { commitRefundOutcome } from './settle-refund.ts';

/** What became of an event: applied (a status changed), already known, or about nothing of ours. */
export type EventEffect =
  | { kind: 'changed' | 'unchanged'; paymentId?: number; refundId?: number }
  | { kind: 'unknown'; processorReference: string }
  | { kind: 'ignored' };

/**
 * Applies the event once in effect: an outcome is committed only from the status it was read in,
 * so the same event sent again (processors send at least once), or one that arrives after the
 * completer learned the outcome, finds it committed and changes nothing.
 */
export async function applyProcessorEvent(driver: PaymentDriver, event: ProcessorEvent): Promise<EventEffect> {
  const { db, processor } = driver;
  if (event.charge) {
    const payment = await findPaymentByProcessorReference(db, processor.name, event.charge.processorReference);
    if (!payment) return { kind: 'unknown', processorReference: event.charge.processorReference };
    const settled = await settleFromProcessor(driver, payment, event.charge.state);
    return { kind: settled.version === payment.version ? 'unchanged' : 'changed', paymentId: payment.id };
  }
  if (event.refund) {
    const refund = await findRefundByProcessorReference(db, processor.name, event.refund.processorReference);
    if (!refund) return { kind: 'unknown', processorReference: event.refund.processorReference };
    if (refund.status !== 'pending' || event.refund.state.status === 'pending') return { kind: 'unchanged', refundId: refund.id };
    const settled = await commitRefundOutcome(driver, refund, event.refund.state);
    return { kind: settled.status === refund.status ? 'unchanged' : 'changed', refundId: refund.id };
  }
  return { kind: 'ignored' };
}
