// Idempotency-Key replays (draft-ietf-httpapi-idempotency-key-header §2): a retry with the same key
// gets the first response byte for byte, business refusals included, and only once the caller is
// authenticated and holds the scope; a 503 stores nothing, so its retry is performed again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCustomer, createStaffToken } from '../../helpers/actors.ts';
import { setUpTestApp, startTestApp, type TestApp } from '../../helpers/app.ts';
import { createOrder, createUser } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { fingerprintRequest } from '../../../src/idempotency/idempotency.rules.ts';
import {
  assertReleased,
  customerOwner,
  expectNotReplayed,
  expectPaymentCreated,
  expectReplayOf,
  findKeyRow,
  JSON_TYPE,
  newKey,
  orderState,
  paymentsOfCustomer,
  postWithKey,
} from './keyed-requests.ts';

const t = setUpTestApp();

describe('a retry with the same key replays the first response', () => {
  test('POST /payments 201, then the same key (same body, reordered body, quoted key) → the same bytes and headers, Idempotent-Replayed: true; one payment, the order paid once', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 2500, currency: 'EUR' });
    const key = newKey();
    const body = { amount: 2500, currency: 'EUR', orderId: order.id };

    const first = await postWithKey(t, token, '/payments', body, key);
    const payment = expectPaymentCreated(first, { amount: 2500, currency: 'EUR', orderId: order.id, customerId: user.id });
    expectNotReplayed(first);

    const retries = [
      await postWithKey(t, token, '/payments', body, key),
      await postWithKey(t, token, '/payments', `{"orderId":${order.id},"currency":"EUR","amount":2500}`, key),
      await postWithKey(t, token, '/payments', ` {\n "currency" : "EUR", "orderId": ${order.id}, "amount": 2500 }`, key),
      await postWithKey(t, token, '/payments', body, `"${key}"`),
    ];
    for (const retry of retries) expectReplayOf(first, retry);

    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), [
      {
        id: payment.id,
        order_id: order.id,
        customer_id: user.id,
        client_id: 'test-client',
        amount: 2500,
        currency: 'EUR',
        status: 'succeeded',
      },
    ]);
    assert.deepEqual(await orderState(t.db, order.id), { status: 'paid', version: 2 });
    const row = await findKeyRow(t.db, customerOwner(user.id), key);
    assert.match(row?.operation_id ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.deepEqual(
      { ...row, id: 0, lock_token: '', operation_id: '' },
      {
        id: 0,
        lock_token: '',
        operation_id: '',
        lock_lapsed: true,
        method: 'POST',
        path: '/payments',
        fingerprint: fingerprintRequest(1, body),
        state: 'completed',
        expired: false,
        // Phase 1 recorded the payment; the response came from phase 3.
        recovery_point: first.json().id,
        response_status: 201,
        response_body: first.body,
        response_headers: {
          'content-type': JSON_TYPE,
          'cache-control': 'no-store',
          location: first.headers.location,
          etag: first.headers.etag,
        },
      },
    );
  });

  test('a declined payment (201, status declined) is replayed; the order stays pending', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 40002, currency: 'USD' });
    const key = newKey();
    const body = { amount: 40002, currency: 'USD', orderId: order.id };
    const first = await postWithKey(t, token, '/payments', body, key);
    expectPaymentCreated(first, {
      amount: 40002,
      currency: 'USD',
      orderId: order.id,
      customerId: user.id,
      status: 'declined',
      declineCode: 'card_declined',
    });
    expectReplayOf(first, await postWithKey(t, token, '/payments', body, key));
    assert.equal((await paymentsOfCustomer(t.db, user.id)).length, 1);
    assert.deepEqual(await orderState(t.db, order.id), { status: 'pending', version: 1 });
  });

  test('a stored 422 PAYMENT_AMOUNT_MISMATCH is replayed, with the first request id, even after the order changed so the payment would now succeed', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 700, currency: 'EUR' });
    const key = newKey();
    const body = { amount: 701, currency: 'EUR', orderId: order.id };
    const first = await postWithKey(t, token, '/payments', body, key);
    expectProblem(
      first,
      422,
      'PAYMENT_AMOUNT_MISMATCH',
      '/payments',
      "The order's total is 700 EUR; a payment of it must be for exactly that.",
      {
        expectedAmount: 700,
        expectedCurrency: 'EUR',
        errors: [{ pointer: '/amount', detail: 'must equal the order total 700' }],
      },
    );
    expectNotReplayed(first);

    await t.db.query('UPDATE orders SET total = 701 WHERE id = $1', [order.id]);
    const retry = await postWithKey(t, token, '/payments', body, key);
    expectReplayOf(first, retry);
    assert.equal(retry.json().requestId, first.headers['x-request-id']);

    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
    assert.deepEqual(await orderState(t.db, order.id), { status: 'pending', version: 1 });
    const row = await findKeyRow(t.db, customerOwner(user.id), key);
    assert.equal(row?.state, 'completed');
    assert.equal(row?.response_status, 422);
    assert.equal(row?.response_body, first.body);
  });

  test('a stored 409 PAYMENT_ORDER_NOT_PAYABLE is replayed after the order became payable again', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 900, currency: 'GBP', status: 'cancelled' });
    const key = newKey();
    const body = { amount: 900, currency: 'GBP', orderId: order.id };
    const first = await postWithKey(t, token, '/payments', body, key);
    expectProblem(first, 409, 'PAYMENT_ORDER_NOT_PAYABLE', '/payments', 'The order is cancelled; only a pending order can be paid.', {
      currentStatus: 'cancelled',
    });

    await t.db.query("UPDATE orders SET status = 'pending' WHERE id = $1", [order.id]);
    const retry = await postWithKey(t, token, '/payments', body, key);
    expectReplayOf(first, retry);
    assert.equal(retry.json().requestId, first.headers['x-request-id']);
    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
    assert.equal((await orderState(t.db, order.id)).status, 'pending');
  });

  test("a stored 404 PAYMENT_ORDER_NOT_FOUND (another customer's order) is replayed", async () => {
    const { user, token } = await createCustomer(t);
    const other = await createUser(t.db);
    const order = await createOrder(t.db, other.id, { price: 300 });
    const key = newKey();
    const body = { amount: 300, currency: 'EUR', orderId: order.id };
    const first = await postWithKey(t, token, '/payments', body, key);
    expectProblem(first, 404, 'PAYMENT_ORDER_NOT_FOUND', '/payments', `Order ${order.id} does not exist.`, {
      errors: [{ pointer: '/orderId', detail: 'no such order' }],
    });
    expectReplayOf(first, await postWithKey(t, token, '/payments', body, key));
    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
    assert.deepEqual(await paymentsOfCustomer(t.db, other.id), []);
  });
});

describe('a replay is only for an authenticated caller with the scope', () => {
  test('no token → 401; a token without payments:write → 403; neither gets the stored result, and the key is unchanged', async () => {
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const body = { amount: 2100, currency: 'EUR' };
    const first = await postWithKey(t, token, '/payments', body, key);
    expectPaymentCreated(first, { ...body, orderId: null, customerId: user.id });
    const before = await findKeyRow(t.db, customerOwner(user.id), key);

    const anonymous = await postWithKey(t, undefined, '/payments', body, key);
    expectProblem(
      anonymous,
      401,
      'AUTH_TOKEN_MISSING',
      '/payments',
      'This endpoint requires an access token: Authorization: Bearer <token>.',
    );
    assert.equal(anonymous.headers['www-authenticate'], 'Bearer realm="orderpay"');
    expectNotReplayed(anonymous);

    const readOnly = await postWithKey(
      t,
      await t.token({ userId: user.id, scopes: ['payments:read', 'orders:write'] }),
      '/payments',
      body,
      key,
    );
    expectProblem(readOnly, 403, 'AUTH_INSUFFICIENT_SCOPE', '/payments', 'This operation requires the scope "payments:write".');
    assert.equal(readOnly.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="payments:write"');
    expectNotReplayed(readOnly);

    assert.deepEqual(await findKeyRow(t.db, customerOwner(user.id), key), before);
    assert.equal((await paymentsOfCustomer(t.db, user.id)).length, 1);
  });
});

describe('the role is checked before the key, on every request', () => {
  test('a customer asking for a refund → 403 AUTH_FORBIDDEN, the key untouched; the same key as staff performs the refund; the stored refund is not replayed to a non-staff token', async () => {
    const user = await createUser(t.db, 'staff');
    const staffToken = await t.token({ userId: user.id, staff: true });
    const payment = expectPaymentCreated(await postWithKey(t, staffToken, '/payments', { amount: 2600, currency: 'EUR' }, newKey()), {
      amount: 2600,
      currency: 'EUR',
      orderId: null,
      customerId: user.id,
    });
    const url = `/payments/${payment.id}/refunds`;
    const key = newKey();

    const refused = await postWithKey(t, await t.token({ userId: user.id }), url, { amount: 600 }, key);
    expectProblem(refused, 403, 'AUTH_FORBIDDEN', url, 'Refunds are made by staff or service clients.');
    assert.equal(await findKeyRow(t.db, customerOwner(user.id), key), undefined);

    const refund = await postWithKey(t, staffToken, url, { amount: 600 }, key);
    assert.equal(refund.statusCode, 201, refund.body);
    expectNotReplayed(refund);
    const { rows } = await t.db.query(
      'SELECT status, amount_refunded, (SELECT count(*) FROM refunds WHERE payment_id = $1)::int AS refunds FROM payments WHERE id = $1',
      [payment.id],
    );
    assert.deepEqual(rows, [{ status: 'partially_refunded', amount_refunded: 600, refunds: 1 }]);

    const demoted = await postWithKey(t, await t.token({ userId: user.id }), url, { amount: 600 }, key);
    expectProblem(demoted, 403, 'AUTH_FORBIDDEN', url, 'Refunds are made by staff or service clients.');
    expectNotReplayed(demoted);
    expectReplayOf(refund, await postWithKey(t, staffToken, url, { amount: 600 }, key));
  });
});

describe('a 503 from the processor stores no response', () => {
  test('amount 40091 → 503 PAYMENT_PROCESSOR_UNAVAILABLE, the claim released; the retry goes on with the same payment (503 again)', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 40091, currency: 'EUR' });
    const key = newKey();
    const body = { amount: 40091, currency: 'EUR', orderId: order.id };
    const detail =
      'The payment processor did not answer. The payment is kept in progress and asked about again; retry the request with the same Idempotency-Key to receive its outcome.';
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await postWithKey(t, token, '/payments', body, key);
      expectProblem(res, 503, 'PAYMENT_PROCESSOR_UNAVAILABLE', '/payments', detail);
      assert.equal(res.headers['retry-after'], '1');
      expectNotReplayed(res);
      assertReleased(await findKeyRow(t.db, customerOwner(user.id), key));
    }
    // One payment, recorded before the processor was asked, kept processing and reserving the order.
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, user.id)).map((p) => [p.order_id, p.status]),
      [[order.id, 'processing']],
    );
    assert.deepEqual(await orderState(t.db, order.id), { status: 'pending', version: 1 });
  });
});

describe('an expired token gets no replay (injected clock)', () => {
  let clock = new Date();
  let app: TestApp;
  before(async () => {
    app = await startTestApp({}, () => clock);
  });
  after(() => app.close());

  test("the key's owner with a token that expired since → 401 AUTH_TOKEN_INVALID, not the stored 201", async () => {
    const user = await createUser(app.db);
    const token = await app.token({ userId: user.id, expiresIn: 60 });
    const key = newKey();
    const body = { amount: 2200, currency: 'EUR' };
    const first = await postWithKey(app, token, '/payments', body, key);
    expectPaymentCreated(first, { ...body, orderId: null, customerId: user.id });

    clock = new Date(clock.getTime() + 10 * 60_000);
    const expired = await postWithKey(app, token, '/payments', body, key);
    expectProblem(expired, 401, 'AUTH_TOKEN_INVALID', '/payments', 'The access token is invalid: the token has expired.');
    assert.equal(
      expired.headers['www-authenticate'],
      'Bearer realm="orderpay", error="invalid_token", error_description="the token has expired"',
    );
    expectNotReplayed(expired);

    // A fresh token for the same caller gets the replay.
    expectReplayOf(first, await postWithKey(app, await app.token({ userId: user.id }), '/payments', body, key));
    assert.equal((await paymentsOfCustomer(app.db, user.id)).length, 1);
  });
});

describe("staff paying a customer's order", () => {
  test("the replay is the staff member's, and the payment belongs to the order's customer", async () => {
    const customer = await createUser(t.db);
    const order = await createOrder(t.db, customer.id, { price: 1234, currency: 'CHF' });
    const token = await createStaffToken(t);
    const key = newKey();
    const body = { amount: 1234, currency: 'CHF', orderId: order.id };
    const first = await postWithKey(t, token, '/payments', body, key);
    expectPaymentCreated(first, { ...body, customerId: customer.id });
    expectReplayOf(first, await postWithKey(t, token, '/payments', body, key));
    // The customer's own key space does not hold it: the same key from the customer is a new request.
    const own = await postWithKey(t, await t.token({ userId: customer.id }), '/payments', body, key);
    expectProblem(own, 409, 'PAYMENT_ORDER_NOT_PAYABLE', '/payments', 'The order is paid; only a pending order can be paid.', {
      currentStatus: 'paid',
    });
    expectNotReplayed(own);
    assert.equal((await paymentsOfCustomer(t.db, customer.id)).length, 1);
  });
});
