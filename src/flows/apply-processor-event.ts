// A processor's event (POST /processors/{name}/events, docs/payments.md "Processor events"): what it
// says of one of our charges or refunds, committed like an answer to our own question. It is the
// quick way an outcome arrives (3-D Secure completed, a payment that was processing); the
// completer asks about anything whose event never comes.
import type { Queryable } from '../db/db.ts';
import { findPaymentByProcessorReference, findRefundByProcessorReference } from '../payments/payments.store.ts';
import type { ProcessorEvent } from '../payments/processor.ts';
import { type PaymentDriver, settleFromProcessor } from './settle-payment.ts';
import { commitRefundOutcome } from './settle-refund.ts';

/** What became of an event: a status changed (in a transaction `within` ran in), or nothing did. */
export type EventEffect =
  | { kind: 'changed' | 'unchanged'; paymentId?: number; refundId?: number }
  | { kind: 'unknown'; processorReference: string }
  | { kind: 'ignored' };

/**
 * Applies the event. An outcome is committed only from the status it was read in, so an event that
 * arrives after the completer learned the outcome, or out of order, finds it moved and changes
 * nothing. `within` runs in the transaction that commits a change, when there is one (the caller
 * stores its answer there: the event applied and its answer commit together).
 */
export async function applyProcessorEvent(
  driver: PaymentDriver,
  event: ProcessorEvent,
  within: (tx: Queryable) => Promise<void>,
): Promise<EventEffect> {
  const { db, processor } = driver;
  if (event.charge) {
    const payment = await findPaymentByProcessorReference(db, processor.name, event.charge.processorReference);
    if (!payment) return { kind: 'unknown', processorReference: event.charge.processorReference };
    let changed = false;
    await settleFromProcessor(driver, payment, event.charge.state, async (tx) => {
      await within(tx);
      changed = true;
    });
    return { kind: changed ? 'changed' : 'unchanged', paymentId: payment.id };
  }
  if (event.refund) {
    const refund = await findRefundByProcessorReference(db, processor.name, event.refund.processorReference);
    if (!refund) return { kind: 'unknown', processorReference: event.refund.processorReference };
    if (refund.status !== 'pending' || event.refund.state.status === 'pending') return { kind: 'unchanged', refundId: refund.id };
    let changed = false;
    await commitRefundOutcome(driver, refund, event.refund.state, async (tx) => {
      await within(tx);
      changed = true;
    });
    return { kind: changed ? 'changed' : 'unchanged', refundId: refund.id };
  }
  return { kind: 'ignored' };
}
