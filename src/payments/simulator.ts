// The built-in processor: a deterministic simulator with documented test amounts, like a card
// network's test cards (docs/payments.md, "Test amounts"). It keeps nothing: the same charge always
// gets the same answer, from any process. It moves no money, so everything it touches is livemode false.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ChargeRequest, type ChargeState, type DeclineCode, type PaymentProcessor, ProcessorUnavailableError } from './processor.ts';

/** Amounts (minor units) with a fixed outcome in the simulator. */
export const TEST_AMOUNTS = {
  40002: 'card_declined',
  40051: 'insufficient_funds',
  40054: 'expired_card',
  40091: 'processor_unavailable',
} as const satisfies Record<number, DeclineCode | 'processor_unavailable'>;

const simulatedReference = (kind: string, reference: string) =>
  `sim_${kind}_${createHash('sha256').update(reference).digest('base64url').slice(0, 24)}`;

/** The outcome of confirming a charge: by its amount alone. */
function decideCharge({ amount }: ChargeRequest): ChargeState {
  const outcome = TEST_AMOUNTS[amount as keyof typeof TEST_AMOUNTS];
  if (outcome === 'processor_unavailable') throw new ProcessorUnavailableError();
  return outcome ? { status: 'declined', declineCode: outcome } : { status: 'succeeded' };
}

export interface SimulatorOptions {
  /** How long each call to it takes but naming a charge (ORDERPAY_SIMULATOR_LATENCY_MS): a real processor's answer is hundreds of milliseconds away. */
  latencyMs?: number;
}

export function createSimulatedProcessor(options: SimulatorOptions = {}): PaymentProcessor {
  const latencyMs = options.latencyMs ?? 0;
  /** Every call answers after the configured latency. */
  const answer = async <T>(decide: () => T): Promise<T> => {
    if (latencyMs > 0) await sleep(latencyMs);
    return decide();
  };
  return {
    name: 'simulator',
    livemode: false,
    // It decides by the amount alone.
    needsPaymentMethod: false,
    // It keeps nothing, and answers the same reference the same way forever.
    idempotencyWindowSeconds: Number.POSITIVE_INFINITY,
    // Like a processor with a single authorisation call (Adyen's /payments), it names the charge
    // itself, from our reference, with no call: only confirming it is the round trip that takes time.
    // Down (40091), it cannot even do that.
    async createCharge(charge) {
      if (TEST_AMOUNTS[charge.amount as keyof typeof TEST_AMOUNTS] === 'processor_unavailable') throw new ProcessorUnavailableError();
      return { processorReference: simulatedReference('ch', charge.reference) };
    },
    confirmCharge: (charge) => answer(() => decideCharge(charge)),
    retrieveCharge: (charge) => answer(() => decideCharge(charge)),
    cancelCharge: (charge) => answer(() => decideCharge(charge)),
    refund: (request) => answer(() => ({ status: 'succeeded', processorReference: simulatedReference('re', request.reference) })),
    retrieveRefund: (request) => answer(() => ({ status: 'succeeded', processorReference: request.processorReference })),
  };
}
