// CORS (the Fetch standard's CORS protocol) for browser apps on other origins: the allow-list from
// ORDERPAY_CORS_ORIGINS, preflights answered before versioning, authentication, rate limits and the
// router, headers on every answer to an allowed origin, none for any other; /oauth on the same list.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createPublicClient } from '../../src/auth/clients.store.ts';
import { loadConfig } from '../../src/config.ts';
import { PUBLIC_URL, startTestApp, type TestApp } from '../helpers/app.ts';
import { createCustomer } from '../helpers/actors.ts';
import { createProduct, createUser } from '../helpers/factories.ts';
import { expectProblem } from '../helpers/problems.ts';

const APP = 'https://shop.example.com';
const OTHER_APP = 'https://admin.example.com';
const STRANGER = 'https://evil.example';

const ALLOWED_HEADERS = 'Authorization, DPoP, Content-Type, Accept, Idempotency-Key, If-Match, If-None-Match, X-Request-Id';
const EXPOSED_HEADERS =
  'ETag, Location, Link, Idempotent-Replayed, Retry-After, RateLimit, RateLimit-Policy, Api-Version, Deprecation, Sunset, WWW-Authenticate, Allow, X-Request-Id';

/** The Access-Control-* headers of a response. */
function corsHeaders(response: LightMyRequestResponse): Record<string, unknown> {
  return Object.fromEntries(Object.entries(response.headers).filter(([name]) => name.startsWith('access-control-')));
}

/** What an allowed origin's answers carry (a preflight carries more). */
function assertCorsAnswer(response: LightMyRequestResponse, origin: string, what: string): void {
  assert.deepEqual(
    corsHeaders(response),
    { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS },
    `${what}: ${response.statusCode} ${response.body}`,
  );
}

const preflight = (t: TestApp, url: string, origin: string, method = 'GET', requestHeaders?: string) =>
  t.app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': method,
      // Chromium sends Accept: */* and no credentials with a preflight.
      accept: '*/*',
      ...(requestHeaders ? { 'access-control-request-headers': requestHeaders } : {}),
    },
  });

describe('CORS: an allow-list of origins (ORDERPAY_CORS_ORIGINS)', () => {
  let t: TestApp;
  before(async () => {
    const cors = loadConfig({ NODE_ENV: 'production', ORDERPAY_CORS_ORIGINS: `${APP}, ${OTHER_APP}` }).cors;
    // Tight read budget: the preflights below must not use it up.
    t = await startTestApp({ cors, rateLimits: { ...loadConfig({}).rateLimits, reads: 3 } });
  });
  after(() => t.close());

  test('a preflight from an allowed origin → 204 from the hook: the methods, each request header, exposed headers, max-age, no credentials', async () => {
    for (const [url, method] of [
      ['/v1/orders', 'POST'],
      ['/v2/orders', 'GET'],
      ['/orders', 'POST'],
      ['/v2/orders/1', 'PUT'],
      ['/v1/orders/1', 'DELETE'],
      ['/v2/payments', 'POST'],
      ['/products/1', 'GET'],
    ] as const) {
      const response = await preflight(t, url, APP, method, 'authorization,content-type,idempotency-key,if-match,if-none-match,accept');
      assert.equal(response.statusCode, 204, `${method} ${url}: ${response.body}`);
      assert.equal(response.body, '');
      assert.deepEqual(corsHeaders(response), {
        'access-control-allow-origin': APP,
        'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-expose-headers': EXPOSED_HEADERS,
        'access-control-max-age': '7200',
      });
      assert.equal(response.headers.vary, 'Origin');
      // Not the API's call: no version resolved, no budget counted.
      assert.equal(response.headers['api-version'], undefined);
      assert.equal(response.headers.ratelimit, undefined);
    }
    for (const header of ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'Accept']) {
      assert.ok(ALLOWED_HEADERS.split(', ').includes(header), header);
    }
    for (const header of ['ETag', 'Location', 'Link', 'Idempotent-Replayed', 'Retry-After', 'Deprecation', 'Sunset']) {
      assert.ok(EXPOSED_HEADERS.split(', ').includes(header), header);
    }
  });

  test('a preflight needs no token, is not counted against the rate limits, and is not refused by versioning or the router', async () => {
    const { token } = await createCustomer(t);
    // Accept naming a version the server lacks would be a 406 for the call; the preflight is answered.
    const versioned = await t.app.inject({
      method: 'OPTIONS',
      url: '/orders',
      headers: { origin: APP, 'access-control-request-method': 'GET', accept: 'application/vnd.orderpay.v9+json' },
    });
    assert.equal(versioned.statusCode, 204);
    for (let i = 0; i < 5; i++) assert.equal((await preflight(t, '/v1/orders', APP)).statusCode, 204);
    // A path with no route at all: the preflight is answered, the call would be the 404.
    assert.equal((await preflight(t, '/v1/nowhere', APP)).statusCode, 204);
    // The budget of 3 reads is untouched: the first call leaves 2.
    const call = await t.request(token, { method: 'GET', url: '/v1/orders', headers: { origin: APP } });
    assert.equal(call.statusCode, 200);
    assert.match(String(call.headers.ratelimit), /^"reads";r=2;t=\d+$/);
  });

  test('a preflight from an origin not on the list → the router’s 405, without a single Access-Control-* header', async () => {
    for (const origin of [STRANGER, 'https://shop.example.com.evil.example', 'http://shop.example.com', 'null']) {
      const response = await preflight(t, '/v1/orders', origin, 'POST', 'authorization');
      expectProblem(response, 405, 'METHOD_NOT_ALLOWED', '/v1/orders', 'OPTIONS is not supported on /v1/orders; use GET, HEAD, POST.');
      assert.deepEqual(corsHeaders(response), {}, origin);
      assert.equal(response.headers.vary, 'Origin');
    }
  });

  test('an OPTIONS that is no preflight (no Access-Control-Request-Method) stays a 405 with Allow, readable by the allowed origin', async () => {
    const response = await t.app.inject({ method: 'OPTIONS', url: '/v1/orders', headers: { origin: APP } });
    expectProblem(response, 405, 'METHOD_NOT_ALLOWED', '/v1/orders', 'OPTIONS is not supported on /v1/orders; use GET, HEAD, POST.');
    assert.equal(response.headers.allow, 'GET, HEAD, POST');
    assertCorsAnswer(response, APP, 'OPTIONS');
  });

  test('the calls of an allowed origin carry its Allow-Origin and the exposed headers, successes and problems alike; Vary: Origin, Accept', async () => {
    const { token } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 700 });
    const placed = await t.request(token, {
      method: 'POST',
      url: '/v2/orders',
      headers: { origin: OTHER_APP, 'idempotency-key': 'cors-order-1', 'content-type': 'application/json' },
      payload: { items: [{ productId: product.id, qty: 1 }] },
    });
    assert.equal(placed.statusCode, 201, placed.body);
    assertCorsAnswer(placed, OTHER_APP, 'POST /v2/orders');
    assert.ok(placed.headers.location && placed.headers.etag);
    assert.equal(placed.headers.vary, 'Origin, Accept');

    const read = await t.request(token, {
      method: 'GET',
      url: String(placed.headers.location).slice(PUBLIC_URL.length),
      headers: { origin: APP },
    });
    assert.equal(read.statusCode, 200);
    assertCorsAnswer(read, APP, 'GET the order');
    assert.equal(read.headers.vary, 'Origin, Accept');

    const unauthenticated = await t.app.inject({ method: 'GET', url: '/v1/orders', headers: { origin: APP } });
    assert.equal(unauthenticated.statusCode, 401);
    assertCorsAnswer(unauthenticated, APP, '401');
    assert.ok(unauthenticated.headers['www-authenticate']);

    const missing = await t.app.inject({ method: 'GET', url: '/v1/nowhere', headers: { origin: APP } });
    expectProblem(missing, 404, 'ROUTE_NOT_FOUND', '/v1/nowhere', 'No resource at /v1/nowhere.');
    assertCorsAnswer(missing, APP, '404');
  });

  test('calls from another origin, or without Origin, carry no Access-Control-* header, and still vary by Origin', async () => {
    const { token } = await createCustomer(t);
    for (const headers of [{ origin: STRANGER }, {}]) {
      const response = await t.request(token, { method: 'GET', url: '/v2/products', headers });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(corsHeaders(response), {}, JSON.stringify(headers));
      assert.equal(response.headers.vary, 'Origin, Accept');
    }
  });
});

describe('CORS in the OpenAPI documents', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('every answer of every operation, in every version, lists Access-Control-Allow-Origin and the exposed headers as sent', async () => {
    for (const url of ['/v1/openapi.json', '/v2/openapi.json']) {
      const document = (await t.app.inject({ url })).json() as {
        paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, { $ref: string }> }> }>>;
        components: { headers: Record<string, { schema: { enum?: string[] } }> };
      };
      assert.deepEqual(document.components.headers['Access-Control-Expose-Headers']?.schema.enum, [EXPOSED_HEADERS]);
      assert.ok(document.components.headers['Access-Control-Allow-Origin']);
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (const [status, response] of Object.entries(operation.responses)) {
            const where = `${url} ${method} ${path} ${status}`;
            assert.equal(
              response.headers?.['Access-Control-Allow-Origin']?.$ref,
              '#/components/headers/Access-Control-Allow-Origin',
              where,
            );
            assert.equal(
              response.headers?.['Access-Control-Expose-Headers']?.$ref,
              '#/components/headers/Access-Control-Expose-Headers',
              where,
            );
          }
        }
      }
    }
  });
});

describe('CORS at /oauth: the same allow-list, intersected with the client’s redirect URIs', () => {
  let t: TestApp;
  let clientId: string;
  before(async () => {
    t = await startTestApp({ cors: loadConfig({ NODE_ENV: 'production', ORDERPAY_CORS_ORIGINS: `${APP},${OTHER_APP}` }).cors });
    ({ clientId } = await createPublicClient(t.db, { name: 'Shop', redirectUris: [`${APP}/callback`], scopes: ['openid', 'orders:read'] }));
  });
  after(() => t.close());

  const refresh = (origin: string) =>
    t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'not-a-token', client_id: clientId }).toString(),
    });

  test('preflights: answered by the provider for an allowed origin; another origin gets the 405 and no Access-Control-* header', async () => {
    for (const [url, method] of [
      ['/oauth/token', 'POST'],
      ['/oauth/revoke', 'POST'],
      ['/oauth/introspect', 'POST'],
      ['/oauth/userinfo', 'GET'],
    ] as const) {
      const allowed = await preflight(t, url, APP, method, 'authorization');
      assert.equal(allowed.statusCode, 204, `${url}: ${allowed.body}`);
      assert.equal(allowed.headers['access-control-allow-origin'], APP);
      assert.match(String(allowed.headers['access-control-allow-methods']), new RegExp(method));
      // Not counted against the per-IP /oauth budget.
      assert.equal(allowed.headers['ratelimit-policy'], undefined);

      const refused = await preflight(t, url, STRANGER, method, 'authorization');
      assert.equal(refused.statusCode, 405, url);
      assert.deepEqual(corsHeaders(refused), {}, url);
    }
  });

  test("the token endpoint answers an allowed origin that is the client's, and the server's own origin; other origins get no Allow-Origin", async () => {
    const own = await refresh(APP);
    assert.equal(own.statusCode, 400);
    assert.equal(own.json().error, 'invalid_grant');
    assert.equal(own.headers['access-control-allow-origin'], APP);

    // Same-origin pages (/docs) send Origin on a POST too: no cross-origin request, never refused.
    const sameOrigin = await refresh(PUBLIC_URL);
    assert.equal(sameOrigin.json().error, 'invalid_grant');

    // On the list, but not where this client's pages are; and a stranger.
    for (const origin of [OTHER_APP, STRANGER]) {
      const refused = await refresh(origin);
      assert.equal(refused.statusCode, 400, origin);
      assert.deepEqual(refused.json(), {
        error: 'invalid_request',
        error_description: `origin ${origin} not allowed for client: ${clientId}`,
      });
      assert.equal(refused.headers['access-control-allow-origin'], undefined, origin);
    }
  });

  test("userinfo: readable by the client's origin; another origin, allowed or not, is refused and cannot read the answer", async () => {
    const { id: userId } = await createUser(t.db);
    const token = await t.token({ userId, clientId, scopes: ['openid', 'profile'] });
    const userinfo = (origin: string, authorization = `Bearer ${token}`) =>
      t.app.inject({ method: 'GET', url: '/oauth/userinfo', headers: { origin, authorization } });

    const own = await userinfo(APP);
    assert.equal(own.statusCode, 200, own.body);
    assert.equal(own.json().sub, String(userId));
    assertCorsAnswer(own, APP, 'userinfo');
    assert.equal(own.headers.vary, 'Origin');
    // The server's own pages (/docs) are no cross-origin caller: answered, no CORS needed.
    const sameOrigin = await userinfo(PUBLIC_URL);
    assert.equal(sameOrigin.statusCode, 200);
    assert.deepEqual(corsHeaders(sameOrigin), {});

    for (const origin of [OTHER_APP, STRANGER]) {
      const refused = await userinfo(origin);
      assert.equal(refused.statusCode, 400, origin);
      assert.deepEqual(refused.json(), { error: 'invalid_request', error_description: "the request's Origin is not one of this client's" });
      assert.equal(
        refused.headers['www-authenticate'],
        `Bearer realm="orderpay", error="invalid_request", error_description="the request's Origin is not one of this client's"`,
      );
      assert.deepEqual(corsHeaders(refused), {}, origin);
    }
    // Before the token names its client, an allowed origin may read why it was refused.
    const unauthenticated = await userinfo(APP, 'Bearer garbage');
    assert.equal(unauthenticated.statusCode, 401);
    assertCorsAnswer(unauthenticated, APP, 'userinfo 401');
  });

  test('public metadata (discovery, JWKS) is readable from any origin', async () => {
    const discovery = await t.app.inject({ url: '/oauth/.well-known/openid-configuration', headers: { origin: STRANGER } });
    assert.equal(discovery.headers['access-control-allow-origin'], STRANGER);
    const jwks = await t.app.inject({ url: '/oauth/jwks', headers: { origin: STRANGER } });
    assert.equal(jwks.headers['access-control-allow-origin'], '*');
  });
});

// One app per suite: an app that is ready measures its event loop, and another one starting beside
// it would block that loop long enough to have its requests shed.
describe('CORS by default in development: loopback origins', () => {
  let development: TestApp;
  before(async () => {
    development = await startTestApp({ cors: loadConfig({ NODE_ENV: 'development' }).cors });
  });
  after(() => development.close());

  test('development without ORDERPAY_CORS_ORIGINS: any http(s) origin on localhost, 127.0.0.1 or [::1], and nothing else', async () => {
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:8080', 'http://[::1]:3000', 'https://localhost', 'http://localhost']) {
      const response = await preflight(development, '/v2/orders', origin, 'POST', 'authorization');
      assert.equal(response.statusCode, 204, origin);
      assert.equal(response.headers['access-control-allow-origin'], origin);
    }
    for (const origin of ['http://localhost.evil.example', 'http://127.0.0.2:8080', 'http://localhost:5173/', APP]) {
      const response = await preflight(development, '/v2/orders', origin, 'POST', 'authorization');
      assert.equal(response.statusCode, 405, origin);
      assert.deepEqual(corsHeaders(response), {}, origin);
    }
  });
});

describe('CORS by default in production and test: no origin', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ cors: loadConfig({ NODE_ENV: 'production' }).cors });
  });
  after(() => t.close());

  test('production (and test) without ORDERPAY_CORS_ORIGINS: no origin is allowed, no Vary: Origin, preflights are the 405', async () => {
    for (const origin of ['http://localhost:5173', APP]) {
      const response = await preflight(t, '/v1/orders', origin, 'POST');
      assert.equal(response.statusCode, 405);
      assert.deepEqual(corsHeaders(response), {});
      const oauth = await preflight(t, '/oauth/token', origin, 'POST');
      assert.equal(oauth.statusCode, 405);
      assert.deepEqual(corsHeaders(oauth), {});
    }
    const call = await t.app.inject({ url: '/v2/products', headers: { origin: APP } });
    assert.deepEqual(corsHeaders(call), {});
    assert.equal(call.headers.vary, 'Accept');
  });
});
