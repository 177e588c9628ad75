// /console at the edge (src/http/console-page.ts) and its client (src/auth/console-client.ts): the
// page for every path below /console (the app routes itself), revalidated; hashed assets cached for
// a year; one CSP without 'unsafe-inline'; config.json; a 503 page that says how to build when
// console/dist is missing; ORDERPAY_CONSOLE=false turning page and client off. A built console of
// its own (a temporary dist) stands in for Vite's, so these tests need no build.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { API_VERSION } from '../../clients/typescript/client.ts';
import { ORDER_SORT_KEYS, PAYMENT_SORT_KEYS } from '../../console/src/sort.ts';
import { buildConsoleClient } from '../../src/auth/console-client.ts';
import { loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const HTTPS_URL = 'https://orderpay.test';
const httpsOverrides = { publicUrl: HTTPS_URL, issuer: `${HTTPS_URL}/oauth`, audience: HTTPS_URL };
const INDEX =
  '<!doctype html><html lang="en"><head><script type="module" src="/console/assets/index-Abc123.js"></script></head><body></body></html>';
const ASSET = 'console.log("the console");';
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self' https://orderpay.test; img-src 'self' data:; font-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self' https://orderpay.test; object-src 'none'";

let dist: string;
before(() => {
  dist = mkdtempSync(join(tmpdir(), 'orderpay-console-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), INDEX);
  writeFileSync(join(dist, 'assets', 'index-Abc123.js'), ASSET);
});
after(() => rmSync(dist, { recursive: true, force: true }));

/** The console's authorization request, with PKCE. */
function authorizeUrl(redirectUri: string, clientId = 'orderpay-console'): string {
  const verifier = randomBytes(32).toString('base64url');
  return `/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'openid email orders:read events:read',
    state: 'console-state',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })}`;
}

/** A logger that keeps what it is told, for the tests of what is logged at start. */
function recordingLogger(): { logger: object; lines: () => { level: number; msg: string }[] } {
  const written: string[] = [];
  return {
    logger: { level: 'info', stream: { write: (line: string) => written.push(line) } },
    lines: () => written.map((line) => JSON.parse(line) as { level: number; msg: string }),
  };
}

describe('/console where it is built and offered (PUBLIC_URL on https)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(httpsOverrides, undefined, { consoleDist: dist });
  });
  after(() => t.close());

  test('/console and every path below it answer the page, no-cache with an ETag, under the console CSP; 304 when unchanged', async () => {
    for (const url of ['/console', '/console/', '/console/callback', '/console/orders/12', '/console/webhooks/3?state=failed']) {
      const response = await t.app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 200, url);
      assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(response.headers['cache-control'], 'no-cache');
      assert.equal(response.headers['content-security-policy'], CSP);
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.equal(response.headers['x-frame-options'], 'DENY');
      assert.match(String(response.headers.etag), /^"[\w-]{27}"$/);
      assert.equal(response.body, INDEX);
    }
    const first = await t.app.inject({ method: 'GET', url: '/console' });
    const again = await t.app.inject({ method: 'GET', url: '/console/orders', headers: { 'if-none-match': String(first.headers.etag) } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
  });

  test('hashed assets are cached for a year, immutable; a missing one is a 404 problem, not the page', async () => {
    const asset = await t.app.inject({ method: 'GET', url: '/console/assets/index-Abc123.js' });
    assert.equal(asset.statusCode, 200);
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(asset.headers['content-type']), /^(application|text)\/javascript/);
    assert.equal(asset.headers['content-security-policy'], CSP);
    assert.equal(asset.body, ASSET);
    const missing = await t.app.inject({ method: 'GET', url: '/console/assets/index-Gone99.js' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(missing.json().code, 'ROUTE_NOT_FOUND');
  });

  test('/console/config.json tells the page where to sign in and which API to call, never a secret', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/console/config.json' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(response.headers['cache-control'], 'no-cache');
    assert.deepEqual(response.json(), {
      issuer: `${HTTPS_URL}/oauth`,
      apiUrl: HTTPS_URL,
      apiVersion: 3,
      staffScopes: ['products:write', 'payments:refund', 'events:read', 'webhooks:read', 'webhooks:write'],
      signIn: {
        clientId: 'orderpay-console',
        redirectUri: `${HTTPS_URL}/console/callback`,
        postLogoutRedirectUri: `${HTTPS_URL}/console/signed-out`,
        scope:
          'openid email orders:read orders:write products:write payments:read payments:write payments:refund events:read webhooks:read webhooks:write',
      },
    });
  });

  test("the console speaks the typed client's API version, and offers exactly the sort keys that version's document lists", async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/console/config.json' })).json().apiVersion, API_VERSION);
    const document = (await t.app.inject({ method: 'GET', url: `/v${API_VERSION}/openapi.json` })).json();
    const sortKeys = (path: string) => {
      const sort = document.paths[path].get.parameters.find((p: { name: string }) => p.name === 'sort');
      return /\(\?:([\w|]+)\)/.exec(sort.schema.pattern)![1]!.split('|').sort();
    };
    assert.deepEqual(sortKeys('/orders'), [...ORDER_SORT_KEYS].sort());
    assert.deepEqual(sortKeys('/payments'), [...PAYMENT_SORT_KEYS].sort());
  });

  test('the authorization server knows orderpay-console: its exact redirect URI goes on to the login page, any other is refused', async () => {
    const signIn = await t.app.inject({ method: 'GET', url: authorizeUrl(`${HTTPS_URL}/console/callback`) });
    assert.equal(signIn.statusCode, 303, signIn.body);
    assert.match(String(signIn.headers.location), /^\/oauth\/interaction\/[\w-]+$/);
    for (const redirectUri of [`${HTTPS_URL}/console/`, `${HTTPS_URL}/console/callback/`, 'https://elsewhere.example/console/callback']) {
      const refused = await t.app.inject({ method: 'GET', url: authorizeUrl(redirectUri) });
      assert.equal(refused.statusCode, 400, redirectUri);
      assert.equal(refused.headers.location, undefined);
      assert.match(refused.body, /invalid_redirect_uri/);
    }
  });
});

describe('/console elsewhere', () => {
  test('not built: one warning at start, and /console answers a plain 503 page that says how to build it', async () => {
    const { logger, lines } = recordingLogger();
    const t = await startTestApp(httpsOverrides, undefined, { consoleDist: join(dist, 'missing'), logger });
    try {
      const warnings = lines().filter((line) => line.level === 40 && line.msg.includes('console'));
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!.msg, /the staff console is not built .*npm install/);
      for (const url of ['/console', '/console/orders/1', '/console/config.json']) {
        const response = await t.app.inject({ method: 'GET', url });
        assert.equal(response.statusCode, 503, url);
        assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
        assert.equal(response.headers['cache-control'], 'no-store');
        assert.match(response.body, /<h1>The staff console is not built<\/h1>/);
        assert.match(response.body, /npm install/);
      }
    } finally {
      await t.close();
    }
  });

  test('ORDERPAY_CONSOLE=false: no page (404) and no client (the authorization server knows no orderpay-console)', async () => {
    const t = await startTestApp({ ...httpsOverrides, console: false }, undefined, { consoleDist: dist });
    try {
      for (const url of ['/console', '/console/orders', '/console/config.json']) {
        const response = await t.app.inject({ method: 'GET', url });
        assert.equal(response.statusCode, 404, url);
        assert.equal(response.json().code, 'ROUTE_NOT_FOUND');
      }
      const signIn = await t.app.inject({ method: 'GET', url: authorizeUrl(`${HTTPS_URL}/console/callback`) });
      assert.equal(signIn.statusCode, 400);
      assert.match(signIn.body, /invalid_client/);
    } finally {
      await t.close();
    }
  });

  test('PUBLIC_URL on plain http off loopback: the page is served, but says it cannot sign in (logged at start)', async () => {
    const { logger, lines } = recordingLogger();
    const t = await startTestApp({}, undefined, { consoleDist: dist, logger });
    try {
      assert.ok(lines().some((line) => line.level === 40 && /^\/console cannot sign in \(redirect URI .* must use https/.test(line.msg)));
      const settings = (await t.app.inject({ method: 'GET', url: '/console/config.json' })).json();
      assert.equal(settings.signIn, null);
      const signIn = await t.app.inject({ method: 'GET', url: authorizeUrl('http://orderpay.test/console/callback') });
      assert.equal(signIn.statusCode, 400);
      assert.match(signIn.body, /invalid_client/);
    } finally {
      await t.close();
    }
  });

  test('a process without the authorization server still describes the client, and says where it must be offered', () => {
    const messages: string[] = [];
    const log = {
      info: (message: string) => messages.push(message),
      warn: (message: string) => messages.push(message),
    } as unknown as FastifyBaseLogger;
    const config = loadConfig({ PUBLIC_URL: HTTPS_URL, ORDERPAY_SERVERS: 'resource' });
    const client = buildConsoleClient(config, log);
    assert.equal(client?.client_id, 'orderpay-console');
    assert.deepEqual(client?.grant_types, ['authorization_code', 'refresh_token']);
    assert.equal(client?.token_endpoint_auth_method, 'none');
    assert.equal(client?.api_version, 3);
    assert.deepEqual(messages, [
      `/console signs in at ${HTTPS_URL}/oauth, which this process does not serve: that authorization server must offer orderpay-console (ORDERPAY_CONSOLE)`,
    ]);
  });
});
