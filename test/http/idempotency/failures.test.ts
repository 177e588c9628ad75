// What an Idempotency-Key is worth when the server fails: a crash before the commit releases the
// claim (the retry performs the operation, as the same operation), one after it leaves a result to replay; a key past its retention is free again, and purged.
// Failures come from AppOptions.failpoint (src/core/failpoints.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fingerprintRequest } from '../../../src/idempotency/idempotency.rules.ts';
import { purgeExpiredKeys } from '../../../src/idempotency/idempotency.store.ts';
import type { PaymentProcessor } from '../../../src/payments/processor.ts';
import { createSimulatedProcessor } from '../../../src/payments/simulator.ts';
import { createCustomer } from '../../helpers/actors.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createOrder, createProduct, createUser } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { createFailpoints } from './gates.ts';
import {
  assertReleased,
  customerOwner,
  expectNotReplayed,
  expectPaymentCreated,
  expectReplayOf,
  findKeyRow,
  insertClaim,
  newKey,
  orderState,
  paymentsOfCustomer,
  postWithKey,
} from './keyed-requests.ts';

const INTERNAL = 'An unexpected error occurred.';

describe('Idempotency-Key under failures (draft-ietf-httpapi-idempotency-key-header §2.6)', () => {
  let t: TestApp;
  const failpoints = createFailpoints();
  const { reached } = failpoints;
  // The simulator, remembering the reference of every charge it is asked to confirm or about.
  const simulator = createSimulatedProcessor();
  const chargeReferences: string[] = [];
  const recordingProcessor: PaymentProcessor = {
    ...simulator,
    confirmCharge(charge) {
      chargeReferences.push(charge.reference);
      return simulator.confirmCharge(charge);
    },
    retrieveCharge(charge) {
      chargeReferences.push(charge.reference);
      return simulator.retrieveCharge(charge);
    },
  };

  before(async () => {
    t = await startTestApp({}, undefined, { failpoint: failpoints.failpoint, paymentProcessor: recordingProcessor });
  });
  after(() => t.close());

  describe('a crash between the phases of a payment', () => {
    // Each point of the payment's way, and what the first request had committed when it failed there.
    const points = [
      { point: 'idempotency.after-recovery-point', named: false, asked: 0 },
      { point: 'payments.before-confirm', named: true, asked: 0 },
      { point: 'payments.before-outcome', named: true, asked: 1 },
      { point: 'idempotency.before-commit', named: true, asked: 1 },
    ] as const;
    for (const { point, named, asked } of points) {
      test(`at ${point} → 500; the payment kept processing, the key released at its recovery point; the retry goes on with that payment (201, not replayed), one charge under one reference`, async () => {
        const { user, token } = await createCustomer(t);
        const order = await createOrder(t.db, user.id, { price: 3100, currency: 'EUR' });
        const key = newKey();
        const body = { amount: 3100, currency: 'EUR', orderId: order.id };
        failpoints.throwOnceAt(point);
        reached.length = 0;
        chargeReferences.length = 0;

        const crashed = await postWithKey(t, token, '/payments', body, key);
        expectProblem(crashed, 500, 'INTERNAL_ERROR', '/payments', INTERNAL);
        expectNotReplayed(crashed);
        assert.equal(reached.at(-1), point);
        const [kept, ...others] = await paymentsOfCustomer(t.db, user.id);
        assert.deepEqual(others, []);
        assert.deepEqual([kept?.order_id, kept?.status], [order.id, 'processing']);
        const { rows } = await t.db.query<{ processorReference: string | null }>(
          'SELECT processor_reference AS "processorReference" FROM payments WHERE id = $1',
          [kept!.id],
        );
        assert.equal(rows[0]!.processorReference !== null, named);
        assert.deepEqual(await orderState(t.db, order.id), { status: 'pending', version: 1 });
        const released = await findKeyRow(t.db, customerOwner(user.id), key);
        assertReleased(released);
        assert.equal(released?.recovery_point, kept!.id);
        assert.equal(chargeReferences.length, asked);

        const retry = await postWithKey(t, token, '/payments', body, key);
        const payment = expectPaymentCreated(retry, { amount: 3100, currency: 'EUR', orderId: order.id, customerId: user.id });
        expectNotReplayed(retry);
        assert.equal(payment.id, kept!.id);
        assert.deepEqual(
          (await paymentsOfCustomer(t.db, user.id)).map((p) => [p.id, p.status]),
          [[payment.id, 'succeeded']],
        );
        assert.deepEqual(await orderState(t.db, order.id), { status: 'paid', version: 2 });
        const row = await findKeyRow(t.db, customerOwner(user.id), key);
        assert.deepEqual([row?.state, row?.response_status, row?.response_body], ['completed', 201, retry.body]);
        // Every question to the processor, before and after the crash, named one operation: it would charge once.
        assert.equal(row?.operation_id, released?.operation_id);
        assert.deepEqual(new Set(chargeReferences), new Set([`op_${released?.operation_id}`]));
      });
    }

    test('the released key is still bound to its request: another body with it → 422, nothing done', async () => {
      const { user, token } = await createCustomer(t);
      const key = newKey();
      failpoints.throwOnceAt('idempotency.before-commit');
      expectProblem(
        await postWithKey(t, token, '/payments', { amount: 3150, currency: 'EUR' }, key),
        500,
        'INTERNAL_ERROR',
        '/payments',
        INTERNAL,
      );
      const res = await postWithKey(t, token, '/payments', { amount: 3151, currency: 'EUR' }, key);
      expectProblem(
        res,
        422,
        'IDEMPOTENCY_KEY_REUSED',
        '/payments',
        'This Idempotency-Key was used with a different request body; a retry must repeat the original request exactly. Use a new key for a new request.',
      );
      assertReleased(await findKeyRow(t.db, customerOwner(user.id), key));
      // The first body's payment, kept for that body's retry; nothing of the second.
      assert.deepEqual(
        (await paymentsOfCustomer(t.db, user.id)).map((p) => [p.amount, p.status]),
        [[3150, 'processing']],
      );
    });

    test('POST /orders with a key → 500, no order, the claim released; the retry places one order', async () => {
      const { user, token } = await createCustomer(t);
      const product = await createProduct(t.db, { price: 75 });
      const key = newKey();
      failpoints.throwOnceAt('idempotency.before-commit');
      expectProblem(
        await postWithKey(t, token, '/orders', { productId: product.id, qty: 4 }, key),
        500,
        'INTERNAL_ERROR',
        '/orders',
        INTERNAL,
      );
      const orders = async () => (await t.db.query<{ id: number }>('SELECT id FROM orders WHERE customer_id = $1', [user.id])).rows;
      assert.deepEqual(await orders(), []);
      assertReleased(await findKeyRow(t.db, customerOwner(user.id), key));

      const retry = await postWithKey(t, token, '/orders', { productId: product.id, qty: 4 }, key);
      assert.equal(retry.statusCode, 201, retry.body);
      expectNotReplayed(retry);
      assert.deepEqual(await orders(), [{ id: retry.json().id }]);
    });

    test('a refund → 500: the refund kept pending, its amount counted against the balance; the retry refunds once', async () => {
      const staff = await createUser(t.db, 'staff');
      const token = await t.token({ userId: staff.id, staff: true });
      const payment = expectPaymentCreated(await postWithKey(t, token, '/payments', { amount: 1000, currency: 'EUR' }, newKey()), {
        amount: 1000,
        currency: 'EUR',
        orderId: null,
        customerId: staff.id,
      });
      const url = `/payments/${payment.id}/refunds`;
      const key = newKey();
      const state = async () =>
        (
          await t.db.query(
            `SELECT status, amount_refunded, (SELECT count(*) FROM refunds WHERE payment_id = $1)::int AS refunds,
                    (SELECT count(*) FROM refunds WHERE payment_id = $1 AND status = 'pending')::int AS pending FROM payments WHERE id = $1`,
            [payment.id],
          )
        ).rows[0];

      failpoints.throwOnceAt('idempotency.before-commit');
      expectProblem(await postWithKey(t, token, url, { amount: 400 }, key), 500, 'INTERNAL_ERROR', url, INTERNAL);
      assert.deepEqual(await state(), { status: 'partially_refunded', amount_refunded: 400, refunds: 1, pending: 1 });

      const retry = await postWithKey(t, token, url, { amount: 400 }, key);
      assert.equal(retry.statusCode, 201, retry.body);
      expectNotReplayed(retry);
      expectReplayOf(retry, await postWithKey(t, token, url, { amount: 400 }, key));
      assert.deepEqual(await state(), { status: 'partially_refunded', amount_refunded: 400, refunds: 1, pending: 0 });
    });
  });

  describe('a crash after the commit', () => {
    test('→ 500 to the client, but the payment is committed; the retry replays the 201 (Idempotent-Replayed), one payment', async () => {
      const { user, token } = await createCustomer(t);
      const order = await createOrder(t.db, user.id, { price: 3200, currency: 'EUR' });
      const key = newKey();
      const body = { amount: 3200, currency: 'EUR', orderId: order.id };
      failpoints.throwOnceAt('idempotency.after-commit');
      reached.length = 0;

      expectProblem(await postWithKey(t, token, '/payments', body, key), 500, 'INTERNAL_ERROR', '/payments', INTERNAL);
      assert.deepEqual(reached, [
        'idempotency.after-recovery-point',
        'payments.before-confirm',
        'payments.before-outcome',
        'idempotency.before-commit',
        'idempotency.after-commit',
      ]);
      const [stored] = await paymentsOfCustomer(t.db, user.id);
      assert.deepEqual(await paymentsOfCustomer(t.db, user.id), [
        {
          id: stored!.id,
          order_id: order.id,
          customer_id: user.id,
          client_id: 'test-client',
          amount: 3200,
          currency: 'EUR',
          status: 'succeeded',
        },
      ]);
      assert.deepEqual(await orderState(t.db, order.id), { status: 'paid', version: 2 });
      const row = await findKeyRow(t.db, customerOwner(user.id), key);
      assert.deepEqual([row?.state, row?.response_status], ['completed', 201]);

      const retry = await postWithKey(t, token, '/payments', body, key);
      const payment = expectPaymentCreated(retry, { amount: 3200, currency: 'EUR', orderId: order.id, customerId: user.id });
      assert.equal(retry.headers['idempotent-replayed'], 'true');
      assert.equal(payment.id, stored!.id);
      assert.equal(retry.body, row?.response_body);
      assert.equal((await paymentsOfCustomer(t.db, user.id)).length, 1);
    });

    test('a retry arriving before the first response is sent gets the stored response; the first then answers with the same bytes', async () => {
      const { user, token } = await createCustomer(t);
      const key = newKey();
      const body = { amount: 3300, currency: 'EUR' };
      const hold = failpoints.holdOnceAt('idempotency.after-commit');
      const firstPending = postWithKey(t, token, '/payments', body, key);
      await hold.reached;
      const retry = await postWithKey(t, token, '/payments', body, key);
      hold.release();
      const first = await firstPending;
      expectPaymentCreated(first, { ...body, orderId: null, customerId: user.id });
      expectReplayOf(first, retry);
      assert.equal((await paymentsOfCustomer(t.db, user.id)).length, 1);
    });
  });

  describe('retention', () => {
    test('a completed key past its retention is free again: the same key performs a new payment', async () => {
      const { user, token } = await createCustomer(t);
      const key = newKey();
      const body = { amount: 3900, currency: 'EUR' };
      const first = await postWithKey(t, token, '/payments', body, key);
      const p1 = expectPaymentCreated(first, { ...body, orderId: null, customerId: user.id });
      const { id: claimId, operation_id: firstOperation } = (await findKeyRow(t.db, customerOwner(user.id), key))!;
      await t.db.query("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [claimId]);
      chargeReferences.length = 0;

      const again = await postWithKey(t, token, '/payments', body, key);
      const p2 = expectPaymentCreated(again, { ...body, orderId: null, customerId: user.id });
      expectNotReplayed(again);
      assert.notEqual(p2.id, p1.id);
      assert.deepEqual(
        (await paymentsOfCustomer(t.db, user.id)).map((p) => p.id),
        [p1.id, p2.id],
      );
      const row = await findKeyRow(t.db, customerOwner(user.id), key);
      assert.deepEqual([row?.id, row?.state, row?.expired, row?.response_body], [claimId, 'completed', false, again.body]);
      // A new operation: the processor gets a new reference, so it cannot hand back the old charge.
      assert.notEqual(row?.operation_id, firstOperation);
      assert.deepEqual(chargeReferences, [`op_${row?.operation_id}`]);
      expectReplayOf(again, await postWithKey(t, token, '/payments', body, key));
    });

    test('past its retention the key is not bound to its old body or path either', async () => {
      const { user, token } = await createCustomer(t);
      const key = newKey();
      expectPaymentCreated(await postWithKey(t, token, '/payments', { amount: 4000, currency: 'EUR' }, key), {
        amount: 4000,
        currency: 'EUR',
        orderId: null,
        customerId: user.id,
      });
      await t.db.query(
        "UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE client_id = 'test-client' AND subject = $1 AND key = $2",
        [String(user.id), key],
      );
      const other = await postWithKey(t, token, '/v1/payments', { amount: 4001, currency: 'USD' }, key);
      expectPaymentCreated(other, { amount: 4001, currency: 'USD', orderId: null, customerId: user.id }, '/v1');
      const row = await findKeyRow(t.db, customerOwner(user.id), key);
      assert.deepEqual([row?.path, row?.fingerprint], ['/v1/payments', fingerprintRequest(1, { amount: 4001, currency: 'USD' })]);
    });

    test('purgeExpiredKeys deletes the keys past their retention, and only those', async () => {
      const { user, token } = await createCustomer(t);
      const [kept, expired, expiredClaim, liveClaim] = [newKey(), newKey(), newKey(), newKey()];
      for (const [key, amount] of [
        [kept, 4100],
        [expired, 4101],
      ] as const) {
        assert.equal((await postWithKey(t, token, '/payments', { amount, currency: 'EUR' }, key)).statusCode, 201);
      }
      await insertClaim(t.db, user.id, expiredClaim, { amount: 4102, currency: 'EUR' }, '-1 second');
      await insertClaim(t.db, user.id, liveClaim, { amount: 4103, currency: 'EUR' }, '30 seconds');
      await t.db.query(
        "UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE client_id = 'test-client' AND subject = $1 AND key = ANY($2::text[])",
        [String(user.id), [expired, expiredClaim]],
      );

      const purged = await purgeExpiredKeys(t.db);
      assert.ok(purged >= 2, `purged ${purged}`);
      const { rows } = await t.db.query<{ key: string }>(
        "SELECT key FROM idempotency_keys WHERE client_id = 'test-client' AND subject = $1 ORDER BY id",
        [String(user.id)],
      );
      assert.deepEqual(
        rows.map((r) => r.key),
        [kept, liveClaim],
      );
      assert.equal((await paymentsOfCustomer(t.db, user.id)).length, 2, 'purging keys leaves the payments');
    });
  });
});
