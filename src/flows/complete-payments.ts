// The completer (Brandur Leach's "completer" of unfinished idempotent requests): payments and
// refunds whose outcome no request learned — the request's process died between phases, the
// processor did not answer, the customer has yet to act — are claimed when due and driven on
// (src/flows/settle-payment.ts). Every process runs it; a lease keeps each payment to one of them
// at a time, and a process that dies leaves its payments due again when the lease runs out.
import { claimDuePayments, claimDueRefunds } from '../payments/in-progress.store.ts';
import { advancePayment, type PaymentDriver } from './settle-payment.ts';
import { advanceRefund } from './settle-refund.ts';

/** How many payments and refunds one run claims: each is one or two calls to the processor, made together. */
const BATCH = 20;

export interface CompleterOptions {
  /** How long a claimed payment is this process's before another may drive it (ORDERPAY_IDEMPOTENCY_LOCK_SECONDS). */
  leaseSeconds: number;
  /** A payment or refund that could not be driven on (the processor did not answer; it is due again later). */
  onFailure?(kind: 'payment' | 'refund', id: number, error: unknown): void;
}

export interface PaymentCompleter {
  /** One run: what is due, claimed and driven on; how many were claimed. */
  completeDue(): Promise<number>;
}

export function createPaymentCompleter(driver: PaymentDriver, options: CompleterOptions): PaymentCompleter {
  const drive = (kind: 'payment' | 'refund', id: number, advance: () => Promise<unknown>) =>
    advance().catch((error: unknown) => options.onFailure?.(kind, id, error));
  return {
    async completeDue() {
      const payments = await claimDuePayments(driver.db, BATCH, options.leaseSeconds);
      const refunds = await claimDueRefunds(driver.db, BATCH, options.leaseSeconds);
      await Promise.all([
        ...payments.map((id) => drive('payment', id, () => advancePayment(driver, id))),
        ...refunds.map((id) => drive('refund', id, () => advanceRefund(driver, id))),
      ]);
      return payments.length + refunds.length;
    },
  };
}
