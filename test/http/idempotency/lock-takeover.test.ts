// A claim in flight (draft-ietf-httpapi-idempotency-key-header §2.7): a duplicate gets 409
// IDEMPOTENCY_KEY_IN_USE or waits for the outcome; a claim whose holder died is taken over once its
// lock lapses, never from a holder inside its transaction; a holder that outlives its lock while
// the processor answers loses the claim, and the taker goes on with the same payment.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Queryable } from '../../../src/db/db.ts';
import { createCustomer } from '../../helpers/actors.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { createFailpoints, createHoldableProcessor } from './gates.ts';
import {
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

const IN_USE = 'A request with this Idempotency-Key is still being processed; retry after the Retry-After delay to receive its result.';

/** PostgreSQL: waits until a session of this database is blocked on a lock (a row another holds). */
async function waitForLockWaiter(db: Queryable): Promise<void> {
  for (;;) {
    const { rows } = await db.query<{ waiting: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock') AS waiting",
    );
    if (rows[0]?.waiting) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a claim in flight', () => {
  let t: TestApp;
  const failpoints = createFailpoints();
  const charges = createHoldableProcessor();

  before(async () => {
    t = await startTestApp({}, undefined, { paymentProcessor: charges.processor, failpoint: failpoints.failpoint });
  });
  after(() => t.close());

  test('a duplicate while the first is committing waits for its outcome and replays it', async () => {
    // The first has stored its response in its open transaction: PostgreSQL makes the
    // duplicate's insert wait on that row; PGlite, one connection, queues the duplicate.
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const body = { amount: 3400, currency: 'EUR' };
    const hold = failpoints.holdOnceAt('idempotency.before-commit');
    const firstPending = postWithKey(t, token, '/payments', body, key);
    await hold.reached;
    const duplicatePending = postWithKey(t, token, '/payments', body, key);
    if (t.db.kind === 'postgres') await waitForLockWaiter(t.db);
    hold.release();
    const first = await firstPending;
    expectPaymentCreated(first, { ...body, orderId: null, customerId: user.id });
    expectReplayOf(first, await duplicatePending);
    assert.equal((await paymentsOfCustomer(t.db, user.id)).length, 1);
  });

  test('a duplicate while the first waits for the processor: 409 IDEMPOTENCY_KEY_IN_USE where transactions run concurrently (PostgreSQL); on PGlite it queues and replays', async () => {
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const body = { amount: 3450, currency: 'EUR' };
    const hold = charges.holdNextCharge();
    const firstPending = postWithKey(t, token, '/payments', body, key);
    await hold.reached;
    const duplicatePending = postWithKey(t, token, '/payments', body, key);
    if (t.db.kind === 'postgres') {
      const duplicate = await duplicatePending;
      expectProblem(duplicate, 409, 'IDEMPOTENCY_KEY_IN_USE', '/payments', IN_USE);
      assert.equal(duplicate.headers['retry-after'], '1');
      expectNotReplayed(duplicate);
      hold.release();
      expectPaymentCreated(await firstPending, { ...body, orderId: null, customerId: user.id });
    } else {
      hold.release();
      const first = await firstPending;
      expectPaymentCreated(first, { ...body, orderId: null, customerId: user.id });
      expectReplayOf(first, await duplicatePending);
    }
    assert.equal((await paymentsOfCustomer(t.db, user.id)).length, 1);
  });

  test('a live claim (lock not lapsed) → 409 IDEMPOTENCY_KEY_IN_USE with Retry-After: 1, the claim untouched', async () => {
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const body = { amount: 3500, currency: 'EUR' };
    await insertClaim(t.db, user.id, key, body, '30 seconds');
    const before = await findKeyRow(t.db, customerOwner(user.id), key);
    for (const sent of [body, { currency: 'EUR', amount: 3500 }]) {
      const res = await postWithKey(t, token, '/payments', sent, key);
      expectProblem(res, 409, 'IDEMPOTENCY_KEY_IN_USE', '/payments', IN_USE);
      assert.equal(res.headers['retry-after'], '1');
      expectNotReplayed(res);
    }
    assert.deepEqual(await findKeyRow(t.db, customerOwner(user.id), key), before);
    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
  });

  test('a lapsed claim (its process died) is taken over by the retry, which performs the payment', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 3600, currency: 'EUR' });
    const key = newKey();
    const body = { amount: 3600, currency: 'EUR', orderId: order.id };
    const claimId = await insertClaim(t.db, user.id, key, body, '-1 second');

    const res = await postWithKey(t, token, '/payments', body, key);
    const payment = expectPaymentCreated(res, { amount: 3600, currency: 'EUR', orderId: order.id, customerId: user.id });
    expectNotReplayed(res);
    const row = await findKeyRow(t.db, customerOwner(user.id), key);
    assert.equal(row?.id, claimId);
    assert.notEqual(row?.lock_token, 'dead-process');
    assert.deepEqual([row?.state, row?.response_status, row?.response_body], ['completed', 201, res.body]);
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, user.id)).map((p) => p.id),
      [payment.id],
    );
    assert.deepEqual(await orderState(t.db, order.id), { status: 'paid', version: 2 });
    expectReplayOf(res, await postWithKey(t, token, '/payments', body, key));
  });

  test('a live claim whose lock then lapses: 409 first, the takeover after', async () => {
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const body = { amount: 3700, currency: 'EUR' };
    const claimId = await insertClaim(t.db, user.id, key, body, '30 seconds');
    expectProblem(await postWithKey(t, token, '/payments', body, key), 409, 'IDEMPOTENCY_KEY_IN_USE', '/payments', IN_USE);
    await t.db.query("UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE id = $1", [claimId]);
    expectPaymentCreated(await postWithKey(t, token, '/payments', body, key), { ...body, orderId: null, customerId: user.id });
    assert.equal((await paymentsOfCustomer(t.db, user.id)).length, 1);
  });

  test('a key past its retention whose claim is still live is not reclaimed, even for another body: 409', async () => {
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const body = { amount: 3750, currency: 'EUR' };
    const claimId = await insertClaim(t.db, user.id, key, body, '30 seconds');
    await t.db.query("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [claimId]);
    const before = await findKeyRow(t.db, customerOwner(user.id), key);
    for (const sent of [body, { amount: 3751, currency: 'EUR' }]) {
      expectProblem(await postWithKey(t, token, '/payments', sent, key), 409, 'IDEMPOTENCY_KEY_IN_USE', '/payments', IN_USE);
    }
    assert.deepEqual(await findKeyRow(t.db, customerOwner(user.id), key), before);
    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
  });

  test('a lapsed claim is not taken over by another body or another path: 422 IDEMPOTENCY_KEY_REUSED, the claim untouched', async () => {
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const body = { amount: 3800, currency: 'EUR' };
    await insertClaim(t.db, user.id, key, body, '-1 second');
    const before = await findKeyRow(t.db, customerOwner(user.id), key);
    expectProblem(
      await postWithKey(t, token, '/payments', { amount: 3801, currency: 'EUR' }, key),
      422,
      'IDEMPOTENCY_KEY_REUSED',
      '/payments',
      'This Idempotency-Key was used with a different request body; a retry must repeat the original request exactly. Use a new key for a new request.',
    );
    expectProblem(
      await postWithKey(t, token, '/v1/payments', body, key),
      422,
      'IDEMPOTENCY_KEY_REUSED',
      '/v1/payments',
      'This Idempotency-Key was used for POST /payments; a key belongs to one operation. Use a new key for this request.',
    );
    assert.deepEqual(await findKeyRow(t.db, customerOwner(user.id), key), before);
    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
  });
});

describe('a lock that lapses while its holder is still working (ORDERPAY_IDEMPOTENCY_LOCK_SECONDS=1)', () => {
  let t: TestApp;
  const charges = createHoldableProcessor();
  const failpoints = createFailpoints();
  before(async () => {
    t = await startTestApp({ idempotency: { lockSeconds: 1, retentionSeconds: 86400 } }, undefined, {
      paymentProcessor: charges.processor,
      failpoint: failpoints.failpoint,
    });
  });
  after(() => t.close());

  /** Waits, by the database's clock, until the claim's lock has lapsed (reads never wait on row locks). */
  async function waitForLapse(userId: number, key: string): Promise<void> {
    for (;;) {
      const { rows } = await t.db.query<{ lapsed: boolean }>(
        "SELECT locked_until <= now() AS lapsed FROM idempotency_keys WHERE client_id = 'test-client' AND subject = $1 AND key = $2",
        [String(userId), key],
      );
      if (rows[0]?.lapsed) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('while its holder waits for the processor (no transaction open), a retry takes the lapsed claim and goes on with the same payment; the holder, its claim taken, answers 409; one payment, under one reference', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 4200, currency: 'EUR' });
    const key = newKey();
    const body = { amount: 4200, currency: 'EUR', orderId: order.id };
    const hold = charges.holdNextCharge();
    const firstPending = postWithKey(t, token, '/payments', body, key);
    await hold.reached;
    await waitForLapse(user.id, key);
    const retry = await postWithKey(t, token, '/payments', body, key);
    const payment = expectPaymentCreated(retry, { amount: 4200, currency: 'EUR', orderId: order.id, customerId: user.id });
    expectNotReplayed(retry);
    hold.release();
    expectProblem(await firstPending, 409, 'IDEMPOTENCY_KEY_IN_USE', '/payments', IN_USE);
    expectReplayOf(retry, await postWithKey(t, token, '/payments', body, key));
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, user.id)).map((p) => p.id),
      [payment.id],
    );
    assert.deepEqual(await orderState(t.db, order.id), { status: 'paid', version: 2 });
  });

  test('inside the transaction that stores its outcome, the holder keeps the claim: a retry waits for it (its row lock; PGlite queues it), then replays the outcome; one payment', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 4300, currency: 'EUR' });
    const key = newKey();
    const body = { amount: 4300, currency: 'EUR', orderId: order.id };
    // The lapse is waited for while the holder waits for the processor (no transaction open: on
    // PGlite a read would queue behind the holder's transaction); then it goes on to hold its last one.
    const charge = charges.holdNextCharge();
    const hold = failpoints.holdOnceAt('idempotency.before-commit');
    const firstPending = postWithKey(t, token, '/payments', body, key);
    await charge.reached;
    await waitForLapse(user.id, key);
    charge.release();
    await hold.reached;
    const retryPending = postWithKey(t, token, '/payments', body, key);
    // On PostgreSQL the retry's claim waits on the row the holder's transaction has updated.
    if (t.db.kind === 'postgres') await waitForLockWaiter(t.db);
    hold.release();
    const first = await firstPending;
    expectPaymentCreated(first, { amount: 4300, currency: 'EUR', orderId: order.id, customerId: user.id });
    expectNotReplayed(first);
    expectReplayOf(first, await retryPending);
    assert.equal((await paymentsOfCustomer(t.db, user.id)).length, 1);
    assert.deepEqual(await orderState(t.db, order.id), { status: 'paid', version: 2 });
  });
});
