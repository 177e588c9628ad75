// Phases 2 and 3 of a refund, as for payments (src/flows/settle-payment.ts): ask the processor with
// no transaction open, then commit its answer once, from the request that made the refund, the
// cancellation that made it, or the completer job.
import type { Queryable } from '../db/db.ts';
import { nextAttempt } from '../payments/payments.rules.ts';
import { recordRefundOutcome } from '../payments/payments.service.ts';
import { flagRefund, recordRefundProcessorReference, scheduleRefundAttempt } from '../payments/in-progress.store.ts';
import { findRefundById, type RefundRecord } from '../payments/payments.store.ts';
import { ProcessorUnavailableError, type RefundState } from '../payments/processor.ts';
import { type PaymentDriver, processorUnavailable } from './settle-payment.ts';

/** Runs in the transaction that commits a refund's outcome, with the refund as changed. */
export type WithinRefundSettlement = (tx: Queryable, refund: RefundRecord) => Promise<void>;

/**
 * Drives a pending refund one step towards its outcome and returns it as it then is. Throws
 * PAYMENT_PROCESSOR_UNAVAILABLE when the processor did not answer.
 */
export async function advanceRefund(driver: PaymentDriver, refundId: number, within?: WithinRefundSettlement): Promise<RefundRecord> {
  const refund = await findRefundById(driver.db, refundId);
  if (!refund) throw new Error(`refund ${refundId} does not exist`);
  if (refund.status !== 'pending') return refund;
  let state: RefundState;
  try {
    state = await askProcessor(driver, refund);
  } catch (error) {
    if (!(error instanceof ProcessorUnavailableError)) throw error;
    const { delaySeconds, exhausted } = nextAttempt(driver.retryScheduleSeconds, refund.attempts + 1);
    await scheduleRefundAttempt(driver.db, refund.id, { delaySeconds, failed: true });
    // Never made again blindly: a refund that took money back twice would cost the merchant.
    if (exhausted) {
      await flagRefund(
        driver.db,
        refund.id,
        `${driver.processor.name} has not answered about this refund through the whole retry schedule.`,
      );
    }
    throw processorUnavailable();
  }
  if (state.status === 'pending') {
    // Decided later by the processor: asked again at the lease's end.
    await recordRefundProcessorReference(driver.db, refund.id, state.processorReference);
    return refund;
  }
  await driver.failpoint?.('payments.before-outcome');
  return commitRefundOutcome(driver, refund, state, within);
}

/**
 * Phase 3: the processor's decision on a pending refund committed, once (from the status it was
 * read in); when another driver committed first, the refund as it committed it.
 */
export async function commitRefundOutcome(
  driver: PaymentDriver,
  refund: RefundRecord,
  state: RefundState,
  within?: WithinRefundSettlement,
): Promise<RefundRecord> {
  const committed = await driver.db.transaction(async (tx) => {
    const changed = await recordRefundOutcome(tx, refund, state);
    if (changed) await within?.(tx, changed);
    return changed;
  });
  if (committed) driver.onDecided?.refund(committed);
  return committed ?? (await findRefundById(driver.db, refund.id)) ?? refund;
}

/** Step: what the processor says of the refund: asked for (idempotent by reference) until it has named it, then looked up. */
function askProcessor({ processor }: PaymentDriver, refund: RefundRecord): Promise<RefundState> {
  const request = {
    reference: refund.reference,
    chargeReference: refund.chargeReference,
    amount: refund.amount,
    currency: refund.currency,
  };
  if (refund.processorReference === null) return processor.refund(request);
  return processor.retrieveRefund({ ...request, processorReference: refund.processorReference });
}
