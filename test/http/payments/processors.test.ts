// Which processor a deployment pays through (ORDERPAY_PAYMENT_PROCESSOR): the simulator unless
// production, where it must be named; a process without the API needs none.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../../src/app.ts';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import type { Db } from '../../../src/db/db.ts';
import { PROCESSOR_REQUIRED } from '../../../src/payments/processors.ts';
import { createTestDatabase } from '../../helpers/db.ts';

describe('ORDERPAY_PAYMENT_PROCESSOR', () => {
  let db: Db;
  let drop: () => Promise<void>;
  before(async () => {
    ({ db, drop } = await createTestDatabase());
  });
  after(() => drop());

  const build = async (env: Record<string, string>) => {
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', ...env }), db, { logger: false });
    await app.close();
  };

  test('production with the API and no processor named: refused with the one line that names the variable', async () => {
    await assert.rejects(
      build({ NODE_ENV: 'production' }),
      (error: unknown) => error instanceof ConfigError && error.message === PROCESSOR_REQUIRED,
    );
  });

  test('production with the simulator named, or without the API: it builds', async () => {
    await build({ NODE_ENV: 'production', ORDERPAY_PAYMENT_PROCESSOR: 'simulator' });
    await build({ NODE_ENV: 'production', ORDERPAY_SERVERS: 'authorization' });
    await build({ NODE_ENV: 'development' });
  });

  test('stripe: needs STRIPE_SECRET_KEY (refused with one line naming it); with it, the app builds and its events path exists', async () => {
    await assert.rejects(
      build({ NODE_ENV: 'production', ORDERPAY_PAYMENT_PROCESSOR: 'stripe' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message === 'ORDERPAY_PAYMENT_PROCESSOR=stripe needs STRIPE_SECRET_KEY (sk_live_… or sk_test_…)',
    );
    const app = await buildApp(
      loadConfig({ LOG_LEVEL: 'silent', NODE_ENV: 'production', ORDERPAY_PAYMENT_PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'sk_test_abc' }),
      db,
      { logger: false },
    );
    try {
      // No STRIPE_WEBHOOK_SECRET: every event is refused, nothing is applied.
      const answer = await app.inject({
        method: 'POST',
        url: '/processors/stripe/events',
        payload: '{"id":"evt_1","type":"payment_intent.succeeded"}',
        headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      });
      assert.equal(answer.statusCode, 400, answer.body);
      assert.equal(answer.json().code, 'PAYMENT_PROCESSOR_EVENT_INVALID');
      assert.equal(answer.json().detail, 'no Stripe webhook signing secret is configured');
    } finally {
      await app.close();
    }
  });
});
