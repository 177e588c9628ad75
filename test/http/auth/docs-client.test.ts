// The public client /docs signs in with (src/auth/docs-client.ts): known to the authorization
// server where it is offered, with the page's own redirect URI and PKCE required (RFC 7636, RFC
// 9700 §2.1.1); absent in production unless ORDERPAY_DOCS_CLIENT says so, and where PUBLIC_URL is
// plain http off loopback. /docs fills in its client id exactly where the server knows it.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { buildDocsClient } from '../../../src/auth/docs-client.ts';
import { loadConfig } from '../../../src/config.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

const HTTPS_URL = 'https://orderpay.test';
const REDIRECT_URI = `${HTTPS_URL}/docs/static/oauth2-redirect.html`;

/** An authorization request of /docs, as Swagger UI sends it (PKCE unless told otherwise). */
function authorizeUrl(overrides: Record<string, string | undefined> = {}): string {
  const verifier = randomBytes(32).toString('base64url');
  const query: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: 'orderpay-docs',
    redirect_uri: REDIRECT_URI,
    scope: 'orders:read orders:write',
    state: 'docs-state',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...overrides,
  };
  const defined = Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return `/oauth/authorize?${new URLSearchParams(defined)}`;
}

const httpsOverrides = { publicUrl: HTTPS_URL, issuer: `${HTTPS_URL}/oauth`, audience: HTTPS_URL };

/** What /docs hands to Swagger UI's initOAuth. */
async function docsOAuthSettings(t: TestApp): Promise<Record<string, unknown>> {
  const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
  assert.equal(initializer.statusCode, 200);
  const settings = /ui\.initOAuth\((.*)\)\s*\}\s*$/s.exec(initializer.body)?.[1];
  assert.ok(settings, 'the initializer calls initOAuth');
  return JSON.parse(settings) as Record<string, unknown>;
}

describe('the /docs client where it is offered (outside production, PUBLIC_URL on https)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(httpsOverrides);
  });
  after(() => t.close());

  test('an authorization request with its redirect URI and PKCE goes on to the login page', async () => {
    const response = await t.app.inject({ method: 'GET', url: authorizeUrl() });
    assert.equal(response.statusCode, 303, response.body);
    assert.match(String(response.headers.location), /^\/oauth\/interaction\/[\w-]+$/);
  });

  test('another redirect URI is refused on the page, never redirected to (RFC 6749 §4.1.2.1)', async () => {
    for (const redirectUri of [`${HTTPS_URL}/docs/`, 'https://elsewhere.example/docs/static/oauth2-redirect.html']) {
      const response = await t.app.inject({ method: 'GET', url: authorizeUrl({ redirect_uri: redirectUri }) });
      assert.equal(response.statusCode, 400, redirectUri);
      assert.equal(response.headers.location, undefined);
      assert.match(response.body, /invalid_redirect_uri/);
    }
  });

  test('without PKCE the answer goes back to the page as invalid_request (RFC 7636 §4.4.1)', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: authorizeUrl({ code_challenge: undefined, code_challenge_method: undefined }),
    });
    assert.equal(response.statusCode, 303);
    const location = new URL(String(response.headers.location));
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.equal(location.searchParams.get('error_description'), 'Authorization Server policy requires PKCE to be used for this request');
    assert.equal(location.searchParams.get('state'), 'docs-state');
  });

  test('/docs signs in as orderpay-docs with PKCE, the scopes a customer may hold ticked', async () => {
    assert.deepEqual(await docsOAuthSettings(t), {
      clientId: 'orderpay-docs',
      appName: 'orderpay API reference',
      usePkceWithAuthorizationCodeGrant: true,
      scopes: ['orders:read', 'orders:write', 'payments:read', 'payments:write'],
    });
  });
});

describe('the /docs client where it is not offered', () => {
  test('turned off (production by default): the server does not know it, and /docs fills in no client', async () => {
    const t = await startTestApp({ ...httpsOverrides, docsClient: false });
    try {
      const response = await t.app.inject({ method: 'GET', url: authorizeUrl() });
      assert.equal(response.statusCode, 400);
      assert.match(response.body, /invalid_client/);
      assert.deepEqual(await docsOAuthSettings(t), {});
    } finally {
      await t.close();
    }
  });

  test('PUBLIC_URL on plain http off loopback: no redirect URI may use it, so no client, and start-up says why', async () => {
    const t = await startTestApp({ publicUrl: 'http://orderpay.test', docsClient: true });
    try {
      assert.deepEqual(await docsOAuthSettings(t), {});
    } finally {
      await t.close();
    }
    const warnings: string[] = [];
    const log = { warn: (message: string) => warnings.push(message) } as unknown as FastifyBaseLogger;
    assert.equal(buildDocsClient(loadConfig({ PUBLIC_URL: 'http://orderpay.test' }), log), undefined);
    assert.deepEqual(warnings, [
      '/docs cannot sign in (redirect URI "http://orderpay.test/docs/static/oauth2-redirect.html" must use https (plain http only on 127.0.0.1, [::1] or localhost)); set PUBLIC_URL to the https URL it is served at. Pasted access tokens still work.',
    ]);
  });

  test('a process without the authorization server registers no client, and /docs fills in none', async () => {
    const t = await startTestApp({ ...httpsOverrides, servers: { resource: true, authorization: false } });
    try {
      assert.deepEqual(await docsOAuthSettings(t), {});
    } finally {
      await t.close();
    }
  });
});
