// oidc-provider mounted at /oauth (and its RFC 8414 metadata) as middleware in the Fastify process:
// every request counted against the per-IP limit first (a hook before the middleware), its host
// and scheme pinned to PUBLIC_URL.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import middie from '@fastify/middie';
import type { Config } from '../config.ts';
import { databaseFailure } from '../db/sqlstate.ts';
import { isDpopProofFromTheFuture, MAX_FUTURE_SECONDS } from './future-jwts.ts';
import { isAllowedOrigin, isPreflight } from '../http/cors.ts';
import type { Counters } from '../http/rate-limit/counters.ts';
import { isUnansweredByProvider } from './provider.ts';
import type { RotatingProvider } from './rotating-provider.ts';
import { oauthRequestLimit } from './rate-limits.ts';

/**
 * The provider's endpoints under /oauth and their methods, as oidc-provider registers them for our
 * configuration (src/auth/provider.ts; its lib/helpers/initialize_app.js): another method on one
 * of these paths answers 405 with Allow. CORS preflights (OPTIONS with Access-Control-Request-Method)
 * from an allowed origin are answered by the provider on its cross-origin endpoints besides. A test holds this table to
 * what the provider serves (test/http/auth/oauth-routes.test.ts).
 */
export const PROVIDER_ENDPOINTS: Readonly<Record<string, readonly string[]>> = {
  '/authorize': ['GET', 'HEAD'],
  '/authorize/:uid': ['GET', 'HEAD'],
  '/token': ['POST'],
  '/request': ['POST'],
  '/revoke': ['POST'],
  '/introspect': ['POST'],
  '/logout': ['GET', 'HEAD'],
  '/logout/confirm': ['POST'],
  '/logout/success': ['GET', 'HEAD'],
  '/.well-known/openid-configuration': ['GET', 'HEAD'],
  '/.well-known/oauth-authorization-server': ['GET', 'HEAD'],
};

/** /oauth/userinfo, as the mount sees its URL (src/auth/userinfo.routes.ts). */
const USERINFO = /^\/userinfo(?:\?|$)/;

interface MountOptions {
  config: Config;
  provider: RotatingProvider;
  /** Where the per-IP limit is counted. */
  counters: Counters;
}

/**
 * The provider builds every URL it publishes (discovery, redirects) from the request's host and
 * scheme; both are pinned to PUBLIC_URL so no client header can change them.
 */
function pinToPublicUrl(req: IncomingMessage, publicUrl: URL): void {
  req.headers.host = publicUrl.host;
  req.headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
  delete req.headers['x-forwarded-host'];
}

/**
 * A request the mount could not serve (the provider failing to build, its database unreachable):
 * RFC 6749's JSON error, 503 temporarily_unavailable with Retry-After when the database
 * is the cause, else 500 server_error, logged. Never the router's 404 it would fall through to.
 */
function answerFailure(res: ServerResponse, error: unknown, log: FastifyBaseLogger): void {
  const unavailable = databaseFailure(error)?.code === 'SERVICE_UNAVAILABLE';
  if (!unavailable) log.error({ err: error }, 'authorization server request failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.statusCode = unavailable ? 503 : 500;
  if (unavailable) res.setHeader('retry-after', '1');
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.end(
    JSON.stringify(
      unavailable
        ? { error: 'temporarily_unavailable', error_description: 'The authorization server cannot reach its database; retry shortly.' }
        : { error: 'server_error', error_description: 'An unexpected failure on our side.' },
    ),
  );
}

/**
 * A preflight from an origin not on the allow-list: left to Fastify (405, no Access-Control-*
 * headers), as on the API. The provider would grant any origin's preflight and refuse the call after.
 */
function refusesPreflight(req: IncomingMessage, config: Config): boolean {
  return isPreflight(req.method, req.headers) && !isAllowedOrigin(config.cors, req.headers.origin);
}

/** X-Request-Id and nosniff as on every other response: the provider answers outside Fastify's onSend. */
function identifyResponse(res: ServerResponse, requestId: string): void {
  res.setHeader('x-request-id', requestId);
  res.setHeader('x-content-type-options', 'nosniff');
}

/** Every method: the provider's paths are routes of the mount's scope, whatever the method, so that middie runs on them (and only on them). */
const ANY_METHOD = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'];

/** RFC 8414 §3.1: the metadata of an issuer with a path lives at /.well-known/…/<path>. */
const METADATA_PATH = '/.well-known/oauth-authorization-server/oauth';

/** The paths the mount serves, as route patterns: the provider's under /oauth, and its RFC 8414 metadata (/oauth itself is no endpoint: the router's 404). */
const MOUNTED_ROUTES = ['/oauth/*', METADATA_PATH];

/** Whether a request was routed to the authorization server's paths (by its route pattern: as decoded and matched). */
const isAuthorizationServerRoute = (url: string | undefined) => url !== undefined && (url.startsWith('/oauth/') || url === METADATA_PATH);

export async function mountProvider(app: FastifyInstance, { config, provider, counters }: MountOptions): Promise<void> {
  const publicUrl = new URL(config.publicUrl);
  // On the authorization server's routes (its scope: src/app.ts), before middie's hook, so that a refused request never reaches the provider or its pages.
  app.addHook('onRequest', oauthRequestLimit(app, counters));
  // Every path of the authorization server (the provider's, its pages, the JWKS, userinfo) sees PUBLIC_URL's host and scheme.
  app.addHook('onRequest', function pinAuthorizationServerRequests(request, reply, done) {
    if (isAuthorizationServerRoute(request.routeOptions.url)) {
      identifyResponse(reply.raw, request.id);
      pinToPublicUrl(request.raw, publicUrl);
    }
    done();
  });
  // middie in a scope of its own, whose routes are the mounted paths: its hook is on their way
  // alone, not on every request's; what the provider leaves unanswered goes to the router's 404/405.
  await app.register(async function authorizationServerMount(scope) {
    await scope.register(middie);
    // The provider reads the bodies it takes itself: nothing is parsed for it (nor refused: what it
    // leaves unanswered gets the router's 404/405 whatever its body, as a path without a route does).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', function leaveBodyToProvider(_request, _payload, done) {
      done(null);
    });
    for (const url of MOUNTED_ROUTES) {
      scope.route({
        method: ANY_METHOD,
        url,
        schema: { hide: true },
        // Kept out of the route table: the provider's own methods per path are declared below.
        config: { servedByMiddleware: true },
        handler: function answerUnservedPath(_request, reply) {
          reply.callNotFound();
        },
      });
    }
    mountMiddleware(scope, config, provider);
  });
  for (const [path, methods] of Object.entries(PROVIDER_ENDPOINTS)) app.declareRoute(`/oauth${path}`, methods);
  app.declareRoute(METADATA_PATH, ['GET', 'HEAD']);
}

/** The provider's endpoints that take a DPoP proof (RFC 9449 §5, §10.1). */
const PROOF_TAKING_PATHS = /^\/(?:token|request)(?:\?|$)/;

/** RFC 9449 §5: as the provider refuses a proof, 400 invalid_dpop_proof (FAPI 2.0 §5.3.2.1 item 13: future-jwts.ts). */
function refuseFutureProof(res: ServerResponse): void {
  res.statusCode = 400;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.end(
    JSON.stringify({
      error: 'invalid_dpop_proof',
      error_description: `DPoP proof iat is more than ${MAX_FUTURE_SECONDS} s in the future`,
    }),
  );
}

/** The provider as middleware on the mount's scope (its host and scheme already pinned). */
function mountMiddleware(scope: FastifyInstance, config: Config, provider: RotatingProvider): void {
  scope.use('/oauth', function serveAuthorizationServer(req, res, next) {
    // The interaction pages, the JWKS and userinfo are Fastify routes; everything else is the provider's.
    if (req.url?.startsWith('/interaction/') || req.url === '/jwks' || USERINFO.test(req.url ?? '') || refusesPreflight(req, config)) {
      return next();
    }
    // RFC 6749 §5.1: token responses carry Pragma: no-cache beside the provider's no-store.
    if (req.url?.startsWith('/token')) res.setHeader('pragma', 'no-cache');
    if (req.method === 'POST' && PROOF_TAKING_PATHS.test(req.url ?? '') && isDpopProofFromTheFuture(req.headers.dpop, Date.now() / 1000)) {
      refuseFutureProof(res);
      return;
    }
    provider
      .current()
      .then(() => provider.callback()(req, res))
      .then(() => {
        // Unknown paths and methods: Fastify's not-found handler answers them as problems.
        if (isUnansweredByProvider(req)) next();
      })
      .catch((error: unknown) => answerFailure(res, error, scope.log));
  });
  scope.use(METADATA_PATH, function serveServerMetadata(req, res, next) {
    if ((req.url !== '/' && req.url !== '') || refusesPreflight(req, config)) return next();
    const asked = req as IncomingMessage & { originalUrl?: string };
    const originalUrl = asked.originalUrl;
    req.url = '/.well-known/openid-configuration';
    // oidc-provider takes its mount path from originalUrl less url; without this the endpoints
    // in the document would lose their /oauth prefix.
    asked.originalUrl = `/oauth${req.url}`;
    provider
      .current()
      .then(() => provider.callback()(req, res))
      .then(() => {
        if (!isUnansweredByProvider(req)) return;
        // Another method than GET: answered by Fastify (405), for the path the client asked.
        asked.originalUrl = originalUrl;
        next();
      })
      .catch((error: unknown) => answerFailure(res, error, scope.log));
  });
}
