// The request log: Fastify's two lines per request (incoming, completed), except for the probes.
// A load balancer or an orchestrator asks /livez and /readyz every few seconds on every instance:
// at info that would be most of the log. Their lines go to debug, unless the probe failed (an
// error or a 5xx keeps Fastify's lines; /readyz also warns of its cause).
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

const PROBE_ROUTES = new Set(['/livez', '/readyz']);

const isProbe = (request: FastifyRequest) => PROBE_ROUTES.has(request.routeOptions?.url ?? '');

export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (isProbe(request)) request.log.debug({ req: request }, 'incoming request');
    else super.incomingRequest(request, reply, metadata);
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (error || reply.statusCode >= 500 || !isProbe(request)) super.requestCompleted(error, request, reply, metadata);
    else reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
