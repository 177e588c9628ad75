// A processor that does not answer, or answers slowly: the payment is recorded before the processor
// is asked and no transaction waits for it. The client gets a 503 problem and keeps its key; the
// payment stays processing (shown to no v1 or v2 reader), and the retry asks the processor again
// under the same reference (so a real processor would charge once) and receives the outcome.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Db } from '../../../src/db/db.ts';
import type { PaymentProcessor } from '../../../src/payments/processor.ts';
import { createSimulatedProcessor } from '../../../src/payments/simulator.ts';
import { createCustomer } from '../../helpers/actors.ts';
import { paymentsConfig, startTestApp, type TestApp } from '../../helpers/app.ts';
import { DB_OPTIONS } from '../../helpers/db.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { keyRows, paymentsOfCustomer, postPayment, readOrderRow } from './payments.ts';

const UNAVAILABLE =
  'The payment processor did not answer. The payment is kept in progress and asked about again; retry the request with the same Idempotency-Key to receive its outcome.';

/** The simulator, its confirmations answered after `delayMs` or never (until answer() is called), their references recorded. */
function slowProcessor(delayMs: number | undefined) {
  const simulator = createSimulatedProcessor();
  const references: string[] = [];
  let answering = delayMs !== undefined;
  const processor: PaymentProcessor = {
    ...simulator,
    async confirmCharge(charge) {
      references.push(charge.reference);
      if (!answering) return new Promise<never>(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, delayMs ?? 0));
      return simulator.confirmCharge(charge);
    },
    retrieveCharge(charge) {
      references.push(charge.reference);
      return answering ? simulator.retrieveCharge(charge) : new Promise<never>(() => undefined);
    },
  };
  return { processor, references, answer: () => (answering = true) };
}

describe('a processor that does not answer (processorTimeoutMs)', () => {
  let t: TestApp;
  const hanging = slowProcessor(undefined);
  before(async () => {
    // The completer waits a day before asking again: only the client's retries reach the processor here.
    t = await startTestApp({ payments: paymentsConfig({ retryScheduleSeconds: [86_400], waitMs: 0 }) }, undefined, {
      paymentProcessor: hanging.processor,
      processorTimeoutMs: 200,
    });
  });
  after(() => t.close());

  test('→ 503 PAYMENT_PROCESSOR_UNAVAILABLE with Retry-After; the payment kept processing and shown to no one; the retry asks again under the same reference, and gets the outcome once the processor answers', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 1500, currency: 'EUR' });
    const body = { amount: 1500, currency: 'EUR', orderId: order.id };
    const key = randomUUID();
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await postPayment(t, token, body, { key });
      expectProblem(res, 503, 'PAYMENT_PROCESSOR_UNAVAILABLE', '/payments', UNAVAILABLE);
      assert.equal(res.headers['retry-after'], '1');
    }
    const [recorded] = await paymentsOfCustomer(t.db, user.id);
    assert.deepEqual(
      [recorded?.status, recorded?.orderId, recorded?.processorReference],
      ['processing', order.id, recorded?.processorReference],
    );
    assert.match(recorded!.processorReference, /^sim_ch_/);
    assert.equal((await readOrderRow(t.db, order.id)).status, 'pending');
    assert.deepEqual(await keyRows(t.db, key), [{ method: 'POST', path: '/payments', state: 'in_flight', responseStatus: null }]);
    // Not there for a reader of a version that shows only outcomes.
    assert.equal((await t.request(token, { method: 'GET', url: `/payments/${recorded!.id}` })).statusCode, 404);
    assert.equal((await t.request(token, { method: 'GET', url: '/payments' })).json().meta.total, 0);
    // Another key cannot pay the order meanwhile, nor can it be cancelled.
    const other = await postPayment(t, token, body);
    expectProblem(
      other,
      409,
      'PAYMENT_ORDER_PAYMENT_IN_PROGRESS',
      '/payments',
      `A payment of order ${order.id} is in progress; only if it does not succeed can the order be paid again.`,
      { paymentStatus: 'processing' },
    );
    // The first ask confirmed, each retry asked what became of the charge: one reference throughout.
    assert.equal(hanging.references.length, 2);
    assert.equal(new Set(hanging.references).size, 1);
    assert.match(hanging.references[0]!, /^op_[0-9a-f-]{36}$/);

    hanging.answer();
    const res = await postPayment(t, token, body, { key });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual([res.json().id, res.json().status], [recorded!.id, 'succeeded']);
    assert.equal((await readOrderRow(t.db, order.id)).status, 'paid');
    assert.deepEqual(await keyRows(t.db, key), [{ method: 'POST', path: '/payments', state: 'completed', responseStatus: 201 }]);
  });
});

describe('a slow processor holds no transaction and no connection', () => {
  let t: TestApp;
  let ownDb: Db | undefined;
  let app: FastifyInstance;
  let entered: () => void;
  const confirming = new Promise<void>((resolve) => (entered = resolve));
  let confirmed = false;
  const simulator = createSimulatedProcessor();
  const slow: PaymentProcessor = {
    ...simulator,
    async confirmCharge(charge) {
      entered();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      confirmed = true;
      return simulator.confirmCharge(charge);
    },
  };

  before(async () => {
    t = await startTestApp();
    // On PostgreSQL, a pool of its own whose sessions PostgreSQL ends after 300 ms idle in a
    // transaction; the embedded database is one connection, which the payment must not hold.
    if (t.db.kind === 'postgres') {
      ownDb = await createDatabase({ databaseUrl: t.databaseUrl, dataDir: '', db: { ...DB_OPTIONS, idleInTransactionTimeoutMs: 300 } });
    }
    app = await buildApp(t.config, ownDb ?? t.db, { logger: false, paymentProcessor: slow });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await ownDb?.close();
    await t.close();
  });

  test('while the processor takes 1.5 s to confirm, a read is answered; then 201, the order paid (PostgreSQL: its 300 ms idle-in-transaction limit is never reached)', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 1600, currency: 'EUR' });
    const authorization = `Bearer ${token}`;
    const paying = app.inject({
      method: 'POST',
      url: '/payments',
      payload: { amount: 1600, currency: 'EUR', orderId: order.id },
      headers: { authorization, 'idempotency-key': randomUUID() },
    });
    await confirming;
    const read = await app.inject({ method: 'GET', url: `/orders/${order.id}`, headers: { authorization } });
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(read.json().status, 'pending');
    assert.equal(confirmed, false, 'the read was answered while the processor was still confirming');
    const res = await paying;
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().status, 'succeeded');
    assert.equal((await readOrderRow(t.db, order.id)).status, 'paid');
  });
});
