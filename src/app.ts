// buildApp(config, db) → the Fastify instance with every plugin and route registered. Never listens.
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { Db } from './db/db.ts';
import { registerAuthorizationServer } from './auth/authorization-server.ts';
import { listPublishedKeys } from './auth/keys.store.ts';
import { listRevokedGrantsSince } from './auth/revoked-grants.store.ts';
import { bearerAuthentication, createTokenVerifier, type TokenVerifier } from './http/authenticate.ts';
import { createRouteTable, registerErrorHandling, sendFrameworkError } from './http/error-handler.ts';
import { createGrantRevocations } from './http/grant-revocations.ts';
import { registerMetrics } from './http/metrics.ts';
import { registerOpenApi } from './http/openapi.ts';
import { generateRequestId } from './http/request-id.ts';
import { Problem } from './http/schemas.ts';
import { createValidatorCompiler } from './http/validation.ts';
import { API_VERSIONS, resolveApiVersion } from './http/versioning.ts';
import { registerOperationalRoutes } from './http/operational.routes.ts';
import { ordersRoutes } from './orders/orders.routes.ts';
import { Order, OrderItem } from './orders/orders.schemas.ts';
import { createFailpoint, type Failpoint } from './http/failpoints.ts';
import { scheduleIdempotencyKeyPurge } from './payments/idempotency.ts';
import { paymentsRoutes } from './payments/payments.routes.ts';
import { Payment, Refund } from './payments/payments.schemas.ts';
import { createSimulatedProcessor, withProcessorTimeout, type PaymentProcessor } from './payments/processor.ts';
import { productsRoutes } from './products/products.routes.ts';
import { Product } from './products/products.schemas.ts';

export interface AppOptions {
  /** Clock for token expiry checks (tests inject one). */
  now?: () => Date;
  /** How often the authorization server checks for rotated signing keys (tests use 0). */
  keyCheckIntervalMs?: number;
  /** How stale the resource server's copy of revoked grants may get (default 1000; tests use 0). */
  revocationCheckIntervalMs?: number;
  /** Clock of the authorization server's rate limits (tests freeze it inside one window). */
  rateLimitNow?: () => Date;
  /** Pino logger options; false silences logging (tests). */
  logger?: boolean | object;
  /** The payment processor; the deterministic simulator by default (docs/payments.md). */
  paymentProcessor?: PaymentProcessor;
  /** How long a processor call may take before it counts as unavailable (default 10 s). */
  processorTimeoutMs?: number;
  /** Test-only fault injection at named points of a write (src/http/failpoints.ts). */
  failpoint?: Failpoint;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    db: Db;
    tokenVerifier: TokenVerifier;
    failpoint: Failpoint | undefined;
  }
}

export const BODY_LIMIT = 64 * 1024;

export async function buildApp(config: Config, db: Db, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel },
    genReqId: generateRequestId,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    // A hop count trusts that many proxies nearest to us (RFC 7239 hops), never the client's claims.
    trustProxy: typeof config.trustProxy === 'number' ? ((_address: string, hop: number) => hop < (config.trustProxy as number)) : config.trustProxy,
    routerOptions: { maxParamLength: 200 },
    frameworkErrors: sendFrameworkError,
  });
  app.decorate('config', config);
  app.decorate('db', db);
  app.decorate('tokenVerifier', createTokenVerifier({
    issuer: config.issuer,
    audience: config.audience,
    jwksUrl: config.jwksUrl,
    loadKeys: () => listPublishedKeys(db),
    revocations: createGrantRevocations({
      loadRevokedSince: (since) => listRevokedGrantsSince(db, since),
      intervalMs: options.revocationCheckIntervalMs,
      now: options.now,
    }),
    now: options.now,
  }));
  app.decorate('paymentProcessor', withProcessorTimeout(options.paymentProcessor ?? createSimulatedProcessor(), options.processorTimeoutMs));
  app.decorate('failpoint', createFailpoint(config, options.failpoint));
  app.setValidatorCompiler(createValidatorCompiler());
  // Only JSON bodies: Fastify's built-in text/plain parser would let other media types through.
  app.removeContentTypeParser('text/plain');

  const routeTable = createRouteTable();
  app.addHook('onRoute', function recordRoute(route) {
    routeTable.add(route.url ?? route.path, route.method);
  });
  registerErrorHandling(app, routeTable.methodsFor);
  app.addHook('onSend', async function sendRequestId(request, reply) {
    reply.header('x-request-id', request.id);
  });

  for (const schema of [Problem, Order, OrderItem, Product, Payment, Refund]) app.addSchema(schema);
  await registerOpenApi(app, config);

  registerMetrics(app);
  registerOperationalRoutes(app);

  // Resource routes: once per version under /v<N>, and once unversioned (negotiated by Accept).
  const authenticate = bearerAuthentication(app.tokenVerifier);
  const resourceRoutes = async (scope: FastifyInstance, opts: { pathVersion?: number }) => {
    if (opts.pathVersion !== undefined) {
      // The OpenAPI document describes the unversioned paths once; /v<N> mirrors them.
      scope.addHook('onRoute', function hideVersionedMirror(route) {
        route.schema = { ...route.schema, hide: true };
      });
    }
    scope.addHook('onRequest', resolveApiVersion(opts.pathVersion));
    scope.addHook('onRequest', authenticate);
    await scope.register(ordersRoutes);
    await scope.register(productsRoutes);
    await scope.register(paymentsRoutes);
  };
  if (config.servers.resource) {
    for (const { version } of API_VERSIONS) await app.register(resourceRoutes, { prefix: `/v${version}`, pathVersion: version });
    await app.register(resourceRoutes, {});
    scheduleIdempotencyKeyPurge(app);
  }
  if (config.servers.authorization) await registerAuthorizationServer(app, config, db, { keyCheckIntervalMs: options.keyCheckIntervalMs, now: options.rateLimitNow });

  return app;
}
