// Paths under /oauth that the authorization server does not serve: problems like any unknown path
// (404 ROUTE_NOT_FOUND, or 405 METHOD_NOT_ALLOWED with Allow on one of its endpoints), not Koa's
// text/plain. The endpoints themselves keep RFC 6749's JSON, and the table of their methods that
// the 405s come from is held to what oidc-provider serves.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { PROVIDER_ENDPOINTS } from '../../../src/auth/provider-mount.ts';
import { PUBLIC_URL, startTestApp, type TestApp } from '../../helpers/app.ts';
import { expectProblem, PROBLEM_JSON } from '../../helpers/problems.ts';

const METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

/** A concrete path for an endpoint's pattern. */
const concrete = (pattern: string) => `/oauth${pattern.replace(':uid', 'some-uid')}`;

describe('/oauth: paths and methods the authorization server does not serve', () => {
  let t: TestApp;
  before(async () => {
    // One browser origin allowed (ORDERPAY_CORS_ORIGINS), for the preflight below.
    t = await startTestApp({ cors: { origins: ['https://app.example'], anyLoopbackOrigin: false } });
  });
  after(() => t.close());

  const inject = (method: string, url: string): Promise<LightMyRequestResponse> =>
    t.app.inject({ method: method as 'GET', url, ...(method === 'GET' || method === 'HEAD' ? {} : { payload: {} }) });

  test('an unknown path under /oauth → 404 ROUTE_NOT_FOUND problem, for any method', async () => {
    for (const url of [
      '/oauth',
      '/oauth/',
      '/oauth/nope',
      '/oauth/interaction',
      '/oauth/token/extra',
      '/oauth/session/end',
      '/oauth/reg',
    ]) {
      for (const method of ['GET', 'POST'] as const) {
        const response = await inject(method, `${url}?x=1`);
        expectProblem(response, 404, 'ROUTE_NOT_FOUND', url, `No resource at ${url}.`);
        assert.match(String(response.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      }
    }
  });

  test('another method on one of its endpoints → 405 METHOD_NOT_ALLOWED with Allow', async () => {
    // The JWKS and userinfo are Fastify's routes under /oauth, not the provider's.
    const cases: [string, readonly string[]][] = [
      ...Object.entries(PROVIDER_ENDPOINTS),
      ['/jwks', ['GET', 'HEAD']],
      ['/userinfo', ['GET', 'HEAD', 'POST']],
    ];
    for (const [pattern, methods] of cases) {
      const url = concrete(pattern);
      const allow = [...methods].sort().join(', ');
      for (const method of METHODS.filter((m) => !methods.includes(m))) {
        const response = await inject(method, url);
        assert.equal(response.statusCode, 405, `${method} ${url}: ${response.body}`);
        assert.equal(response.headers.allow, allow, `${method} ${url}`);
        assert.equal(response.headers['content-type'], PROBLEM_JSON, `${method} ${url}`);
        if (method !== 'HEAD') {
          expectProblem(response, 405, 'METHOD_NOT_ALLOWED', url, `${method} is not supported on ${url}; use ${allow}.`);
        }
      }
    }
  });

  test('every method the table lists is answered by the provider itself, never as an unknown route', async () => {
    for (const [pattern, methods] of Object.entries(PROVIDER_ENDPOINTS)) {
      const url = concrete(pattern);
      for (const method of methods) {
        const response = await inject(method, url);
        assert.notEqual(response.headers['content-type'], PROBLEM_JSON, `${method} ${url} → ${response.statusCode} ${response.body}`);
        assert.ok(![404, 405].includes(response.statusCode) || response.body !== '', `${method} ${url} → ${response.statusCode}`);
      }
    }
  });

  test('the protocol endpoints keep their RFC 6749 JSON errors, and CORS preflights are still answered', async () => {
    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=nonsense',
    });
    assert.equal(token.statusCode, 400, token.body);
    assert.match(String(token.headers['content-type']), /^application\/json/);
    assert.deepEqual(Object.keys(token.json()).sort(), ['error', 'error_description']);
    assert.equal(token.headers['x-content-type-options'], 'nosniff');

    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/oauth/token',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], 'https://app.example');

    const discovery = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server/oauth' });
    assert.equal(discovery.json().issuer, `${PUBLIC_URL}/oauth`);
    const wrongMethod = await t.app.inject({ method: 'POST', url: '/.well-known/oauth-authorization-server/oauth', payload: {} });
    expectProblem(
      wrongMethod,
      405,
      'METHOD_NOT_ALLOWED',
      '/.well-known/oauth-authorization-server/oauth',
      'POST is not supported on /.well-known/oauth-authorization-server/oauth; use GET, HEAD.',
    );
  });
});
