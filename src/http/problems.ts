// The problems plugin: every error becomes an RFC 9457 problem body. Domain errors carry their
// code; schema validation, Fastify's own request errors and database failures are mapped here,
// each by its own table. 5xx bodies never carry internals: the cause goes to the log only.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { DomainError, type ErrorCode } from '../core/errors.ts';
import { databaseFailure } from '../db/sqlstate.ts';
import { ProblemError, sendProblem } from './problem.ts';
import { createRouteTable } from './route-table.ts';
import { setSecurityHeaders } from './security-headers.ts';
import { validationProblem, type AjvError } from './validation-problems.ts';

// Fastify's own request errors (content-type parser, body limit) by code.
const FASTIFY_ERRORS: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ['REQUEST_BODY_TOO_LARGE', 'The request body exceeds the 64 KiB limit.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['REQUEST_UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['REQUEST_BODY_MALFORMED', 'Content-Length does not match the body.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['REQUEST_BODY_MALFORMED', 'The JSON body is empty.'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['REQUEST_BODY_MALFORMED', 'The body is not valid JSON.'],
  FST_ERR_CTP_INVALID_TYPE: ['REQUEST_UNSUPPORTED_MEDIA_TYPE', 'The Content-Type header is malformed.'],
  // Raised while routing, before any hook runs.
  FST_ERR_BAD_URL: ['REQUEST_PARAMETER_INVALID', 'The request path is not valid percent-encoding.'],
  FST_ERR_MAX_PARAM_LENGTH: ['REQUEST_PARAMETER_INVALID', 'A path parameter is too long.'],
};

/** Any error, as the problem the client is sent. */
export function toProblem(error: FastifyError | Error): DomainError {
  if (error instanceof DomainError) return error;
  const fastifyError = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fastifyError.validation) return validationProblem(fastifyError.validationContext ?? 'body', fastifyError.validation);
  const known = fastifyError.code ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known) return new DomainError(known[0], known[1]);
  const failure = databaseFailure(error);
  if (failure) return failure;
  // Any other client error Fastify raised before our code ran (malformed request line, etc.).
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new DomainError('REQUEST_BODY_MALFORMED', 'The request is malformed.');
  }
  return new DomainError('INTERNAL_ERROR', 'An unexpected error occurred.');
}

/**
 * The client closed its connection before the body it declared had arrived: Node fails the request
 * stream with its own error (ECONNRESET "aborted"), which must not read as a server fault or a lost
 * database connection. The answer reaches no one; it is logged as the 400 it is.
 */
function abortedByClient(request: FastifyRequest, error: Error): DomainError | undefined {
  if (request.raw.errored !== error) return undefined;
  return new DomainError('REQUEST_BODY_MALFORMED', 'The connection closed before the request body arrived in full.');
}

/** Sends error as a problem; a server-side one is logged with its cause. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: FastifyError | Error): FastifyReply {
  const aborted = abortedByClient(request, error);
  if (aborted) request.log.info('the client closed the connection before the request body arrived');
  const problem = aborted ?? toProblem(error);
  if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
  return sendProblem(request, reply, problem);
}

/** Errors Fastify raises while routing, before any hook runs (bad percent-encoding, huge params). */
export function sendFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // Raised before routing, so the onSend hooks that set them do not run.
  reply.header('x-request-id', request.id);
  setSecurityHeaders(reply);
  return sendError(request, reply, error);
}

async function problems(app: FastifyInstance): Promise<void> {
  const routeTable = createRouteTable();
  app.addHook('onRoute', function recordRoute(route) {
    if (route.config?.servedByMiddleware) return;
    routeTable.add(route.url ?? route.path, route.method);
  });

  function sendRouteNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const path = request.url.split('?', 1)[0] ?? '/';
    const allowed = routeTable.methodsFor(path);
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      return sendProblem(
        request,
        reply,
        new ProblemError('METHOD_NOT_ALLOWED', `${request.method} is not supported on ${path}; use ${allowed.join(', ')}.`, {
          headers: { allow: allowed.join(', ') },
        }),
      );
    }
    return sendProblem(request, reply, new DomainError('ROUTE_NOT_FOUND', `No resource at ${path}.`));
  }

  // Routes served outside Fastify's router (the authorization server, through middie).
  app.decorate('declareRoute', function declareRoute(url: string, methods: readonly string[]) {
    routeTable.add(url, [...methods]);
  });

  app.setErrorHandler(function sendErrorAsProblem(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    // No route matched: that answer (404/405) comes first, whatever is wrong with the body.
    if (request.is404) return sendRouteNotFound(request, reply);
    return sendError(request, reply, error);
  });
  app.setNotFoundHandler(sendRouteNotFound);
}

export const problemsPlugin = fp(problems, { name: 'orderpay-problems', fastify: '5.x' });

declare module 'fastify' {
  interface FastifyInstance {
    /** Declares a route served by middleware, so that another method on its path answers 405 with Allow. */
    declareRoute(url: string, methods: readonly string[]): void;
  }
  interface FastifyContextConfig {
    /**
     * A route that only carries middleware to its paths (the authorization server's): its methods
     * are not the paths' (declareRoute says those), and what the middleware leaves unanswered is
     * the router's 404/405, whatever the body.
     */
    servedByMiddleware?: boolean;
  }
}
