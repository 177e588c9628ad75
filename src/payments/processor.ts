// The payment processor behind orderpay: an interface a real card processor's client implements,
// and the built-in deterministic simulator with documented test amounts (docs/payments.md).
import { createHash } from 'node:crypto';

export const DECLINE_CODES = ['card_declined', 'insufficient_funds', 'expired_card'] as const;
export type DeclineCode = (typeof DECLINE_CODES)[number];

export interface ChargeRequest {
  /**
   * Stable across retries of one logical payment (it survives a crash of this process): pass it
   * on as the processor's own idempotency key, so a retried charge is never taken twice.
   */
  reference: string;
  amount: number;
  currency: string;
}

export type ChargeResult =
  | { outcome: 'succeeded'; processorReference: string }
  | { outcome: 'declined'; declineCode: DeclineCode; processorReference: string };

export interface RefundRequest {
  reference: string;
  /** The processorReference of the charge being refunded. */
  chargeReference: string;
  amount: number;
  currency: string;
}

export interface PaymentProcessor {
  readonly name: string;
  charge(request: ChargeRequest): Promise<ChargeResult>;
  refund(request: RefundRequest): Promise<{ processorReference: string }>;
}

/** Thrown when the processor cannot be reached or fails: nothing was charged, a retry may be. */
export class ProcessorUnavailableError extends Error {
  constructor(message = 'payment processor unavailable') {
    super(message);
    this.name = 'ProcessorUnavailableError';
  }
}

/**
 * How long a processor call may take by default. The call runs inside the payment's transaction,
 * so this stays below the database's idle-in-transaction timeout and the idempotency lock; a call
 * cut off here is retried under the same reference, which the processor deduplicates.
 */
const PROCESSOR_TIMEOUT_MS = 10_000;

/** The processor, with every call that outlasts timeoutMs failing as unavailable. */
export function withProcessorTimeout(processor: PaymentProcessor, timeoutMs = PROCESSOR_TIMEOUT_MS): PaymentProcessor {
  async function bounded<T>(call: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new ProcessorUnavailableError(`payment processor did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([call(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
  return {
    name: processor.name,
    charge: (request) => bounded(() => processor.charge(request)),
    refund: (request) => bounded(() => processor.refund(request)),
  };
}

/** Amounts (minor units) with a fixed outcome in the simulator, like a card network's test cards. */
export const TEST_AMOUNTS = {
  40002: 'card_declined',
  40051: 'insufficient_funds',
  40054: 'expired_card',
  40091: 'processor_unavailable',
} as const satisfies Record<number, DeclineCode | 'processor_unavailable'>;

const simulatedReference = (kind: string, reference: string) =>
  `sim_${kind}_${createHash('sha256').update(reference).digest('base64url').slice(0, 24)}`;

/** The same request always gets the same answer: outcomes depend on the amount only. */
export function createSimulatedProcessor(): PaymentProcessor {
  return {
    name: 'simulator',
    async charge({ reference, amount }) {
      const outcome = TEST_AMOUNTS[amount as keyof typeof TEST_AMOUNTS];
      if (outcome === 'processor_unavailable') throw new ProcessorUnavailableError();
      const processorReference = simulatedReference('ch', reference);
      return outcome ? { outcome: 'declined', declineCode: outcome, processorReference } : { outcome: 'succeeded', processorReference };
    },
    async refund({ reference }) {
      return { processorReference: simulatedReference('re', reference) };
    },
  };
}
