// Prometheus metrics (prom-client): process defaults, request counts and latencies per route,
// dropped connections, and the business (./business-metrics.ts). /metrics answers on the API's
// listener, on a listener of its own (./metrics-listener.ts) or nowhere, as configured; with
// ORDERPAY_METRICS_TOKEN set, only to that bearer token (docs/deploy.md).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { bearerCredentials } from './authenticate.ts';
import { type BusinessMetrics, createBusinessMetrics, registerPoolGauges } from './business-metrics.ts';
import { NEVER_SHED } from './load-shedding.ts';
import { ProblemError } from './problem.ts';
import { registerRequestDurations } from './request-durations.ts';

const METRICS_REALM = 'orderpay-metrics';

async function metrics(app: FastifyInstance): Promise<void> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'orderpay_' });
  const durations = registerRequestDurations(registry);

  // Node closes a connection beyond ORDERPAY_HTTP_MAX_CONNECTIONS as it is accepted ('drop').
  const dropped = new Counter({
    name: 'orderpay_http_connections_dropped_total',
    help: 'Client connections closed on arrival because the server held ORDERPAY_HTTP_MAX_CONNECTIONS already.',
    registers: [registry],
  });
  app.server.on('drop', function countDroppedConnection() {
    dropped.inc();
  });

  const business = createBusinessMetrics(registry);
  registerPoolGauges(registry, app.db);
  app.decorate('businessMetrics', business);
  app.decorate('metricsRegistry', registry);

  // Callback form: an async hook costs a promise and a turn of the microtask queue per request.
  app.addHook('onResponse', function observeRequest(request, reply, done) {
    const route = request.routeOptions.url ?? 'unmatched';
    durations.observe(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    // The idempotency layer marks a stored response it sent again (src/idempotency/).
    if (reply.getHeader('idempotent-replayed') === 'true') business.countReplay({ method: request.method, route });
    done();
  });

  if (app.config.metrics.listener === 'api') registerMetricsRoute(app, registry, app.config.metrics.token);
}

export const metricsPlugin = fp(metrics, { name: 'orderpay-metrics', fastify: '5.x' });

/** GET /metrics: the registry in Prometheus' text format, behind the token when one is configured. */
export function registerMetricsRoute(app: FastifyInstance, registry: Registry, token: string | undefined): void {
  app.get(
    '/metrics',
    { schema: { hide: true }, config: NEVER_SHED, onRequest: token === undefined ? [] : [requireMetricsToken(token)] },
    async function sendMetrics(_request, reply) {
      reply.header('cache-control', 'no-store').type(registry.contentType);
      return registry.metrics();
    },
  );
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/**
 * onRequest hook: 401 unless the request carries the metrics token (RFC 6750 §3 challenge).
 * Digests of both are compared in constant time: timingSafeEqual needs equal lengths, and the
 * time taken tells nothing of the token, its length included.
 */
function requireMetricsToken(token: string) {
  const expected = sha256(token);
  return async function checkMetricsToken(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const given = header === undefined ? undefined : bearerCredentials(header);
    if (given !== undefined && timingSafeEqual(sha256(given), expected)) return;
    if (header === undefined) {
      throw new ProblemError('AUTH_METRICS_TOKEN_INVALID', '/metrics requires the metrics token: Authorization: Bearer <token>.', {
        headers: { 'www-authenticate': `Bearer realm="${METRICS_REALM}"` },
      });
    }
    throw new ProblemError('AUTH_METRICS_TOKEN_INVALID', 'The credentials sent are not the metrics token.', {
      headers: { 'www-authenticate': `Bearer realm="${METRICS_REALM}", error="invalid_token"` },
    });
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Counters of what the business did; routes count once their transaction has committed. */
    businessMetrics: BusinessMetrics;
    /** Every metric of this app: /metrics serves it, here or on its own listener. */
    metricsRegistry: Registry;
  }
}
