// /docs: Swagger UI over the versions' OpenAPI documents, under its own Content-Security-Policy.
// It signs in with the authorization code flow and PKCE as the public client orderpay-docs (the
// authorization server registers it: src/auth/docs-client.ts), or takes a pasted access token.
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { Config } from '../config.ts';
import { API_VERSION_NUMBERS, LATEST_API_VERSION } from '../core/api-versions.ts';
import { SCOPES, STAFF_ONLY_SCOPES } from '../core/scopes.ts';

/** The client id /docs signs in with. */
export const DOCS_CLIENT_ID = 'orderpay-docs';

/** Where Swagger UI sends the authorization server's answer: its own page under /docs/static. */
export const DOCS_REDIRECT_PATH = '/docs/static/oauth2-redirect.html';

/**
 * Swagger UI's Content-Security-Policy: its scripts and styles from /docs/static, inline style
 * attributes (its React components set them), data: images and fonts, the documents, the API and
 * the token endpoint fetched from here, PUBLIC_URL or the issuer; framed by no one.
 */
function swaggerUiCsp(config: Config): string {
  // "Try it out" calls the API at PUBLIC_URL; "Authorize" the issuer's token endpoint.
  const connect = new Set(["'self'", new URL(config.publicUrl).origin, new URL(config.issuer).origin]);
  return [
    "default-src 'self'",
    "base-uri 'self'",
    `connect-src ${[...connect].join(' ')}`,
    "font-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "img-src 'self' data:",
    "object-src 'none'",
    "script-src 'self'",
    "script-src-attr 'none'",
    "style-src 'self' 'unsafe-inline'",
  ].join('; ');
}

/**
 * Swagger UI's requestInterceptor: "Try it out" pre-fills Idempotency-Key with the operation's
 * example, and a second try with another body would be refused as the key's reuse (422). A key
 * still showing the examples' marker (EXAMPLE_KEY_PREFIX, src/http/idempotency.ts) is replaced by
 * a fresh one on every try; a key the user typed is sent as typed. @fastify/swagger-ui writes the
 * function's source into the page's script, so it names nothing from outside itself.
 */
export function freshExampleIdempotencyKey<R extends { headers: Record<string, string> }>(request: R): R {
  for (const name of Object.keys(request.headers)) {
    if (name.toLowerCase() === 'idempotency-key' && request.headers[name]?.startsWith('e0e0e0e0-')) {
      request.headers[name] = crypto.randomUUID();
    }
  }
  return request;
}

/**
 * The options of @fastify/swagger-ui for /docs. With signIn, "Authorize" runs the authorization
 * code flow with PKCE (RFC 7636, S256) as DOCS_CLIENT_ID, the scopes a customer may hold ticked;
 * the redirect URI is the page's own (DOCS_REDIRECT_PATH on the origin it was opened at).
 */
export function docsPageOptions(config: Config, signIn: boolean, latestDocument: () => Record<string, unknown>): FastifySwaggerUiOptions {
  return {
    routePrefix: '/docs',
    staticCSP: swaggerUiCsp(config),
    uiConfig: {
      deepLinking: false,
      // No badge from validator.swagger.io: the page loads nothing from elsewhere (see its CSP).
      validatorUrl: null,
      // The topbar switches between the versions' documents, the latest first.
      urls: [...API_VERSION_NUMBERS].reverse().map((v) => ({ url: `/v${v}/openapi.json`, name: `v${v}` })),
      'urls.primaryName': `v${LATEST_API_VERSION}`,
      requestInterceptor: freshExampleIdempotencyKey,
    } as never,
    initOAuth: signIn
      ? {
          clientId: DOCS_CLIENT_ID,
          appName: 'orderpay API reference',
          usePkceWithAuthorizationCodeGrant: true,
          scopes: SCOPES.filter((scope) => !STAFF_ONLY_SCOPES.has(scope)),
        }
      : {},
    transformSpecification: latestDocument,
  };
}
