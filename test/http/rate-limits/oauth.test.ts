// The authorization server's per-IP request limit on the API's mechanism (@fastify/rate-limit over
// the same counters), in the database and in Redis: the draft's fields on the provider's own
// answers, and over the limit RFC 6749's JSON error (§5.2) with 429 and Retry-After.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { OAUTH_REQUESTS_PER_IP } from '../../../src/auth/rate-limits.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { dropRedisKeys } from '../../helpers/redis.ts';
import { frozenClock, STORES } from './rate-limits.ts';

const LIMIT = OAUTH_REQUESTS_PER_IP.limit;

for (const store of STORES) {
  describe(`/oauth requests per client IP, counted in ${store.name}`, () => {
    let t: TestApp;
    const limits = store.limits({ reads: 5, writes: 5, payments: 5 });
    before(async () => {
      t = await startTestApp({ rateLimits: limits }, undefined, { rateLimitNow: frozenClock });
    });
    after(async () => {
      await t.close();
      await dropRedisKeys(limits.redisKeyPrefix);
    });

    const discover = (remoteAddress: string, url = '/oauth/.well-known/openid-configuration') =>
      t.app.inject({ method: 'GET', url, remoteAddress });

    test(`request ${LIMIT + 1} of an IP gets 429 temporarily_unavailable; another IP is served`, async () => {
      for (let i = 1; i <= LIMIT; i++) {
        // Both paths of the provider's metadata count against the one budget.
        const res = await discover('198.51.100.7', i % 2 ? undefined : '/.well-known/oauth-authorization-server/oauth');
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['ratelimit-policy'], `"oauth";q=${LIMIT};w=60`);
        assert.match(String(res.headers.ratelimit), new RegExp(`^"oauth";r=${LIMIT - i};t=\\d+$`));
      }
      const limited = await discover('198.51.100.7');
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.equal(limited.headers['cache-control'], 'no-store');
      assert.match(String(limited.headers['content-type']), /^application\/json/);
      assert.match(String(limited.headers.ratelimit), /^"oauth";r=0;t=\d+$/);
      assert.deepEqual(limited.json(), {
        error: 'temporarily_unavailable',
        error_description: `Too many requests; retry in ${limited.headers['retry-after']} seconds.`,
      });
      assert.equal((await discover('198.51.100.8')).statusCode, 200);
    });

    test('the API does not spend the /oauth budget, nor /oauth the API’s', async () => {
      const api = await t.app.inject({ method: 'GET', url: '/orders', remoteAddress: '198.51.100.9' });
      assert.equal(api.statusCode, 401);
      assert.equal(api.headers['ratelimit-policy'], '"reads";q=5;w=60');
      const oauth = await discover('198.51.100.9');
      assert.match(String(oauth.headers.ratelimit), new RegExp(`^"oauth";r=${LIMIT - 1};t=\\d+$`));
    });
  });
}
