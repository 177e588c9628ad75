// Prometheus metrics (prom-client): process defaults plus request counts and latencies per route.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { NEVER_SHED } from './load-shedding.ts';

async function metrics(app: FastifyInstance): Promise<void> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'orderpay_' });
  const duration = new Histogram({
    name: 'orderpay_http_request_duration_seconds',
    help: 'HTTP request duration by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });

  // Node closes a connection beyond ORDERPAY_HTTP_MAX_CONNECTIONS as it is accepted ('drop').
  const dropped = new Counter({
    name: 'orderpay_http_connections_dropped_total',
    help: 'Client connections closed on arrival because the server held ORDERPAY_HTTP_MAX_CONNECTIONS already.',
    registers: [registry],
  });
  app.server.on('drop', function countDroppedConnection() {
    dropped.inc();
  });

  app.addHook('onResponse', async function observeRequestDuration(request, reply) {
    duration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/metrics', { schema: { hide: true }, config: NEVER_SHED }, async function sendMetrics(_request, reply) {
    reply.header('cache-control', 'no-store').type(registry.contentType);
    return registry.metrics();
  });
}

export const metricsPlugin = fp(metrics, { name: 'orderpay-metrics', fastify: '5.x' });
