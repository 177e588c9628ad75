// The OpenAPI 3.1 document, generated from the route schemas, at /openapi.json and /docs.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Config } from '../config.ts';
import { SCOPES } from '../core/scopes.ts';

const serverProblem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

async function openApi(app: FastifyInstance, { config }: { config: Config }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'orderpay',
        version: '1',
        description:
          'Orders & Payments API. Paths answer with and without the /v1 prefix; unversioned paths choose the version through `Accept: application/vnd.orderpay.v1+json` (default v1). Money is an integer count of minor units beside an ISO 4217 currency. Errors are RFC 9457 problem details (docs/errors.md).',
      },
      servers: [{ url: config.publicUrl, description: 'Unversioned paths; the /v1 prefix serves the same operations.' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'oauth2',
            description: 'RFC 9068 JWT access token from the authorization server, sent as Authorization: Bearer <token>.',
            flows: {
              authorizationCode: {
                authorizationUrl: `${config.issuer}/authorize`,
                tokenUrl: `${config.issuer}/token`,
                scopes: Object.fromEntries(SCOPES.map((s) => [s, s])),
              },
              clientCredentials: { tokenUrl: `${config.issuer}/token`, scopes: Object.fromEntries(SCOPES.map((s) => [s, s])) },
            },
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    // Route schemas declare bodies only; document the media types actually sent: problems as
    // application/problem+json (RFC 9457 §3), representations also as the vendor type a client
    // can ask for through Accept.
    transformObject: function documentMediaTypes(documentObject) {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const document = documentObject.openapiObject;
      const vendorType = `application/vnd.orderpay.v${document.info?.version}+json`;
      type Operation = { responses?: Record<string, { content?: Record<string, unknown> }> };
      for (const pathItem of Object.values((document.paths ?? {}) as Record<string, Record<string, Operation>>)) {
        for (const operation of Object.values(pathItem)) {
          for (const [status, response] of Object.entries(operation.responses ?? {})) {
            const json = response.content?.['application/json'];
            if (!json) continue;
            response.content =
              Number(status) >= 400 ? { 'application/problem+json': json } : { 'application/json': json, [vendorType]: json };
          }
          // Any operation can meet a server-side failure; those answers are problems too.
          operation.responses ??= {};
          operation.responses['500'] ??= serverProblem('Unexpected server error (no internals in the body).');
          operation.responses['503'] ??= serverProblem('Database unavailable or server shutting down; see Retry-After.');
        }
      }
      return document;
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: false } });

  app.get('/openapi.json', { schema: { hide: true } }, async function sendOpenApiDocument(_request, reply) {
    reply.header('cache-control', 'public, max-age=300');
    return app.swagger();
  });
}

/** Registered before the routes: @fastify/swagger collects them as they are added. */
export const openApiPlugin = fp(openApi, { name: 'orderpay-openapi', fastify: '5.x' });
