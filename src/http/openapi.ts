// One OpenAPI 3.1 document per API version, generated from the route schemas: /v<N>/openapi.json
// (servers ending in /v<N>; a deprecated version's operations marked deprecated), /openapi.json
// for the latest, and /docs to read and switch between them. @fastify/swagger collects every
// route once; each version's document is cut from that by its /v<N> paths and schemas.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import swagger, { type OpenAPIV3_2 } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Config } from '../config.ts';
import { API_VERSION_NUMBERS, LATEST_API_VERSION } from '../core/api-versions.ts';
import { SCOPE_GRANTS } from '../core/scopes.ts';
import { CORS_HEADER_COMPONENTS } from './cors.ts';
import { DPOP_ALGORITHMS } from './dpop.ts';
import { docsPageOptions } from './docs-page.ts';
import { RATE_LIMIT_HEADER_COMPONENTS } from './rate-limit/fields.ts';
import { ROUTE_CHECKED } from './schemas.ts';
import { documentLinks } from './openapi-links.ts';
import { migrationGuideUrl, vendorMediaType } from './versioning.ts';
import { unversionedSchemaId } from './versions/versions.ts';

type JsonObject = Record<string, unknown>;
type Response = {
  description?: string;
  content?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  links?: Record<string, unknown>;
};
type Operation = JsonObject & { responses?: Record<string, Response> };
type Document = JsonObject & { info: JsonObject; paths: Record<string, Record<string, Operation>>; components: { schemas?: JsonObject } };

const ENVIRONMENTS: Record<Config['env'], string> = { production: 'production', development: 'local development', test: 'test' };

const TAGS = [
  { name: 'orders', description: "Orders and their items: a customer's own, or any with the staff role." },
  { name: 'products', description: 'The catalogue: readable by every caller, written by staff (products:write).' },
  { name: 'payments', description: 'Payments of orders and their refunds; writes take an Idempotency-Key.' },
  {
    name: 'events',
    description:
      'The event log: each change to an order, payment, refund or product, recorded in its transaction and kept 30 days by default (staff users and service clients).',
  },
  {
    name: 'webhooks',
    description:
      'Webhook endpoints, their signing secrets and delivery logs: staff users and service clients (webhooks:read, webhooks:write).',
  },
];

const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

function describeVersion(config: Config, version: number): string {
  const retired = config.apiDeprecations.find((d) => d.version === version);
  const lifecycle = retired
    ? `**Deprecated** on ${retired.deprecation.toISOString().slice(0, 10)}; retired (410) from ${retired.sunset.toISOString().slice(0, 10)}. Move to v${version + 1}: ${migrationGuideUrl(config.publicUrl, version)}.`
    : 'The latest version.';
  return `Orders & Payments API, version ${version}. ${lifecycle} Paths answer under /v${version}; unversioned paths choose the version through \`Accept: ${vendorMediaType(version)}\`, else the version pinned to the calling client. Errors are RFC 9457 problem details (docs/errors.md).`;
}

/**
 * Every $ref to a schema of this version ("v1.Order") → the plain name its document uses ("Order");
 * the marker of keywords a route checks itself is the validator's business, not the reader's.
 */
function renameRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(renameRefs);
  if (!value || typeof value !== 'object') return value;
  const copy: JsonObject = {};
  for (const [key, member] of Object.entries(value)) {
    if (key === ROUTE_CHECKED) continue;
    copy[key] =
      key === '$ref' && typeof member === 'string' && member.startsWith('#/components/schemas/')
        ? `#/components/schemas/${unversionedSchemaId(member.slice('#/components/schemas/'.length))}`
        : renameRefs(member);
  }
  return copy;
}

/** The schemas version's document shows: the shared ones, and this version's resources under their plain names. */
function schemasOf(all: JsonObject, version: number): JsonObject {
  const own = `v${version}.`;
  const schemas: JsonObject = {};
  for (const [name, schema] of Object.entries(all)) {
    if (!/^v\d+\./.test(name) && (version === LATEST_API_VERSION || !(`${own}${name}` in all))) schemas[name] = schema;
  }
  for (const [name, schema] of Object.entries(all)) if (name.startsWith(own)) schemas[unversionedSchemaId(name)] = schema;
  return schemas;
}

/** version's document, cut from the one @fastify/swagger built of every route. */
export function versionDocument(all: Document, config: Config, version: number): Document {
  const prefix = `/v${version}`;
  const deprecated = config.apiDeprecations.some((d) => d.version === version);
  const paths: Document['paths'] = {};
  for (const [path, item] of Object.entries(all.paths)) {
    if (!path.startsWith(`${prefix}/`)) continue;
    const operations: Record<string, Operation> = {};
    for (const [method, operation] of Object.entries(structuredClone(item))) {
      if (deprecated) operation.responses!['410'] = problemResponse('The version is past its sunset date (VERSION_SUNSET).');
      documentMediaTypes(operation, version);
      documentOtherTokens(operation);
      operations[method] = deprecated ? { ...operation, deprecated: true } : operation;
    }
    paths[path.slice(prefix.length)] = operations;
  }
  // Links name operations of this document only (v1 has fewer).
  const documented = Object.values(paths).flatMap((item) => Object.values(item ?? {}) as Operation[]);
  const operationIds = new Set(documented.map((operation) => String(operation.operationId)));
  for (const operation of documented) documentLinks(operation, operationIds);
  const document = renameRefs({
    ...all,
    info: { ...all.info, version: String(version), description: describeVersion(config, version) },
    // OWASP API9:2023: say which environment a server is and who it is for.
    servers: [{ url: `${config.publicUrl}${prefix}`, description: `API v${version}, ${ENVIRONMENTS[config.env]}.`, 'x-internal': false }],
    paths,
    components: { ...all.components, schemas: schemasOf(all.components.schemas ?? {}, version) },
  }) as Document;
  // A resource of later versions only (DailyOrderTotal, from v3) is no schema of an earlier one's.
  document.components.schemas = referencedSchemas(document.paths, document.components.schemas ?? {});
  return document;
}

/** The schemas the paths refer to, directly or through other schemas, in their order. */
function referencedSchemas(paths: Document['paths'], schemas: JsonObject): JsonObject {
  const reached = new Set<string>();
  const visit = (value: unknown): void => {
    if (!value || typeof value !== 'object') return;
    for (const [key, member] of Object.entries(value)) {
      if (key === '$ref' && typeof member === 'string' && member.startsWith('#/components/schemas/')) {
        const name = member.slice('#/components/schemas/'.length);
        if (!reached.has(name)) {
          reached.add(name);
          visit(schemas[name]);
        }
      } else visit(member);
    }
  };
  visit(paths);
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => reached.has(name)));
}

/**
 * Route schemas declare bodies only; document the media types actually sent: problems as
 * application/problem+json (RFC 9457 §3), representations also as the vendor type a client can
 * ask for through Accept.
 */
function documentMediaTypes(operation: Operation, version: number): void {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const json = response.content?.['application/json'];
    if (!json) continue;
    response.content =
      Number(status) >= 400 ? { 'application/problem+json': json } : { 'application/json': json, [vendorMediaType(version)]: json };
  }
  // Any operation can meet a server-side failure; those answers are problems too.
  operation.responses ??= {};
  operation.responses['500'] ??= problemResponse('Unexpected server error (no internals in the body).');
  // What the HTTP edge answers before any route runs (src/http/client-errors.ts): any operation's
  // request can meet them, and the connection is closed after each.
  operation.responses['408'] ??= problemResponse('The request did not arrive in time (REQUEST_TIMEOUT); the connection is closed.');
  operation.responses['417'] ??= problemResponse(
    'An Expect other than 100-continue (REQUEST_EXPECTATION_FAILED); the request is not read and the connection is closed.',
  );
  operation.responses['431'] ??= problemResponse(
    'The request line and header fields exceed 16 KiB (REQUEST_HEADERS_TOO_LARGE); the connection is closed.',
  );
  operation.responses['503'] ??= problemResponse(
    'Database unavailable, server shutting down, or (payments and refunds) the rate limits cannot be counted; see Retry-After.',
  );
  documentRateLimits(operation);
  documentCors(operation);
}

/** Every answer carries the CORS fields when the calling page's origin is allowed (src/http/cors.ts). */
function documentCors(operation: Operation): void {
  for (const response of Object.values(operation.responses ?? {})) {
    response.headers = {
      ...response.headers,
      'Access-Control-Allow-Origin': { $ref: '#/components/headers/Access-Control-Allow-Origin' },
      'Access-Control-Expose-Headers': { $ref: '#/components/headers/Access-Control-Expose-Headers' },
    };
  }
}

const headerRef = (name: keyof typeof RATE_LIMIT_HEADER_COMPONENTS) => ({ $ref: `#/components/headers/${name}` });

/** Every operation is rate limited (src/http/rate-limit/): its 429, and the fields on each answer. */
function documentRateLimits(operation: Operation): void {
  operation.responses ??= {};
  const responses = operation.responses;
  // Declared by the route (src/http/rate-limit/rate-limit.ts); described here like the 5xx above.
  responses['429'] = {
    ...problemResponse('A rate-limit budget of the caller is used up (RATE_LIMITED): retry after Retry-After.'),
    ...responses['429'],
    description: 'A rate-limit budget of the caller is used up (RATE_LIMITED): retry after Retry-After.',
  };
  for (const [status, response] of Object.entries(responses)) {
    response.headers = { ...response.headers, 'RateLimit-Policy': headerRef('RateLimit-Policy'), RateLimit: headerRef('RateLimit') };
    if (status === '429' || status === '503') response.headers['Retry-After'] = headerRef('Retry-After');
  }
}

type SecuritySchemes = NonNullable<NonNullable<OpenAPIV3_2.Document['components']>['securitySchemes']>;

/** The security scheme of the authorization server's tokens (its name is part of v1's frozen contract). */
const OAUTH_SCHEME = 'bearer';
/** The same tokens, pasted: the ones `npm start` prints, `orderpay tokens issue`, or any the issuer gave. */
const TOKEN_SCHEME = 'accessToken';
/** The issuer's tokens bound to a key, sent with a proof of it (RFC 9449). */
const DPOP_SCHEME = 'dpop';

const JWT_PRACTICES =
  'RFC 9068 JWT access tokens, following the JWT best current practices (RFC8725): signed with an asymmetric key named in the JWKS, typed at+jwt, audience and issuer checked, 10 minutes of life.';

/**
 * How a caller gets a token: the OAuth flows of the issuer, each scope saying what it allows, or a
 * token already held, pasted as is (both sent as Authorization: Bearer, RFC 6750 §2.1).
 */
function securitySchemes(config: Config): SecuritySchemes {
  const scopes = { ...SCOPE_GRANTS };
  return {
    [OAUTH_SCHEME]: {
      type: 'oauth2',
      description: `${JWT_PRACTICES} Authorization code flow for users, with PKCE (RFC 7636, S256 only) required of every client; it also issues a refresh token, rotated on every use. Client credentials for services get none (RFC 6749 §4.4.3) and ask again.`,
      flows: {
        authorizationCode: {
          authorizationUrl: `${config.issuer}/authorize`,
          tokenUrl: `${config.issuer}/token`,
          refreshUrl: `${config.issuer}/token`,
          scopes,
        },
        clientCredentials: { tokenUrl: `${config.issuer}/token`, scopes },
      },
    },
    [TOKEN_SCHEME]: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: `An access token you already hold, sent as \`Authorization: Bearer <token>\`: those \`npm start\` prints in development, \`orderpay tokens issue\`, or one from the flows of ${OAUTH_SCHEME}. ${JWT_PRACTICES} The token must carry the scopes one of the operation's other requirements names.`,
    },
    [DPOP_SCHEME]: {
      type: 'http',
      // OpenAPI 3.1 allows bearerFormat only for the bearer scheme; the description says it is a JWT.
      scheme: 'DPoP',
      description: `A DPoP-bound access token (RFC 9449), from the flows of ${OAUTH_SCHEME} with a DPoP proof at the token endpoint: sent as \`Authorization: DPoP <token>\` with a \`DPoP\` header, a new proof for each request signed by the bound key (${DPOP_ALGORITHMS.join(', ')}) for its method, URL (as PUBLIC_URL spells it) and token. A bound token is refused as Bearer (docs/api.md, "Calling the API with DPoP"). ${JWT_PRACTICES} The token must carry the scopes one of the operation's other requirements names.`,
    },
  };
}

/**
 * Every operation that takes the issuer's tokens also takes a pasted one: a second security
 * requirement, an alternative to the first (OpenAPI 3.1 §4.8.30). An http scheme lists no scopes;
 * the OAuth requirements beside it name those the token must carry. It goes second, where v1's
 * frozen document has it, so that an operation's later alternatives (a refund's payments:refund)
 * are additions to that contract; the DPoP-bound token, the latest alternative, goes last.
 */
function documentOtherTokens(operation: Operation): void {
  const security = operation.security as Record<string, string[]>[] | undefined;
  if (!security?.some((requirement) => OAUTH_SCHEME in requirement)) return;
  const [first, ...alternatives] = security;
  operation.security = [first!, { [TOKEN_SCHEME]: [] }, ...alternatives, { [DPOP_SCHEME]: [] }];
}

/** docsSignIn: whether the authorization server here registers the client /docs signs in with. */
async function openApi(app: FastifyInstance, { config, docsSignIn }: { config: Config; docsSignIn: boolean }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'orderpay',
        version: String(LATEST_API_VERSION),
        contact: { name: 'orderpay API reference', url: `${config.publicUrl}/docs` },
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: TAGS,
      components: {
        headers: { ...RATE_LIMIT_HEADER_COMPONENTS, ...CORS_HEADER_COMPONENTS },
        securitySchemes: securitySchemes(config),
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });

  const documents = new Map<number, Document>();
  function openApiDocument(version: number): Document {
    let document = documents.get(version);
    if (!document) {
      document = versionDocument(app.swagger() as unknown as Document, config, version);
      documents.set(version, document);
    }
    return document;
  }
  app.decorate('openApiDocument', openApiDocument);

  await app.register(
    swaggerUi,
    docsPageOptions(config, docsSignIn, () => openApiDocument(LATEST_API_VERSION)),
  );

  const sendDocument = (version: number) =>
    async function sendOpenApiDocument(_request: unknown, reply: { header(name: string, value: string): unknown }) {
      reply.header('cache-control', 'public, max-age=300');
      return openApiDocument(version);
    };
  app.get('/openapi.json', { schema: { hide: true } }, sendDocument(LATEST_API_VERSION));
  // The guide each deprecated version's Link header (rel="deprecation") points to.
  for (const { version } of config.apiDeprecations) {
    const guide = readFileSync(new URL(`../../docs/migrating-to-v${version + 1}.md`, import.meta.url), 'utf8');
    app.get(`/docs/migrating-to-v${version + 1}`, { schema: { hide: true } }, async function sendMigrationGuide(_request, reply) {
      return reply.type('text/markdown; charset=utf-8').header('cache-control', 'public, max-age=300').send(guide);
    });
  }
  for (const version of API_VERSION_NUMBERS) app.get(`/v${version}/openapi.json`, { schema: { hide: true } }, sendDocument(version));
}

/** Registered before the routes: @fastify/swagger collects them as they are added. */
export const openApiPlugin = fp(openApi, { name: 'orderpay-openapi', fastify: '5.x' });

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document of one API version, as served at /v<N>/openapi.json. */
    openApiDocument(version: number): Record<string, unknown>;
  }
}
