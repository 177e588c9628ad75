// The authorization server without its database: every /oauth endpoint answers 503 with
// Retry-After and RFC 6749's temporarily_unavailable, never the router's 404 (which a database
// error of the /oauth rate limit used to fall through to).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { makeDatabaseUnreachable, RECONNECT_BOUND_MS } from '../../helpers/db.ts';
import { eventually } from '../../helpers/webhooks.ts';

describe('/oauth while the database is unreachable', () => {
  let t: TestApp;
  let restore = async () => {};
  before(async () => {
    t = await startTestApp();
    // Reachable first: the provider is built and answers discovery.
    const discovery = await t.app.inject({ method: 'GET', url: '/oauth/.well-known/openid-configuration' });
    assert.equal(discovery.statusCode, 200);
    restore = await makeDatabaseUnreachable(t.db);
  });
  after(async () => {
    await restore();
    if (t.db.kind === 'postgres') await t.close();
    else await t.app.close();
  });

  const requests: [string, InjectOptions][] = [
    [
      'token',
      {
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=client_credentials&client_id=x&client_secret=y',
      },
    ],
    ['authorize', { method: 'GET', url: '/oauth/authorize?client_id=x&response_type=code&scope=openid' }],
    ['discovery', { method: 'GET', url: '/oauth/.well-known/openid-configuration' }],
    ['RFC 8414 metadata', { method: 'GET', url: '/.well-known/oauth-authorization-server/oauth' }],
    ['an unknown /oauth path', { method: 'GET', url: '/oauth/nothing-here' }],
  ];
  for (const [name, request] of requests) {
    test(`${name} → 503 temporarily_unavailable with Retry-After`, async () => {
      const response = await t.app.inject(request);
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.headers['retry-after'], '1');
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.match(String(response.headers['content-type']), /^application\/json/);
      assert.deepEqual(response.json(), {
        error: 'temporarily_unavailable',
        error_description: 'The authorization server cannot reach its database; retry shortly.',
      });
    });
  }

  test('once the database is back (PostgreSQL), the same requests are served again', async (context) => {
    if (t.db.kind !== 'postgres') {
      context.diagnostic('the embedded database cannot come back once closed: checked on PostgreSQL');
      return;
    }
    await restore();
    restore = async () => {};
    // Directly connected, at once; behind a pooler, once it retries its login to the server.
    await eventually(
      async () => (await t.app.inject({ method: 'GET', url: '/oauth/.well-known/openid-configuration' })).statusCode === 200,
      `discovery served again within ${RECONNECT_BOUND_MS} ms`,
      RECONNECT_BOUND_MS,
    );
  });
});
