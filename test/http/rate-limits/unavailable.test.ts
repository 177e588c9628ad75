// The rate limits while their store cannot be reached (docs/decisions/0033-rate-limits.md): reads
// and writes go through unlimited (fail open), payments and refunds are refused with 503
// RATE_LIMIT_UNAVAILABLE and Retry-After (fail closed), /oauth answers 503 temporarily_unavailable.
// No other 5xx. Redis on a closed port, and the database store's database made unreachable.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCustomer, createStaffToken, get } from '../../helpers/actors.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { makeDatabaseUnreachable, serverUrl } from '../../helpers/db.ts';
import { createProduct } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { UNREACHABLE_REDIS_URL, uniqueRedisPrefix } from '../../helpers/redis.ts';
import { makePayment, postPayment, postRefund } from '../payments/payments.ts';
import { frozenClock, WINDOW_SECONDS } from './rate-limits.ts';

const BUDGETS = { windowSeconds: WINDOW_SECONDS, reads: 5, writes: 5, payments: 5 };
const POLICY = (name: string) => `"${name}";q=5;w=${WINDOW_SECONDS}`;

function expectPaymentsRefused(res: Awaited<ReturnType<typeof postPayment>>, instance: string): void {
  expectProblem(
    res,
    503,
    'RATE_LIMIT_UNAVAILABLE',
    instance,
    'The payments limit cannot be counted just now; nothing was done. Retry shortly.',
  );
  assert.equal(res.headers['retry-after'], '1');
  assert.equal(res.headers['ratelimit-policy'], POLICY('payments'));
  assert.equal(res.headers.ratelimit, undefined, 'nothing was counted, so nothing is said to be left');
}

describe('rate limits counted in Redis, Redis unreachable (a closed port)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ rateLimits: { ...BUDGETS, redisUrl: UNREACHABLE_REDIS_URL, redisKeyPrefix: uniqueRedisPrefix() } });
  });
  after(() => t.close());

  test('reads go through, unlimited: 200 with the policy and no RateLimit', async () => {
    const { token } = await createCustomer(t);
    for (let i = 0; i < BUDGETS.reads + 2; i++) {
      const res = await get(t, token, '/orders');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['ratelimit-policy'], POLICY('reads'));
      assert.equal(res.headers.ratelimit, undefined);
    }
    const anonymous = await get(t, undefined, '/orders');
    assert.equal(anonymous.statusCode, 401, 'without a token: still 401, not a 5xx');
  });

  test('writes go through, unlimited', async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db);
    for (let i = 0; i < BUDGETS.writes + 1; i++) {
      const res = await t.request(token, { method: 'POST', url: '/orders', payload: { productId: product.id, qty: 1 } });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['ratelimit-policy'], POLICY('writes'));
    }
  });

  test('payments and refunds are refused: 503 RATE_LIMIT_UNAVAILABLE with Retry-After, nothing performed', async () => {
    const staff = await createStaffToken(t);
    const key = 'payment-while-redis-is-down';
    expectPaymentsRefused(await postPayment(t, staff, { amount: 900, currency: 'EUR' }, { key }), '/payments');
    assert.deepEqual((await t.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key])).rows, []);
    assert.deepEqual((await t.db.query('SELECT 1 FROM payments WHERE amount = 900')).rows, []);
    expectPaymentsRefused(await postRefund(t, staff, 1, { amount: 1 }), '/payments/1/refunds');
  });

  test('/oauth answers 503 temporarily_unavailable: its limits guard the sign-in, never waived', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/oauth/.well-known/openid-configuration' });
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.json(), {
      error: 'temporarily_unavailable',
      error_description: 'The authorization server cannot reach its rate-limit store; retry shortly.',
    });
  });
});

describe(`rate limits counted in the database (${serverUrl ? 'PostgreSQL' : 'PGlite'}), the database unreachable`, () => {
  let t: TestApp;
  let restore = async () => {};
  let customer: string;
  let staff: string;
  before(async () => {
    t = await startTestApp({ rateLimits: { ...BUDGETS, redisUrl: undefined, redisKeyPrefix: 'unused:' } }, undefined, {
      rateLimitNow: frozenClock,
    });
    customer = (await createCustomer(t)).token;
    staff = await createStaffToken(t);
    // The signing keys are loaded once reachable, as in a running process.
    await makePayment(t, staff, { amount: 100, currency: 'EUR' });
    restore = await makeDatabaseUnreachable(t.db);
  });
  after(async () => {
    await restore();
    if (t.db.kind === 'postgres') await t.close();
    else await t.app.close();
  });

  test('payments are refused by the limit before anything else: 503 RATE_LIMIT_UNAVAILABLE', async () => {
    expectPaymentsRefused(await postPayment(t, staff, { amount: 900, currency: 'EUR' }), '/payments');
  });

  test('reads and writes pass the limit: what answers 503 is their own use of the database', async () => {
    const read = await get(t, customer, '/orders');
    assert.equal(read.statusCode, 503, read.body);
    assert.equal(read.json().code, 'SERVICE_UNAVAILABLE');
    assert.equal(read.headers['ratelimit-policy'], POLICY('reads'));
    const write = await t.request(customer, { method: 'POST', url: '/orders', payload: { productId: 1, qty: 1 } });
    assert.equal(write.statusCode, 503, write.body);
    assert.equal(write.json().code, 'SERVICE_UNAVAILABLE');
  });
});
