// The OpenAPI 3.1 document at /openapi.json: structurally valid, every route documented with its
// method, the shared components named; the docs page; and the checker every test response meets.
import { DAILY_REPORTS_SINCE } from '../../src/core/day-range.ts';
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse, RouteOptions } from 'fastify';
import { SCOPE_GRANTS, SCOPES } from '../../src/core/scopes.ts';
import { API_VERSION_NUMBERS, LATEST_API_VERSION } from '../../src/core/api-versions.ts';
import { freshExampleIdempotencyKey } from '../../src/http/docs-page.ts';
import { EXAMPLE_KEY_PREFIX, exampleIdempotencyKey } from '../../src/http/idempotency.ts';
import { PUBLIC_URL, startTestApp, type TestApp } from '../helpers/app.ts';
import { createOrder, createUser } from '../helpers/factories.ts';
import {
  assertMatchesOpenApi,
  isOperationalPath,
  isVersionedMirror,
  openApiDocument,
  pointerToken,
  resolvePointer,
  type OpenApiDocument,
} from '../helpers/openapi.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface RegisteredRoute {
  method: string;
  url: string;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Fastify's /orders/:orderId as the OpenAPI template /orders/{orderId}. */
function toTemplate(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Every (pointer, value) in the document, depth first. */
function* walk(value: unknown, pointer = ''): Generator<[string, unknown]> {
  yield [pointer, value];
  if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) yield* walk(child, `${pointer}/${pointerToken(key)}`);
  }
}

function operationsOf(document: OpenApiDocument) {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, operation })),
  );
}

/** A response as app.inject returns it, for checking the checker itself. */
function fakeResponse(
  statusCode: number,
  contentType: string | undefined,
  body: string,
  headers: Record<string, string> = {},
): LightMyRequestResponse {
  return {
    statusCode,
    headers: { ...(contentType ? { 'content-type': contentType } : {}), ...headers },
    body,
    payload: body,
    json: () => JSON.parse(body),
  } as unknown as LightMyRequestResponse;
}

describe('OpenAPI document (OpenAPI 3.1)', () => {
  let t: TestApp;
  let document: OpenApiDocument;
  const routes: RegisteredRoute[] = [];

  before(async () => {
    // Fastify announces every new instance here (its documented hook point), before any plugin
    // or route is registered, so an onRoute hook sees every route of the app, nested ones too.
    const recordRoutes = (message: unknown) => {
      const { fastify } = message as { fastify: FastifyInstance };
      fastify.addHook('onRoute', function recordRoute(route: RouteOptions) {
        for (const method of [route.method].flat()) routes.push({ method, url: route.url });
      });
    };
    diagnostics.subscribe('fastify.initialization', recordRoutes);
    try {
      t = await startTestApp();
    } finally {
      diagnostics.unsubscribe('fastify.initialization', recordRoutes);
    }
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    document = response.json();
  });

  after(async () => {
    await t.close();
  });

  it('GET /openapi.json serves the OpenAPI 3.1.0 document as JSON, the one the app builds', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/json\b/);
    assert.equal(response.headers['cache-control'], 'public, max-age=300');
    assert.equal(document.openapi, '3.1.0');
    assert.equal(document.info.title, 'orderpay');
    // The latest version's document; every version's is at /v<N>/openapi.json, servers under /v<N>.
    assert.equal(document.info.version, String(LATEST_API_VERSION));
    assert.deepEqual(document, JSON.parse(JSON.stringify(t.app.openApiDocument(LATEST_API_VERSION))));
    for (const version of API_VERSION_NUMBERS) {
      const versioned = await t.app.inject({ method: 'GET', url: `/v${version}/openapi.json` });
      assert.equal(versioned.statusCode, 200);
      const body = versioned.json<OpenApiDocument & { servers: { url: string }[] }>();
      assert.equal(body.info.version, String(version));
      assert.deepEqual(
        body.servers.map((s) => s.url),
        [`${PUBLIC_URL}/v${version}`],
      );
      // A deprecated version (v1, by the settings' default) says so on every operation; the others on none.
      const isDeprecated = t.config.apiDeprecations.some((d) => d.version === version);
      assert.equal(isDeprecated, version === 1);
      const deprecated = operationsOf(body).map(({ path, method }) => (body.paths[path]![method] as { deprecated?: boolean }).deprecated);
      assert.ok(deprecated.length > 0);
      assert.ok(
        deprecated.every((d) => d === (isDeprecated ? true : undefined)),
        `v${version}`,
      );
    }
  });

  it('every $ref resolves inside the document and points at a named component schema (or header)', () => {
    const refs = [...walk(document)].filter(([pointer, value]) => pointer.endsWith('/$ref') && typeof value === 'string');
    assert.ok(refs.length > 0, 'the document uses $ref');
    for (const [pointer, ref] of refs as [string, string][]) {
      const component = pointer.includes('/headers/')
        ? /^#\/components\/headers\/[A-Za-z][A-Za-z-]*$/
        : /^#\/components\/schemas\/[A-Za-z][A-Za-z0-9]*$/;
      assert.match(ref, component, `${pointer}: ${ref}`);
      assert.notEqual(resolvePointer(document, ref.slice(1)), undefined, `${pointer}: ${ref} does not resolve`);
    }
  });

  it('lists the components Problem, Order, OrderItem and Product, and no generated names', () => {
    const names = Object.keys(document.components.schemas ?? {});
    for (const name of ['Problem', 'Order', 'OrderItem', 'Product']) assert.ok(names.includes(name), `component ${name} is missing`);
    for (const name of names) assert.doesNotMatch(name, /^def-\d+$/);
    const problem = document.components.schemas!.Problem as { type: string; required: string[]; properties: Record<string, unknown> };
    assert.equal(problem.type, 'object');
    assert.deepEqual([...problem.required].sort(), ['code', 'detail', 'instance', 'requestId', 'status', 'title', 'type']);
    assert.ok('errors' in problem.properties);
  });

  it('every schema is a valid JSON Schema 2020-12 and compiles with its references', () => {
    const ajv = addFormats(new Ajv2020({ strict: false }));
    ajv.addSchema({ ...document, $id: 'https://orderpay.invalid/openapi.json' });
    const schemaPointers = [...walk(document)]
      .map(([pointer]) => pointer)
      .filter((pointer) => /^\/components\/schemas\/[^/]+$|\/parameters\/\d+\/schema$|\/content\/[^/]+\/schema$/.test(pointer));
    assert.ok(schemaPointers.length > 10);
    for (const pointer of schemaPointers) {
      const schema = resolvePointer(document, pointer) as object;
      assert.equal(ajv.validateSchema(schema), true, `${pointer}: ${ajv.errorsText(ajv.errors)}`);
      assert.doesNotThrow(() => ajv.compile({ $ref: `https://orderpay.invalid/openapi.json#${pointer}` }), pointer);
    }
  });

  it('every operation declares responses, a success, its path parameters and a known security scheme', () => {
    const bearer = document.components.securitySchemes?.bearer;
    assert.ok(bearer, 'security scheme "bearer" is declared');
    assert.equal(bearer.type, 'oauth2');
    for (const flow of Object.values(bearer.flows ?? {})) assert.deepEqual(Object.keys(flow.scopes).sort(), [...SCOPES].sort());
    const operations = operationsOf(document);
    assert.ok(operations.length > 0);
    for (const { path, method, operation } of operations) {
      const name = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(operation.responses ?? {});
      assert.ok(statuses.length > 0, `${name} has no responses`);
      assert.ok(
        statuses.some((s) => /^2/.test(s)),
        `${name} has no success response`,
      );
      for (const status of statuses) {
        const response = operation.responses![status]!;
        assert.equal(typeof response.description, 'string', `${name} ${status} has no description`);
        if (Number(status) >= 400) {
          assert.deepEqual(
            response.content,
            { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
            `${name} ${status}`,
          );
        } else if (status !== '204' && status !== '304') {
          assert.deepEqual(
            Object.keys(response.content ?? {}),
            ['application/json', `application/vnd.orderpay.v${LATEST_API_VERSION}+json`],
            `${name} ${status}`,
          );
        }
      }
      const templateParams = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const pathParams = (operation.parameters ?? []).filter((p) => p.in === 'path');
      assert.deepEqual(pathParams.map((p) => p.name).sort(), templateParams, `${name} path parameters`);
      for (const p of pathParams) assert.equal(p.required, true, `${name} path parameter ${p.name} is required`);
      assert.ok(operation.security && operation.security.length > 0, `${name} declares no security`);
      for (const requirement of operation.security) {
        for (const [scheme, scopes] of Object.entries(requirement)) {
          assert.ok(scheme in (document.components.securitySchemes ?? {}), `${name} names unknown scheme ${scheme}`);
          for (const scope of scopes) assert.ok((SCOPES as readonly string[]).includes(scope), `${name} names unknown scope ${scope}`);
        }
      }
    }
  });

  it('offers the OAuth flows with each scope described, a pasted bearer token and a DPoP-bound one, on every secured operation of each version', () => {
    for (const version of API_VERSION_NUMBERS) {
      const versionDocument = openApiDocument(t.app, version);
      const schemes = versionDocument.components.securitySchemes ?? {};
      assert.deepEqual(Object.keys(schemes).sort(), ['accessToken', 'bearer', 'dpop']);
      assert.deepEqual(schemes.bearer?.flows?.authorizationCode, {
        authorizationUrl: `${PUBLIC_URL}/oauth/authorize`,
        tokenUrl: `${PUBLIC_URL}/oauth/token`,
        refreshUrl: `${PUBLIC_URL}/oauth/token`,
        scopes: SCOPE_GRANTS,
      });
      assert.match(String(schemes.bearer?.description), /PKCE \(RFC 7636, S256 only\) required/);
      for (const [scope, grants] of Object.entries(SCOPE_GRANTS)) assert.notEqual(grants, scope, 'says what the scope allows');
      const { description, ...pasted } = schemes.accessToken!;
      assert.deepEqual(pasted, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
      assert.match(String(description), /npm start/);
      // RFC 9449 §7.1: the DPoP scheme, an alternative listed last (an addition to v1's frozen contract).
      const { description: dpopDescription, ...dpop } = schemes.dpop!;
      // OpenAPI 3.1's schema allows bearerFormat with the bearer scheme only: the description says JWT.
      assert.deepEqual(dpop, { type: 'http', scheme: 'DPoP' });
      assert.match(String(dpopDescription), /Authorization: DPoP <token>.*ES256, PS256, EdDSA.*JWT best current practices \(RFC8725\)/);
      for (const { path, method, operation } of operationsOf(versionDocument)) {
        const [oauth, pasted, ...others] = operation.security ?? [];
        assert.deepEqual(others.at(-1), { dpop: [] }, `v${version} ${method.toUpperCase()} ${path}`);
        const alternatives = others.slice(0, -1);
        const where = `v${version} ${method.toUpperCase()} ${path}`;
        assert.deepEqual(Object.keys(oauth ?? {}), ['bearer'], where);
        assert.deepEqual(pasted, { accessToken: [] }, where);
        // Only a refund may be made with either of two scopes (src/core/scopes.ts REFUND_SCOPES).
        const expected = path === '/payments/{paymentId}/refunds' && method === 'post' ? [{ bearer: ['payments:refund'] }] : [];
        assert.deepEqual(alternatives, expected, where);
      }
      const refund = operationsOf(versionDocument).find((o) => o.path === '/payments/{paymentId}/refunds' && o.method === 'post');
      assert.deepEqual(refund?.operation.security, [
        { bearer: ['payments:write'] },
        { accessToken: [] },
        { bearer: ['payments:refund'] },
        { dpop: [] },
      ]);
    }
  });

  it('every operation is rate limited as the OWASP API4 rules ask: a 429 problem with Retry-After, RateLimit on each answer', () => {
    for (const version of API_VERSION_NUMBERS) {
      const versionDocument = openApiDocument(t.app, version) as OpenApiDocument & { components: { headers?: Record<string, unknown> } };
      assert.deepEqual(Object.keys(versionDocument.components.headers ?? {}).sort(), [
        'Access-Control-Allow-Origin',
        'Access-Control-Expose-Headers',
        'RateLimit',
        'RateLimit-Policy',
        'Retry-After',
      ]);
      for (const { path, method, operation } of operationsOf(versionDocument)) {
        const name = `v${version} ${method.toUpperCase()} ${path}`;
        const responses = operation.responses as Record<string, { content?: unknown; headers?: Record<string, { $ref: string }> }>;
        assert.ok(responses['429']?.content, `${name} documents no 429 problem`);
        assert.equal(responses['429'].headers?.['Retry-After']?.$ref, '#/components/headers/Retry-After', `${name} 429`);
        for (const [status, response] of Object.entries(responses)) {
          assert.equal(response.headers?.RateLimit?.$ref, '#/components/headers/RateLimit', `${name} ${status}`);
          assert.equal(response.headers?.['RateLimit-Policy']?.$ref, '#/components/headers/RateLimit-Policy', `${name} ${status}`);
        }
      }
    }
  });

  it('documents every registered route with its method, and nothing that is not served', () => {
    const served = routes.filter((r) => r.method !== 'HEAD' && !isVersionedMirror(r.url) && !isOperationalPath(r.url));
    assert.ok(served.length > 0, 'routes were collected');
    const documented = new Set(operationsOf(document).map((o) => `${o.method.toUpperCase()} ${o.path}`));
    const registered = new Set(served.map((r) => `${r.method} ${toTemplate(r.url)}`));
    for (const route of registered) assert.ok(documented.has(route), `${route} is registered but not in the document`);
    for (const operation of documented) assert.ok(registered.has(operation), `${operation} is documented but not registered`);
  });

  it('every documented operation is also served under each /v<N> prefix from its first version, and only operational routes are left out', () => {
    const registered = new Set(routes.map((r) => `${r.method} ${toTemplate(r.url)}`));
    // The daily reports show v3's payment statuses and money objects: v1 and v2 have none.
    const since = (path: string) => (path.startsWith('/daily-') ? DAILY_REPORTS_SINCE : 1);
    for (const { path, method } of operationsOf(document)) {
      for (const version of API_VERSION_NUMBERS) {
        assert.equal(
          registered.has(`${method.toUpperCase()} /v${version}${path}`),
          version >= since(path),
          `${method.toUpperCase()} /v${version}${path} is served from v${since(path)}`,
        );
      }
    }
    const undocumented = routes.filter((r) => r.method !== 'HEAD' && !isVersionedMirror(r.url) && !document.paths[toTemplate(r.url)]);
    assert.deepEqual(
      undocumented.filter((r) => !isOperationalPath(r.url)),
      [],
    );
    for (const path of [
      '/livez',
      '/readyz',
      '/metrics',
      '/problems/:slug',
      '/openapi.json',
      '/docs',
      '/oauth/jwks',
      '/oauth/interaction/:uid',
    ]) {
      assert.ok(
        routes.some((r) => r.url === path),
        `${path} is registered`,
      );
      assert.equal(document.paths[toTemplate(path)], undefined, `${path} is hidden`);
    }
  });

  it('/docs serves the documentation page as HTML', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html\b/);
    assert.match(response.body, /<html/i);
  });

  it("/docs and its assets carry Swagger UI's own Content-Security-Policy, may not be framed, and are not sniffed", async () => {
    const csp =
      "default-src 'self'; base-uri 'self'; connect-src 'self' http://orderpay.test; font-src 'self' data:; form-action 'self'; " +
      "frame-ancestors 'none'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'";
    for (const url of ['/docs', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js', '/docs/json']) {
      const response = await t.app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 200, url);
      assert.equal(response.headers['content-security-policy'], csp, url);
      assert.equal(response.headers['x-frame-options'], 'DENY', url);
      assert.equal(response.headers['x-content-type-options'], 'nosniff', url);
    }
    // Every script the page loads comes from /docs/static: no inline script for the policy to block.
    const page = (await t.app.inject({ method: 'GET', url: '/docs' })).body;
    const scripts = [...page.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    assert.ok(scripts.length > 0);
    for (const [, attributes, inline] of scripts) {
      assert.match(attributes!, /src="\/docs\/static\//);
      assert.equal(inline!.trim(), '');
    }
    // And it asks no third party (the validator badge) for anything.
    const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    assert.match(initializer.body, /"validatorUrl":null/);
  });

  it("/docs switches between the versions' documents, the latest first, and shows the latest by default", async () => {
    const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    assert.equal(initializer.statusCode, 200);
    const urls = [...initializer.body.matchAll(/"url":"(\/v\d+\/openapi\.json)"/g)].map((m) => m[1]);
    assert.deepEqual(
      urls,
      [...API_VERSION_NUMBERS].reverse().map((v) => `/v${v}/openapi.json`),
    );
    assert.match(initializer.body, new RegExp(`"urls.primaryName":"v${LATEST_API_VERSION}"`));
    const json = await t.app.inject({ method: 'GET', url: '/docs/json' });
    assert.deepEqual(json.json(), document);
  });

  it("every operation's Idempotency-Key example is its own, and /docs replaces an example key by a fresh one on every try", async () => {
    const examples = new Map<string, string>();
    for (const version of API_VERSION_NUMBERS) {
      const body = (await t.app.inject({ method: 'GET', url: `/v${version}/openapi.json` })).json<OpenApiDocument>();
      for (const { path, method, operation } of operationsOf(body)) {
        const parameters = (operation as { parameters?: { name: string; in: string; example?: string }[] }).parameters ?? [];
        const key = parameters.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
        if (!key) continue;
        const example = key.example ?? '';
        assert.ok(example.startsWith(EXAMPLE_KEY_PREFIX), `${method} ${path}: ${example}`);
        assert.match(example, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/, 'shaped as a UUID v4');
        examples.set(`v${version} ${method} ${path}`, example);
      }
    }
    assert.ok(examples.size >= 6, `operations that take a key: ${[...examples.keys()].join(', ')}`);
    const perOperation = new Map([...examples].map(([where, example]) => [where.replace(/^v\d+ /, ''), example]));
    assert.equal(new Set(perOperation.values()).size, perOperation.size, 'no two operations share an example');

    const headers = { 'Idempotency-Key': exampleIdempotencyKey('POST', '/v2/payments'), accept: 'application/json' };
    const first = freshExampleIdempotencyKey({ headers: { ...headers } }).headers['Idempotency-Key']!;
    const second = freshExampleIdempotencyKey({ headers: { ...headers } }).headers['Idempotency-Key']!;
    assert.ok(!first.startsWith(EXAMPLE_KEY_PREFIX) && first !== second, 'a fresh key on every try');
    assert.deepEqual(freshExampleIdempotencyKey({ headers: { 'idempotency-key': 'typed-by-me' } }).headers, {
      'idempotency-key': 'typed-by-me',
    });
    const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    assert.match(initializer.body, /"requestInterceptor":function freshExampleIdempotencyKey\s*\(/, 'the page has the interceptor');
    assert.ok(initializer.body.includes(`startsWith('${EXAMPLE_KEY_PREFIX}')`), 'with the marker the examples carry');
  });
});

describe('assertMatchesOpenApi (the check TestApp.request applies to every response)', () => {
  let t: TestApp;

  before(async () => {
    // An undocumented route, added before any plugin, to see TestApp.request refuse its answer.
    const addUndocumentedRoute = (message: unknown) => {
      const { fastify } = message as { fastify: FastifyInstance };
      fastify.get('/teapot', async function sendUndocumented() {
        return { ok: true };
      });
    };
    diagnostics.subscribe('fastify.initialization', addUndocumentedRoute);
    try {
      t = await startTestApp();
    } finally {
      diagnostics.unsubscribe('fastify.initialization', addUndocumentedRoute);
    }
  });

  after(async () => {
    await t.close();
  });

  const problemBody = (status: number) =>
    JSON.stringify({
      type: `${PUBLIC_URL}/problems/order-not-found`,
      title: 'Order not found',
      status,
      detail: 'x',
      instance: '/orders/1',
      code: 'ORDER_NOT_FOUND',
      requestId: 'r1',
    });
  const order = {
    id: 1,
    status: 'pending',
    customerId: 2,
    total: 1250,
    currency: 'EUR',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };

  it('accepts real responses of documented operations, on /v1 paths too', async () => {
    const user = await createUser(t.db);
    const created = await createOrder(t.db, user.id);
    const token = await t.token({ userId: user.id });
    for (const url of [
      `/orders/${created.id}`,
      `/v1/orders/${created.id}`,
      '/orders?status=pending&sort=-createdAt',
      '/nope',
      '/v9/orders',
    ]) {
      const response = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      assert.doesNotThrow(() => assertMatchesOpenApi(t.app, 'GET', url, response), url);
    }
    const vendor = await t.app.inject({
      method: 'GET',
      url: '/orders',
      headers: { authorization: `Bearer ${token}`, accept: 'application/vnd.orderpay.v1+json' },
    });
    assert.match(String(vendor.headers['content-type']), /^application\/vnd\.orderpay\.v1\+json\b/);
    assert.doesNotThrow(() => assertMatchesOpenApi(t.app, 'GET', '/orders', vendor));
  });

  it('refuses a status the operation does not document, naming method, url and status', () => {
    assert.throws(
      () => assertMatchesOpenApi(t.app, 'GET', '/orders/1?x=1', fakeResponse(418, 'application/problem+json', problemBody(418))),
      (error: Error) =>
        error.name === 'AssertionError' &&
        error.message.startsWith('GET /orders/1?x=1 → 418: status 418 is not documented for GET /orders/{orderId}'),
    );
  });

  it('refuses a body that does not match the documented schema, with the ajv errors', () => {
    const body = JSON.stringify({ ...order, total: -1, extra: true });
    assert.throws(
      () => assertMatchesOpenApi(t.app, 'GET', '/v1/orders/1', fakeResponse(200, 'application/json; charset=utf-8', body)),
      (error: Error) =>
        /^GET \/v1\/orders\/1 → 200: the body does not match/.test(error.message) &&
        /\/total must be >= 0/.test(error.message) &&
        /additionalProperty/.test(error.message),
    );
    assert.doesNotThrow(() =>
      assertMatchesOpenApi(t.app, 'GET', '/v1/orders/1', fakeResponse(200, 'application/json; charset=utf-8', JSON.stringify(order))),
    );
  });

  it('refuses an undocumented or non-JSON content type, and a body where none is documented', () => {
    assert.throws(
      () => assertMatchesOpenApi(t.app, 'GET', '/orders/1', fakeResponse(200, 'text/plain', JSON.stringify(order))),
      /neither JSON nor problem\+json/,
    );
    assert.throws(
      () => assertMatchesOpenApi(t.app, 'GET', '/orders/1', fakeResponse(404, 'application/json', problemBody(404))),
      /content type application\/json is not documented/,
    );
    assert.throws(() => assertMatchesOpenApi(t.app, 'GET', '/orders/1', fakeResponse(200, 'application/json', '{"data":')), /not JSON/);
    assert.throws(() => assertMatchesOpenApi(t.app, 'DELETE', '/orders/1', fakeResponse(204, undefined, '{}')), /declares no body/);
    assert.doesNotThrow(() => assertMatchesOpenApi(t.app, 'GET', '/orders/1', fakeResponse(304, undefined, '')));
  });

  it("requires the router's 404 or 405 problem where no operation is documented", () => {
    assert.throws(() => assertMatchesOpenApi(t.app, 'GET', '/nope', fakeResponse(200, 'application/json', '{}')), /must be 404/);
    assert.throws(
      () => assertMatchesOpenApi(t.app, 'POST', '/orders/1', fakeResponse(404, 'application/problem+json', problemBody(404))),
      /must be 405/,
    );
    assert.throws(
      () => assertMatchesOpenApi(t.app, 'POST', '/orders/1', fakeResponse(405, 'application/problem+json', problemBody(405))),
      /Allow/,
    );
    assert.doesNotThrow(() =>
      assertMatchesOpenApi(
        t.app,
        'POST',
        '/orders/1',
        fakeResponse(405, 'application/problem+json', problemBody(405), { allow: 'DELETE, GET, HEAD, PATCH, PUT' }),
      ),
    );
  });

  it('skips the operational endpoints the document hides', () => {
    for (const url of [
      '/livez',
      '/readyz',
      '/metrics',
      '/oauth/jwks',
      '/problems/order-not-found',
      '/docs',
      '/docs/static/index.html',
      '/openapi.json',
    ]) {
      assert.doesNotThrow(() => assertMatchesOpenApi(t.app, 'GET', url, fakeResponse(200, 'text/plain', 'ok')), url);
    }
  });

  it('TestApp.request applies the check to what it returns', async () => {
    assert.equal(openApiDocument(t.app).paths['/teapot'], undefined);
    await assert.rejects(
      t.request(undefined, { method: 'GET', url: '/teapot', query: { cups: '2' } }),
      (error: Error) =>
        error.name === 'AssertionError' &&
        error.message.startsWith('GET /teapot?cups=2 → 200: no documented operation, so the answer must be 404'),
    );
    const response = await t.request(undefined, { method: 'GET', url: '/orders' });
    assert.equal(response.statusCode, 401);
  });
});
