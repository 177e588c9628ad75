// The API's rate limits (docs/api.md, "Rate limits"), counted in the database and in Redis alike:
// three budgets (reads; writes; payments and refunds) per caller, or per client IP without a valid
// token; RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers-10) on every answer,
// successes and problems; 429 RATE_LIMITED with Retry-After once a budget is spent.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCustomer, createStaffToken, get } from '../../helpers/actors.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createProduct } from '../../helpers/factories.ts';
import { dropRedisKeys } from '../../helpers/redis.ts';
import { postPayment, postRefund } from '../payments/payments.ts';
import { expectFields, expectRateLimited, frozenClock, STORES } from './rate-limits.ts';

const BUDGETS = { reads: 3, writes: 2, payments: 2 };

for (const store of STORES) {
  describe(`rate limits counted in ${store.name}`, () => {
    let t: TestApp;
    const limits = store.limits(BUDGETS);
    before(async () => {
      t = await startTestApp({ rateLimits: limits }, undefined, { rateLimitNow: frozenClock });
    });
    after(async () => {
      await t.close();
      await dropRedisKeys(limits.redisKeyPrefix);
    });

    test('reads: the fields count down on every answer, then 429 RATE_LIMITED with Retry-After', async () => {
      const { token } = await createCustomer(t);
      for (let left = BUDGETS.reads - 1; left >= 0; left--) {
        const res = await get(t, token, '/orders');
        assert.equal(res.statusCode, 200, res.body);
        expectFields(res, 'reads', BUDGETS.reads, left);
      }
      const refused = await get(t, token, '/orders');
      expectRateLimited(refused, 'reads', BUDGETS.reads, '/orders');
      // Still refused: a refused request does not reopen the window.
      expectRateLimited(await get(t, token, '/orders/1'), 'reads', BUDGETS.reads, '/orders/1');
    });

    test('problems carry the fields and spend the budget too: 404, 400, 403', async () => {
      const { token } = await createCustomer(t);
      const missing = await get(t, token, '/orders/999999999');
      assert.equal(missing.statusCode, 404);
      expectFields(missing, 'reads', BUDGETS.reads, 2);
      const invalid = await get(t, token, '/orders?sort=nonsense');
      assert.equal(invalid.statusCode, 400);
      expectFields(invalid, 'reads', BUDGETS.reads, 1);
      const forbidden = await get(t, token, '/users/1/orders');
      assert.equal(forbidden.statusCode, 403);
      expectFields(forbidden, 'reads', BUDGETS.reads, 0);
      expectRateLimited(await get(t, token, '/orders'), 'reads', BUDGETS.reads, '/orders');
    });

    test('reads, writes and payments are separate budgets', async () => {
      const { token } = await createCustomer(t);
      const product = await createProduct(t.db);
      for (let i = 0; i < BUDGETS.reads; i++) assert.equal((await get(t, token, '/orders')).statusCode, 200);
      expectRateLimited(await get(t, token, '/orders'), 'reads', BUDGETS.reads, '/orders');
      const order = await t.request(token, { method: 'POST', url: '/orders', payload: { productId: product.id, qty: 1 } });
      assert.equal(order.statusCode, 201, order.body);
      expectFields(order, 'writes', BUDGETS.writes, BUDGETS.writes - 1);
      const payment = await postPayment(t, token, { amount: 500, currency: 'EUR' });
      assert.equal(payment.statusCode, 201, payment.body);
      expectFields(payment, 'payments', BUDGETS.payments, BUDGETS.payments - 1);
    });

    test('writes: POST, PUT and DELETE share one budget', async () => {
      const { token } = await createCustomer(t);
      const product = await createProduct(t.db);
      const created = await t.request(token, { method: 'POST', url: '/orders', payload: { productId: product.id, qty: 1 } });
      assert.equal(created.statusCode, 201, created.body);
      const url = `/orders/${created.json().id}`;
      const deleted = await t.request(token, { method: 'DELETE', url });
      assert.equal(deleted.statusCode, 204, deleted.body);
      expectFields(deleted, 'writes', BUDGETS.writes, 0);
      const refused = await t.request(token, { method: 'PUT', url, payload: { productId: product.id, qty: 2, status: 'pending' } });
      expectRateLimited(refused, 'writes', BUDGETS.writes, url);
    });

    test('payments: payments and refunds share one budget; a refused one is never performed', async () => {
      const staff = await createStaffToken(t);
      const first = await postPayment(t, staff, { amount: 700, currency: 'EUR' });
      assert.equal(first.statusCode, 201, first.body);
      expectFields(first, 'payments', BUDGETS.payments, 1);
      const refund = await postRefund(t, staff, first.json().id, { amount: 100 });
      assert.equal(refund.statusCode, 201, refund.body);
      expectFields(refund, 'payments', BUDGETS.payments, 0);
      const key = 'refused-payment-key';
      const refused = await postPayment(t, staff, { amount: 800, currency: 'EUR' }, { key });
      expectRateLimited(refused, 'payments', BUDGETS.payments, '/payments');
      const { rows } = await t.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
      assert.deepEqual(rows, [], 'the refused request claimed no idempotency key');
      const { rows: payments } = await t.db.query('SELECT 1 FROM payments WHERE amount = 800');
      assert.deepEqual(payments, []);
    });

    test('callers do not share a budget: another user, or the same user through another client', async () => {
      const { user, token } = await createCustomer(t);
      for (let i = 0; i < BUDGETS.reads; i++) assert.equal((await get(t, token, '/orders')).statusCode, 200);
      expectRateLimited(await get(t, token, '/orders'), 'reads', BUDGETS.reads, '/orders');
      const other = await createCustomer(t);
      expectFields(await get(t, other.token, '/orders'), 'reads', BUDGETS.reads, BUDGETS.reads - 1);
      const throughAnotherClient = await t.token({ userId: user.id, clientId: 'another-client' });
      expectFields(await get(t, throughAnotherClient, '/orders'), 'reads', BUDGETS.reads, BUDGETS.reads - 1);
    });

    test('without a valid token the budget is the client IP’s: 401s count, then 429', async () => {
      const from = (remoteAddress: string, authorization?: string) =>
        t.request(undefined, { method: 'GET', url: '/orders', remoteAddress, headers: authorization ? { authorization } : {} });
      const first = await from('192.0.2.10');
      assert.equal(first.statusCode, 401);
      expectFields(first, 'reads', BUDGETS.reads, 2);
      // A token that fails verification is no token: the same IP's budget.
      const forged = await from('192.0.2.10', 'Bearer not.a.token');
      assert.equal(forged.statusCode, 401);
      expectFields(forged, 'reads', BUDGETS.reads, 1);
      assert.equal((await from('192.0.2.10')).statusCode, 401);
      expectRateLimited(await from('192.0.2.10'), 'reads', BUDGETS.reads, '/orders');
      // Another address has its own budget; a valid token from the spent one spends its caller's.
      expectFields(await from('192.0.2.11'), 'reads', BUDGETS.reads, 2);
      const { token } = await createCustomer(t);
      const caller = await t.request(token, { method: 'GET', url: '/orders', remoteAddress: '192.0.2.10' });
      assert.equal(caller.statusCode, 200);
      expectFields(caller, 'reads', BUDGETS.reads, 2);
    });

    test('IPv6 clients are counted by their /64: one host cannot spread over its own addresses', async () => {
      const from = (remoteAddress: string) => t.request(undefined, { method: 'GET', url: '/products', remoteAddress });
      expectFields(await from('2001:db8:1:2::1'), 'reads', BUDGETS.reads, 2);
      expectFields(await from('2001:db8:1:2::ffff'), 'reads', BUDGETS.reads, 1);
      expectFields(await from('2001:db8:1:3::1'), 'reads', BUDGETS.reads, 2);
    });
  });
}
