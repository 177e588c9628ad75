// Operational endpoints: liveness, readiness (database reachable), Prometheus metrics, the JWKS of
// our issuer, and the HTML pages behind every problem type URI.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createSigningKey, findActiveSigningKey } from '../../src/auth/keys.store.ts';
import { ERRORS, problemSlug, type ErrorCode } from '../../src/core/errors.ts';
import { DEFAULT_CSP } from '../../src/http/security-headers.ts';
import { PAGE_HEADERS } from '../../src/auth/pages.ts';
import { createCustomer } from '../helpers/actors.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { makeDatabaseUnreachable, RECONNECT_BOUND_MS } from '../helpers/db.ts';
import { eventually } from '../helpers/webhooks.ts';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];

describe('operational endpoints', () => {
  let t: TestApp;
  // The readiness test closes the embedded database; teardown must then not close it again.
  let pgliteClosed = false;

  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    if (pgliteClosed) await t.app.close();
    else await t.close();
  });

  test('GET /livez → 200 {status: ok}, never cached, no token needed', async () => {
    const response = await t.request(undefined, { method: 'GET', url: '/livez' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.deepEqual(response.json(), { status: 'ok' });
  });

  test('GET /readyz → 200 {status: ok} while the database answers', async () => {
    const response = await t.request(undefined, { method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.deepEqual(response.json(), { status: 'ok' });
  });

  test('GET /metrics → Prometheus text with the request duration histogram per route and status', async () => {
    // Requests to observe: one matched route, one unknown path (reported under "unmatched", never the raw URL).
    assert.equal((await t.request(undefined, { method: 'GET', url: '/livez' })).statusCode, 200);
    assert.equal((await t.request(undefined, { method: 'GET', url: '/no-such-path-42' })).statusCode, 404);
    const response = await t.request(undefined, { method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(response.headers['cache-control'], 'no-store');
    const text = response.body;
    assert.match(text, /^# HELP orderpay_http_request_duration_seconds HTTP request duration by method, route pattern and status code\.$/m);
    assert.match(text, /^# TYPE orderpay_http_request_duration_seconds histogram$/m);
    assert.match(text, /^orderpay_http_request_duration_seconds_count\{method="GET",route="\/livez",status="200"\} [1-9]\d*$/m);
    assert.match(text, /^orderpay_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/livez",status="200"\} [1-9]\d*$/m);
    assert.match(text, /^orderpay_http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} [1-9]\d*$/m);
    assert.ok(!text.includes('no-such-path-42'), 'raw URLs must not become label values');
    // Process defaults share the prefix.
    assert.match(text, /^# TYPE orderpay_process_cpu_user_seconds_total counter$/m);
  });

  test('GET /oauth/jwks → the public half of every published key, without private members', async () => {
    const active = (await findActiveSigningKey(t.db))!;
    const rotated = await createSigningKey(t.db);
    const expired = await createSigningKey(t.db);
    await t.db.query(
      "UPDATE signing_keys SET retired_at = now() - interval '2 days', expires_at = now() - interval '1 day' WHERE kid = $1",
      [expired.kid],
    );

    const response = await t.request(undefined, { method: 'GET', url: '/oauth/jwks' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/jwk-set+json; charset=utf-8');
    assert.equal(response.headers['cache-control'], 'public, max-age=60');
    const { keys } = response.json() as { keys: Record<string, unknown>[] };
    const kids = keys.map((k) => k.kid);
    assert.ok(kids.includes(active.kid));
    assert.ok(kids.includes(rotated.kid));
    assert.ok(!kids.includes(expired.kid), 'an expired key is no longer published');
    for (const key of keys) {
      for (const member of PRIVATE_MEMBERS) assert.equal(key[member], undefined, `JWK ${String(key.kid)} publishes "${member}"`);
    }
    const published = keys.find((k) => k.kid === rotated.kid)!;
    assert.deepEqual(published, { ...rotated.publicJwk });
    assert.deepEqual(Object.keys(published).sort(), ['alg', 'e', 'kid', 'kty', 'n', 'use']);
    assert.equal(published.kty, 'RSA');
    assert.equal(published.alg, 'RS256');
    assert.equal(published.use, 'sig');
    await t.db.query('DELETE FROM signing_keys WHERE kid = ANY($1)', [[rotated.kid, expired.kid]]);
  });

  test('every response says nosniff and may not be framed; pages with a policy of their own keep it', async () => {
    const { token } = await createCustomer(t);
    const responses = [
      await t.request(undefined, { method: 'GET', url: '/livez' }),
      await t.request(token, { method: 'GET', url: '/v1/orders' }),
      await t.request(undefined, { method: 'GET', url: '/v1/orders' }),
      await t.request(undefined, { method: 'GET', url: '/nope' }),
      await t.app.inject({ method: 'GET', url: '/%E0%A4%A' }),
      await t.app.inject({ method: 'GET', url: '/openapi.json' }),
      await t.app.inject({ method: 'GET', url: '/docs/migrating-to-v2' }),
      await t.app.inject({ method: 'GET', url: '/oauth/jwks' }),
    ];
    for (const response of responses) {
      const what = `${response.raw.req.url} → ${response.statusCode}`;
      assert.ok(response.statusCode < 500, what);
      assert.equal(response.headers['x-content-type-options'], 'nosniff', what);
      assert.equal(response.headers['content-security-policy'], DEFAULT_CSP, what);
      assert.equal(response.headers['x-frame-options'], 'DENY', what);
    }
    // The sign-in pages allow their own stylesheet (src/auth/pages.ts).
    const signIn = await t.app.inject({ method: 'GET', url: '/oauth/interaction/unknown' });
    assert.equal(signIn.headers['content-security-policy'], PAGE_HEADERS['content-security-policy']);
    assert.equal(signIn.headers['x-content-type-options'], 'nosniff');
  });

  test('GET /problems/<slug> serves an HTML page for every catalogue code', async () => {
    const codes = Object.keys(ERRORS) as ErrorCode[];
    assert.ok(codes.length > 0);
    for (const code of codes) {
      const url = `/problems/${problemSlug(code)}`;
      const response = await t.request(undefined, { method: 'GET', url });
      assert.equal(response.statusCode, 200, url);
      assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(response.headers['cache-control'], 'public, max-age=86400');
      // The page loads nothing, and no other site may frame it or have it sniffed as something else.
      assert.equal(response.headers['content-security-policy'], DEFAULT_CSP);
      assert.equal(response.headers['x-frame-options'], 'DENY');
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      const html = response.body;
      const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
      assert.ok(html.startsWith('<!doctype html>'), url);
      assert.ok(html.includes(`<title>${code}</title>`), url);
      assert.ok(html.includes(`<h1>${escapeHtml(ERRORS[code].title)}</h1>`), url);
      assert.ok(html.includes(`<code>${code}</code> — HTTP ${ERRORS[code].status}`), url);
      assert.ok(html.includes(escapeHtml(ERRORS[code].description)), url);
    }
  });

  test('every problem type URI a problem body carries resolves to its page', async () => {
    const response = await t.request(undefined, { method: 'GET', url: '/no-such-path' });
    const type = new URL(response.json().type as string);
    assert.equal(type.origin, 'http://orderpay.test');
    const page = await t.request(undefined, { method: 'GET', url: type.pathname });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<code>ROUTE_NOT_FOUND<\/code>/);
  });

  test('an unknown problem slug → 404 ROUTE_NOT_FOUND problem (and markup in it is not reflected as HTML)', async () => {
    for (const slug of ['no-such-problem', 'ROUTE_NOT_FOUND', 'route_not_found', '%3Cscript%3E']) {
      const url = `/problems/${slug}`;
      const response = await t.request(undefined, { method: 'GET', url });
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.deepEqual(response.json(), {
        type: 'http://orderpay.test/problems/route-not-found',
        title: 'Not found',
        status: 404,
        detail: `No problem type ${decodeURIComponent(slug)}.`,
        instance: url,
        code: 'ROUTE_NOT_FOUND',
        requestId: response.headers['x-request-id'],
      });
    }
  });

  // Last: it takes the database away.
  test('GET /readyz → 503 SERVICE_UNAVAILABLE problem with Retry-After when the database is unreachable; /livez stays 200', async () => {
    const restore = await makeDatabaseUnreachable(t.db);
    pgliteClosed = t.db.kind !== 'postgres';
    try {
      const response = await t.request(undefined, { method: 'GET', url: '/readyz' });
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.equal(response.headers['retry-after'], '1');
      assert.deepEqual(response.json(), {
        type: 'http://orderpay.test/problems/service-unavailable',
        title: 'Service unavailable',
        status: 503,
        detail: 'The database is not reachable.',
        instance: '/readyz',
        code: 'SERVICE_UNAVAILABLE',
        requestId: response.headers['x-request-id'],
      });
      const live = await t.request(undefined, { method: 'GET', url: '/livez' });
      assert.equal(live.statusCode, 200);
    } finally {
      await restore();
    }
    if (t.db.kind === 'postgres') {
      // Readiness comes back by itself once the database accepts connections again (behind a
      // pooler, once it retries its login to the server).
      await eventually(
        async () => (await t.request(undefined, { method: 'GET', url: '/readyz' })).statusCode === 200,
        `/readyz 200 again within ${RECONNECT_BOUND_MS} ms`,
        RECONNECT_BOUND_MS,
      );
    }
  });
});
