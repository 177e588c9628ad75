// Load shedding: while the event loop lags behind (the process has more work than CPU), a request
// is refused at once with 503 and Retry-After instead of queueing behind the backlog, where it
// would be answered only after its client has given up. The lag is Node's own measure
// (perf_hooks.monitorEventLoopDelay), counted from the moment the app is ready: the work of
// starting up blocks the loop, and must not make a new process refuse its first requests
// (docs/decisions/0019-load-shedding-on-event-loop-lag.md, on why this is not @fastify/under-pressure).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { DomainError } from '../core/errors.ts';
import { sendProblem } from './problem.ts';

/** How often the loop's turns are timed. */
const RESOLUTION_MS = 10;

/** Route config for what must answer under load too: liveness (a shed /livez gets a busy process killed) and metrics. */
export const NEVER_SHED = { shedUnderLoad: false } as const;

async function loadShedding(app: FastifyInstance, { maxEventLoopDelayMs }: { maxEventLoopDelayMs: number }): Promise<void> {
  if (maxEventLoopDelayMs === 0) return;
  // The lag is the mean over this window: a second, or the limit when it is shorter.
  const windowMs = Math.min(1000, maxEventLoopDelayMs);
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  let lagging = false;
  let lastWindowLagged = false;
  let sampler: NodeJS.Timeout | undefined;

  function sampleLag(): void {
    // A window without a single turn of the loop was blocked throughout.
    const lagMs = histogram.count === 0 ? Number.POSITIVE_INFINITY : Math.max(0, histogram.mean / 1e6 - RESOLUTION_MS);
    histogram.reset();
    const lagged = lagMs > maxEventLoopDelayMs;
    // Two windows in a row: one pause (a garbage collection, one slow synchronous step) has
    // passed by the time it is measured, and is no reason to refuse anyone.
    lagging = lagged && lastWindowLagged;
    lastWindowLagged = lagged;
  }

  app.addHook('onReady', async function startMeasuringLag() {
    histogram.enable();
    sampler = setInterval(sampleLag, windowMs);
    sampler.unref();
  });
  app.addHook('onClose', async function stopMeasuringLag() {
    clearInterval(sampler);
    histogram.disable();
  });

  app.addHook('onRequest', function shedWhileLagging(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    if (!lagging || request.routeOptions.config.shedUnderLoad === false) return done();
    // Answered here, not thrown: one log line per refusal would add to the load (the metrics count them).
    sendProblem(request, reply, new DomainError('SERVICE_UNAVAILABLE', 'The server is overloaded; retry shortly.'));
  });
}

export const loadSheddingPlugin = fp(loadShedding, { name: 'orderpay-load-shedding', fastify: '5.x' });

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route answers even while the server sheds load (NEVER_SHED). */
    shedUnderLoad?: boolean;
  }
}
