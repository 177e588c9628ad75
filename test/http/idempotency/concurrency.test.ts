// Many requests with one Idempotency-Key at once: the unique claim lets exactly one perform the
// work; every other answer is that response replayed or 409 IDEMPOTENCY_KEY_IN_USE, never a 5xx.
// On PostgreSQL these really run in parallel (a pool of connections); on PGlite they interleave.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createCustomer } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { createOrder, createProduct } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import {
  customerOwner,
  expectPaymentCreated,
  findKeyRow,
  insertClaim,
  newKey,
  orderState,
  paymentsOfCustomer,
  postWithKey,
} from './keyed-requests.ts';

const t = setUpTestApp();

const CONCURRENCY = 50;
const IN_USE = 'A request with this Idempotency-Key is still being processed; retry after the Retry-After delay to receive its result.';
const REUSED_BODY =
  'This Idempotency-Key was used with a different request body; a retry must repeat the original request exactly. Use a new key for a new request.';

/**
 * Sorts the answers: the 201s (exactly one performed, the rest replays of the same bytes and
 * headers), and the refusals, each checked as a whole problem. Returns the performed 201.
 */
function classify(
  responses: LightMyRequestResponse[],
  url: string,
  allowed: { reused: boolean },
): { winner: LightMyRequestResponse; counts: Record<string, number> } {
  const created = responses.filter((r) => r.statusCode === 201);
  const performed = created.filter((r) => r.headers['idempotent-replayed'] === undefined);
  assert.equal(performed.length, 1, `performed: ${performed.length} of ${created.length} 201s`);
  const winner = performed[0]!;
  const counts: Record<string, number> = { performed: 1, replayed: 0, inUse: 0, reused: 0 };
  for (const res of responses) {
    if (res === winner) continue;
    if (res.statusCode === 201) {
      assert.equal(res.headers['idempotent-replayed'], 'true');
      assert.equal(res.body, winner.body);
      for (const name of ['content-type', 'cache-control', 'location', 'etag'] as const)
        assert.equal(res.headers[name], winner.headers[name], name);
      counts.replayed!++;
    } else if (res.statusCode === 409) {
      expectProblem(res, 409, 'IDEMPOTENCY_KEY_IN_USE', url, IN_USE);
      assert.equal(res.headers['retry-after'], '1');
      counts.inUse!++;
    } else {
      assert.ok(allowed.reused, `unexpected ${res.statusCode}: ${res.body}`);
      expectProblem(res, 422, 'IDEMPOTENCY_KEY_REUSED', url, REUSED_BODY);
      counts.reused!++;
    }
  }
  assert.equal(counts.performed! + counts.replayed! + counts.inUse! + counts.reused!, responses.length);
  return { winner, counts };
}

describe(`${CONCURRENCY} concurrent requests with one Idempotency-Key`, () => {
  test('POST /payments, identical: one payment; every answer is that 201 or 409 IN_USE; no 5xx', async (context) => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 5100, currency: 'EUR' });
    const key = newKey();
    const body = { amount: 5100, currency: 'EUR', orderId: order.id };
    const responses = await Promise.all(Array.from({ length: CONCURRENCY }, () => postWithKey(t, token, '/payments', body, key)));

    const { winner, counts } = classify(responses, '/payments', { reused: false });
    context.diagnostic(JSON.stringify(counts));
    const payment = expectPaymentCreated(winner, { amount: 5100, currency: 'EUR', orderId: order.id, customerId: user.id });
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, user.id)).map((p) => p.id),
      [payment.id],
    );
    assert.deepEqual(await orderState(t.db, order.id), { status: 'paid', version: 2 });
    const row = await findKeyRow(t.db, customerOwner(user.id), key);
    assert.deepEqual([row?.state, row?.response_status, row?.response_body], ['completed', 201, winner.body]);
  });

  test('POST /payments, two bodies: one payment; the others are its replay, 409 IN_USE or 422 REUSED', async (context) => {
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const bodies = [
      { amount: 5200, currency: 'EUR' },
      { amount: 5201, currency: 'EUR' },
    ];
    const sent = Array.from({ length: CONCURRENCY }, (_, i) => bodies[i % 2]!);
    const responses = await Promise.all(sent.map((body) => postWithKey(t, token, '/payments', body, key)));

    const { winner, counts } = classify(responses, '/payments', { reused: true });
    context.diagnostic(JSON.stringify(counts));
    const winnerBody = sent[responses.indexOf(winner)]!;
    const payment = expectPaymentCreated(winner, { ...winnerBody, orderId: null, customerId: user.id });
    // Only requests with the winner's body get its 201; only the other body is refused as reused.
    responses.forEach((res, i) => {
      if (res.statusCode === 201) assert.deepEqual(sent[i], winnerBody);
      if (res.statusCode === 422) assert.notDeepEqual(sent[i], winnerBody);
    });
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, user.id)).map((p) => [p.id, p.amount]),
      [[payment.id, winnerBody.amount]],
    );
  });

  test('POST /orders, identical: one order; every answer is that 201 or 409 IN_USE', async (context) => {
    const { user, token } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 250, currency: 'NOK' });
    const key = newKey();
    const responses = await Promise.all(
      Array.from({ length: CONCURRENCY }, () => postWithKey(t, token, '/orders', { productId: product.id, qty: 3 }, key)),
    );

    const { winner, counts } = classify(responses, '/orders', { reused: false });
    context.diagnostic(JSON.stringify(counts));
    const order = winner.json();
    assert.deepEqual(order, {
      id: order.id,
      status: 'pending',
      customerId: user.id,
      total: 750,
      currency: 'NOK',
      createdAt: order.createdAt,
      updatedAt: order.createdAt,
    });
    const { rows } = await t.db.query('SELECT id, total FROM orders WHERE customer_id = $1', [user.id]);
    assert.deepEqual(rows, [{ id: order.id, total: 750 }]);
    const items = await t.db.query('SELECT count(*)::int AS n FROM order_items WHERE order_id = $1', [order.id]);
    assert.equal(items.rows[0]!.n, 1);
  });

  test('POST /orders, two bodies: one order; the others are its replay, 409 IN_USE or 422 REUSED', async (context) => {
    const { user, token } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 10, currency: 'DKK' });
    const key = newKey();
    const sent = Array.from({ length: CONCURRENCY }, (_, i) => ({ productId: product.id, qty: 1 + (i % 2) }));
    const responses = await Promise.all(sent.map((body) => postWithKey(t, token, '/orders', body, key)));

    const { winner, counts } = classify(responses, '/orders', { reused: true });
    context.diagnostic(JSON.stringify(counts));
    const winnerBody = sent[responses.indexOf(winner)]!;
    responses.forEach((res, i) => {
      if (res.statusCode === 201) assert.deepEqual(sent[i], winnerBody);
      if (res.statusCode === 422) assert.notDeepEqual(sent[i], winnerBody);
    });
    const { rows } = await t.db.query('SELECT id, total FROM orders WHERE customer_id = $1', [user.id]);
    assert.deepEqual(rows, [{ id: winner.json().id, total: 10 * winnerBody.qty }]);
  });

  test('a key past its retention, retried 50 times at once: exactly one new payment, the old response never replayed', async (context) => {
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const body = { amount: 5400, currency: 'EUR' };
    const old = expectPaymentCreated(await postWithKey(t, token, '/payments', body, key), { ...body, orderId: null, customerId: user.id });
    await t.db.query(
      "UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE client_id = 'test-client' AND subject = $1 AND key = $2",
      [String(user.id), key],
    );
    const responses = await Promise.all(Array.from({ length: CONCURRENCY }, () => postWithKey(t, token, '/payments', body, key)));

    const { winner, counts } = classify(responses, '/payments', { reused: false });
    context.diagnostic(JSON.stringify(counts));
    const fresh = expectPaymentCreated(winner, { ...body, orderId: null, customerId: user.id });
    assert.notEqual(fresh.id, old.id);
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, user.id)).map((p) => p.id),
      [old.id, fresh.id],
    );
  });

  test('a lapsed claim (its holder died), retried 50 times at once: exactly one takes it over and pays', async (context) => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 5500, currency: 'EUR' });
    const key = newKey();
    const body = { amount: 5500, currency: 'EUR', orderId: order.id };
    await insertClaim(t.db, user.id, key, body, '-1 second');
    const responses = await Promise.all(Array.from({ length: CONCURRENCY }, () => postWithKey(t, token, '/payments', body, key)));

    const { winner, counts } = classify(responses, '/payments', { reused: false });
    context.diagnostic(JSON.stringify(counts));
    const payment = expectPaymentCreated(winner, { amount: 5500, currency: 'EUR', orderId: order.id, customerId: user.id });
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, user.id)).map((p) => p.id),
      [payment.id],
    );
    assert.deepEqual(await orderState(t.db, order.id), { status: 'paid', version: 2 });
    const row = await findKeyRow(t.db, customerOwner(user.id), key);
    assert.deepEqual([row?.state, row?.response_body], ['completed', winner.body]);
  });

  test('the same key from 50 different customers at once: 50 independent payments', async () => {
    const customers = await Promise.all(Array.from({ length: CONCURRENCY }, () => createCustomer(t)));
    const key = newKey();
    const responses = await Promise.all(
      customers.map(({ token }) => postWithKey(t, token, '/payments', { amount: 5300, currency: 'EUR' }, key)),
    );
    const ids = new Set<number>();
    for (const [i, res] of responses.entries()) {
      const payment = expectPaymentCreated(res, { amount: 5300, currency: 'EUR', orderId: null, customerId: customers[i]!.user.id });
      assert.equal(res.headers['idempotent-replayed'], undefined);
      ids.add(payment.id);
      assert.deepEqual(
        (await paymentsOfCustomer(t.db, customers[i]!.user.id)).map((p) => p.id),
        [payment.id],
      );
    }
    assert.equal(ids.size, CONCURRENCY);
  });
});
