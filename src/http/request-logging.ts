// The request log: one line per request, when it completes ("request completed", with the request
// and the response: method, path, status, time), as the README promises. The line as it arrives
// ("incoming request") is at debug, for following a request that never completes. The probes
// (/livez, /readyz), which a load balancer or an orchestrator asks every few seconds on every
// instance, are logged at debug too, unless the probe failed (an error or a 5xx is logged as any
// request; /readyz also warns of its cause).
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

const PROBE_ROUTES = new Set(['/livez', '/readyz']);

const isProbe = (request: FastifyRequest) => PROBE_ROUTES.has(request.routeOptions?.url ?? '');

export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) super.requestCompleted(error, request, reply, metadata);
    else if (reply.statusCode < 500 && isProbe(request)) reply.log.debug(line, 'request completed');
    else reply.log.info(line, 'request completed');
  }
}
