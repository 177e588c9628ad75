// A processor that does not answer, and a database connection lost while the processor is asked:
// the client gets a 503 problem, nothing is recorded, the claim is released, and the retry reaches
// the processor under the same reference (so a real processor would charge once).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Db } from '../../../src/db/db.ts';
import { createSimulatedProcessor, type PaymentProcessor } from '../../../src/payments/processor.ts';
import { createCustomer } from '../../helpers/actors.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { DB_OPTIONS } from '../../helpers/db.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { keyRows, paymentsOfCustomer, postPayment } from './payments.ts';

const UNAVAILABLE =
  'The payment processor did not complete the operation; nothing was recorded. Retry the request (with the same Idempotency-Key, if it had one).';

/** The simulator, answering each charge only after `delayMs` (forever when undefined), recording references. */
function slowProcessor(delayMs: number | undefined) {
  const simulator = createSimulatedProcessor();
  const references: string[] = [];
  const processor: PaymentProcessor = {
    name: simulator.name,
    async charge(request) {
      references.push(request.reference);
      if (delayMs === undefined) return new Promise<never>(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return simulator.charge(request);
    },
    refund: (request) => simulator.refund(request),
  };
  return { processor, references };
}

describe('a processor that does not answer (processorTimeoutMs)', () => {
  let t: TestApp;
  const hanging = slowProcessor(undefined);
  before(async () => {
    t = await startTestApp({}, undefined, { paymentProcessor: hanging.processor, processorTimeoutMs: 200 });
  });
  after(() => t.close());

  test('→ 503 PAYMENT_PROCESSOR_UNAVAILABLE with Retry-After; nothing recorded; the retry asks again under the same reference', async () => {
    const { user, token } = await createCustomer(t);
    const key = randomUUID();
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await postPayment(t, token, { amount: 1500, currency: 'EUR' }, { key });
      expectProblem(res, 503, 'PAYMENT_PROCESSOR_UNAVAILABLE', '/payments', UNAVAILABLE);
      assert.equal(res.headers['retry-after'], '1');
    }
    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
    assert.deepEqual(await keyRows(t.db, key), [{ method: 'POST', path: '/payments', state: 'in_flight', responseStatus: null }]);
    assert.equal(hanging.references.length, 2);
    assert.equal(hanging.references[0], hanging.references[1]);
    assert.match(hanging.references[0]!, /^op_[0-9a-f-]{36}$/);
  });
});

describe('the database drops the connection while the processor is asked', () => {
  let t: TestApp;
  let shortIdleDb: Db | undefined;
  let app: FastifyInstance | undefined;
  const slow = slowProcessor(1500);

  before(async () => {
    t = await startTestApp();
    if (t.db.kind !== 'postgres') return;
    // A second pool on the same database whose sessions PostgreSQL ends after 300 ms idle in a
    // transaction: the payment's transaction waits 1.5 s for the processor.
    shortIdleDb = await createDatabase({ databaseUrl: t.databaseUrl, dataDir: '', db: { ...DB_OPTIONS, idleInTransactionTimeoutMs: 300 } });
    app = await buildApp(t.config, shortIdleDb, { logger: false, paymentProcessor: slow.processor });
    await app.ready();
  });
  after(async () => {
    await app?.close();
    await shortIdleDb?.close();
    await t.close();
  });

  test('PostgreSQL: 503 SERVICE_UNAVAILABLE, the process keeps serving, nothing recorded (the embedded database has no such timeout: 201)', async () => {
    const { user, token } = await createCustomer(t);
    const key = randomUUID();
    const target = app ?? t.app;
    const res = await target.inject({
      method: 'POST',
      url: '/payments',
      payload: { amount: 1600, currency: 'EUR' },
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
    });
    if (t.db.kind !== 'postgres') {
      assert.equal(res.statusCode, 201, res.body);
      return;
    }
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().code, 'SERVICE_UNAVAILABLE');
    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
    assert.deepEqual(await keyRows(t.db, key), [{ method: 'POST', path: '/payments', state: 'in_flight', responseStatus: null }]);
    // Still alive, and the retry is the same operation for the processor.
    const health = await target.inject({ method: 'GET', url: '/livez' });
    assert.equal(health.statusCode, 200);
    assert.equal(slow.references.length, 1);
  });
});
