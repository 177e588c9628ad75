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
});
