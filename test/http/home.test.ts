// GET / : the links a newcomer starts from (docs, OpenAPI documents, OAuth discovery, versions),
// JSON for API clients and HTML for browsers by Accept, each link answering; in no OpenAPI document.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API_VERSION_NUMBERS } from '../../src/core/api-versions.ts';
import { DEFAULT_CSP } from '../../src/http/security-headers.ts';
import { PUBLIC_URL, startTestApp, type TestApp } from '../helpers/app.ts';
import { openApiDocument } from '../helpers/openapi.ts';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const LINK = `<${PUBLIC_URL}/docs>; rel="service-doc", <${PUBLIC_URL}/openapi.json>; rel="service-desc"; type="application/json"`;

const EXPECTED_HOME = {
  name: 'orderpay',
  description: 'Orders & Payments API (v3 the latest) with its own OAuth 2.0 / OpenID Connect authorization server.',
  docs: `${PUBLIC_URL}/docs`,
  openapi: `${PUBLIC_URL}/openapi.json`,
  versions: [
    { version: 3, status: 'current', baseUrl: `${PUBLIC_URL}/v3`, openapi: `${PUBLIC_URL}/v3/openapi.json` },
    { version: 2, status: 'current', baseUrl: `${PUBLIC_URL}/v2`, openapi: `${PUBLIC_URL}/v2/openapi.json` },
    {
      version: 1,
      status: 'deprecated',
      baseUrl: `${PUBLIC_URL}/v1`,
      openapi: `${PUBLIC_URL}/v1/openapi.json`,
      deprecation: '2026-12-01T00:00:00.000Z',
      sunset: '2027-06-01T00:00:00.000Z',
      migrationGuide: `${PUBLIC_URL}/docs/migrating-to-v2`,
    },
  ],
  oauth: {
    issuer: `${PUBLIC_URL}/oauth`,
    authorizationServerMetadata: `${PUBLIC_URL}/.well-known/oauth-authorization-server/oauth`,
    openidConfiguration: `${PUBLIC_URL}/oauth/.well-known/openid-configuration`,
  },
};

/** Every URL in the home document, wherever it sits. */
function linksOf(value: unknown): string[] {
  if (typeof value === 'string') return value.startsWith(PUBLIC_URL) ? [value] : [];
  if (value && typeof value === 'object') return Object.values(value).flatMap(linksOf);
  return [];
}

describe('GET /: the service home', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('API clients (no Accept, */*, application/json, or a type it does not serve) get the links as JSON', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/xml']) {
      const response = await t.app.inject({ method: 'GET', url: '/', headers: accept ? { accept } : {} });
      assert.equal(response.statusCode, 200, String(accept));
      assert.equal(response.headers['content-type'], 'application/json; charset=utf-8', String(accept));
      assert.equal(response.headers.vary, 'Accept');
      assert.equal(response.headers['cache-control'], 'public, max-age=300');
      assert.equal(response.headers.link, LINK);
      assert.equal(response.headers['content-security-policy'], DEFAULT_CSP);
      assert.deepEqual(response.json(), EXPECTED_HOME, String(accept));
    }
  });

  test('a browser gets the same links as a page, under the default Content-Security-Policy', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/', headers: { accept: BROWSER_ACCEPT } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(response.headers.vary, 'Accept');
    assert.equal(response.headers['content-security-policy'], DEFAULT_CSP);
    assert.match(response.body, /^<!doctype html><html lang="en">/);
    assert.doesNotMatch(response.body, /<script|<style|style=/);
    const hrefs = [...response.body.matchAll(/href="([^"]+)"/g)].map((match) => match[1]!.replaceAll('&#38;', '&'));
    // Every URL but the base URLs and the issuer, which name things rather than pages.
    const expected = linksOf(EXPECTED_HOME).filter((url) => !/\/v\d+$/.test(url) && url !== EXPECTED_HOME.oauth.issuer);
    assert.deepEqual([...hrefs].sort(), [...expected].sort());
  });

  test('HEAD / answers like GET, without a body', async () => {
    const response = await t.app.inject({ method: 'HEAD', url: '/' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(response.body, '');
  });

  test('every link answers 200, and each base URL is the server of its version’s OpenAPI document', async () => {
    const home = (await t.app.inject({ method: 'GET', url: '/' })).json() as typeof EXPECTED_HOME;
    for (const url of linksOf(home)) {
      if (/\/v\d+$/.test(url) || url === home.oauth.issuer) continue;
      const response = await t.app.inject({ method: 'GET', url: url.slice(PUBLIC_URL.length) });
      assert.equal(response.statusCode, 200, url);
    }
    for (const { version, baseUrl } of home.versions) {
      const document = (await t.app.inject({ method: 'GET', url: `/v${version}/openapi.json` })).json() as { servers: { url: string }[] };
      assert.deepEqual(
        document.servers.map((server) => server.url),
        [baseUrl],
      );
    }
    const discovery = (await t.app.inject({ method: 'GET', url: '/oauth/.well-known/openid-configuration' })).json() as { issuer: string };
    assert.equal(discovery.issuer, home.oauth.issuer);
  });

  test('is in no version’s OpenAPI document', () => {
    for (const version of API_VERSION_NUMBERS) assert.equal(openApiDocument(t.app, version).paths['/'], undefined);
  });
});

describe('GET / after a version’s sunset', () => {
  test('lists the version as retired, with its dates and migration guide', async () => {
    const t = await startTestApp({
      apiDeprecations: [{ version: 1, deprecation: new Date('2020-01-01T00:00:00Z'), sunset: new Date('2021-01-01T00:00:00Z') }],
    });
    try {
      const home = (await t.app.inject({ method: 'GET', url: '/' })).json() as typeof EXPECTED_HOME;
      assert.deepEqual(home.versions, [
        EXPECTED_HOME.versions[0],
        EXPECTED_HOME.versions[1],
        { ...EXPECTED_HOME.versions[2], status: 'retired', deprecation: '2020-01-01T00:00:00.000Z', sunset: '2021-01-01T00:00:00.000Z' },
      ]);
    } finally {
      await t.close();
    }
  });
});
