// /metrics on a listener of its own (ORDERPAY_METRICS_PORT): a small Fastify app serving the API
// app's registry, and nothing else, with the same token check and problem bodies. Built here;
// src/main.ts listens.
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Config } from '../config.ts';
import { registerMetricsRoute } from './metrics.ts';
import { problemsPlugin } from './problems.ts';
import { generateRequestId } from './request-id.ts';
import { securityHeadersPlugin } from './security-headers.ts';

export async function buildMetricsApp(api: FastifyInstance): Promise<FastifyInstance> {
  const config: Config = api.config;
  // The API's logger; a scrape every few seconds is not worth a log line.
  const app = Fastify({
    loggerInstance: api.log,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: generateRequestId,
  });
  app.decorate('config', config);
  await app.register(securityHeadersPlugin);
  await app.register(problemsPlugin);
  registerMetricsRoute(app, api.metricsRegistry, config.metrics.token);
  return app;
}
