// The payment processor a deployment runs, as its configuration names it (docs/payments.md,
// "Processors"). buildApp(config, db, { paymentProcessor }) takes any other implementation.
import { ConfigError, type PaymentsConfig } from '../config.ts';
import type { PaymentProcessor } from './processor.ts';
import { createSimulatedProcessor } from './simulator.ts';
import { createStripeProcessor } from './stripe.ts';

/** Production never takes payments with a processor it was not told to use. */
export const PROCESSOR_REQUIRED =
  'ORDERPAY_PAYMENT_PROCESSOR must name the payment processor when NODE_ENV=production (simulator for a deployment that moves no money; its payments say livemode: false)';

export function createConfiguredProcessor(config: PaymentsConfig): PaymentProcessor {
  switch (config.processor) {
    case 'simulator':
      return createSimulatedProcessor({ latencyMs: config.simulatorLatencyMs });
    case 'stripe': {
      const { secretKey, webhookSecret, apiBase } = config.stripe;
      if (!secretKey) throw new ConfigError('ORDERPAY_PAYMENT_PROCESSOR=stripe needs STRIPE_SECRET_KEY (sk_live_… or sk_test_…)');
      return createStripeProcessor({ secretKey, webhookSecret, apiBase });
    }
    case undefined:
      throw new ConfigError(PROCESSOR_REQUIRED);
  }
}
