// Maps every error to a problem body: our ProblemErrors, schema validation, Fastify's own request
// errors and database failures (through one SQLSTATE table). 5xx bodies never carry internals.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseError } from '../db/db.ts';
import type { ErrorCode } from './errors.ts';
import { ProblemError, sendProblem, type FieldError } from './problem.ts';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** The offending value (validators compiled with verbose: true). */
  data?: unknown;
}

function pointerOf(error: AjvError): string {
  if (error.keyword === 'additionalProperties') return `${error.instancePath}/${String(error.params.additionalProperty)}`;
  if (error.keyword === 'required') return `${error.instancePath}/${String(error.params.missingProperty)}`;
  return error.instancePath || '';
}

function describe(error: AjvError): string {
  if (error.keyword === 'additionalProperties') return 'is not a known field';
  if (error.keyword === 'required') return 'is required';
  return error.message ?? 'is invalid';
}

/** Schema validation errors → 400 problem naming each field or parameter. */
export function validationProblem(context: string, errors: AjvError[]): ProblemError {
  if (context === 'body') {
    const fieldErrors: FieldError[] = errors.map((e) => ({ pointer: pointerOf(e), detail: `${pointerOf(e) || 'body'} ${describe(e)}` }));
    return new ProblemError('REQUEST_BODY_INVALID', fieldErrors.map((e) => e.detail).join('; '), { errors: fieldErrors });
  }
  if (context === 'headers') {
    if (errors.some((e) => e.keyword === 'required' && e.params.missingProperty === 'idempotency-key')) {
      return missingIdempotencyKey();
    }
    const fieldErrors = errors.map((e) => ({ parameter: pointerOf(e).slice(1), detail: `header ${pointerOf(e).slice(1)} ${describe(e)}` }));
    return new ProblemError('REQUEST_HEADER_INVALID', fieldErrors.map((e) => e.detail).join('; '), { errors: fieldErrors });
  }
  const unknown = errors.filter((e) => e.keyword === 'additionalProperties');
  if (context === 'querystring' && unknown.length > 0) {
    const fieldErrors = unknown.map((e) => {
      const name = String(e.params.additionalProperty);
      return { parameter: name, detail: `query parameter "${name}" is not supported by this collection` };
    });
    return new ProblemError('QUERY_UNKNOWN_PARAMETER', fieldErrors.map((e) => e.detail).join('; '), { errors: fieldErrors });
  }
  // A repeated or malformed parameter fails its type; its other errors would only repeat that.
  const repeated = new Set(errors.filter((e) => e.keyword === 'type').map((e) => pointerOf(e)));
  const relevant = errors.filter((e) => e.keyword === 'type' || !repeated.has(pointerOf(e)));
  const fieldErrors = relevant.map((e) => {
    const name = pointerOf(e).slice(1).split('/')[0] ?? '';
    const where = context === 'params' ? 'path parameter' : 'query parameter';
    const detail = e.keyword === 'type' && Array.isArray(e.data)
      ? `${where} "${name}" may appear only once`
      : `${where} "${name}" ${describe(e)}`;
    return { parameter: name, detail };
  });
  return new ProblemError('REQUEST_PARAMETER_INVALID', fieldErrors.map((e) => e.detail).join('; '), { errors: fieldErrors });
}

/** 400 for a required Idempotency-Key left out: its own code, so clients learn keys are required. */
export function missingIdempotencyKey(): ProblemError {
  return new ProblemError('IDEMPOTENCY_KEY_MISSING', 'Send an Idempotency-Key header: a unique value for this operation, repeated on every retry of it.', {
    errors: [{ parameter: 'idempotency-key', detail: 'header idempotency-key is required' }],
  });
}

// Fastify's own request errors (content-type parser, body limit) by code.
const FASTIFY_ERRORS: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ['REQUEST_BODY_TOO_LARGE', 'The request body exceeds the 64 KiB limit.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['REQUEST_UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['REQUEST_BODY_MALFORMED', 'Content-Length does not match the body.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['REQUEST_BODY_MALFORMED', 'The JSON body is empty.'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['REQUEST_BODY_MALFORMED', 'The body is not valid JSON.'],
  FST_ERR_CTP_INVALID_TYPE: ['REQUEST_UNSUPPORTED_MEDIA_TYPE', 'The Content-Type header is malformed.'],
};

// SQLSTATE → problem (PostgreSQL Appendix A). Classes not listed are internal errors.
function databaseProblem(code: string): ProblemError | undefined {
  if (code === '23505') return new ProblemError('RESOURCE_CONFLICT', 'A resource with this unique value already exists.');
  if (code === '40001' || code === '40P01') return new ProblemError('RESOURCE_CONFLICT', 'A concurrent change conflicted with this one; retry the request.');
  // NUL and invalid byte sequences can only arrive inside JSON strings: schemas check the rest.
  if (code === '22021' || code === '22P05') return new ProblemError('REQUEST_BODY_INVALID', 'A text value contains a character that cannot be stored (such as U+0000).');
  if (code.startsWith('22')) return new ProblemError('REQUEST_PARAMETER_INVALID', 'A value is out of the range the server can store.');
  if (code === '57014' || code === '55P03' || code === '25P03' || code.startsWith('08') || code.startsWith('53') || code === '57P01' || code === '57P03' || code === '55000') {
    return new ProblemError('SERVICE_UNAVAILABLE', 'The database is busy or unreachable; retry shortly.', { headers: { 'retry-after': '1' } });
  }
  return undefined;
}

const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

export function toProblem(error: FastifyError | Error): { problem: ProblemError; internal: boolean } {
  if (error instanceof ProblemError) return { problem: error, internal: false };
  const fastifyError = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fastifyError.validation) {
    return { problem: validationProblem(fastifyError.validationContext ?? 'body', fastifyError.validation), internal: false };
  }
  const known = fastifyError.code ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known) return { problem: new ProblemError(known[0], known[1]), internal: false };
  if (isDatabaseError(error)) {
    const problem = databaseProblem(error.code);
    if (problem) return { problem, internal: problem.status >= 500 };
  }
  const nodeCode = (error as { code?: string }).code;
  if ((nodeCode && UNAVAILABLE_NODE_CODES.has(nodeCode)) || /timeout exceeded when trying to connect|Connection terminated|connection error and is not queryable|closed and is not queryable/i.test(error.message)) {
    return { problem: new ProblemError('SERVICE_UNAVAILABLE', 'The database is unreachable; retry shortly.', { headers: { 'retry-after': '1' } }), internal: true };
  }
  // Any other client error Fastify raised before our code ran (malformed request line, etc.).
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return { problem: new ProblemError('REQUEST_BODY_MALFORMED', 'The request is malformed.'), internal: false };
  }
  return { problem: new ProblemError('INTERNAL_ERROR', 'An unexpected error occurred.'), internal: true };
}

export function registerErrorHandling(app: FastifyInstance, routeMethods: (path: string) => string[]): void {
  app.setErrorHandler(function sendErrorAsProblem(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    // No route matched: that answer (404/405) comes first, whatever is wrong with the body.
    if (request.is404) return sendRouteNotFound(request, reply);
    const { problem, internal } = toProblem(error);
    // The cause (SQL, parameters, stack) goes to the log only.
    if (internal || problem.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(request, reply, problem);
  });

  function sendRouteNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const path = request.url.split('?', 1)[0] ?? '/';
    const allowed = routeMethods(path);
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      return sendProblem(request, reply, new ProblemError('METHOD_NOT_ALLOWED', `${request.method} is not supported on ${path}; use ${allowed.join(', ')}.`, {
        headers: { allow: allowed.join(', ') },
      }));
    }
    return sendProblem(request, reply, new ProblemError('ROUTE_NOT_FOUND', `No resource at ${path}.`));
  }
  app.setNotFoundHandler(sendRouteNotFound);
}

/** Collects route patterns as they are registered, to answer 405 with Allow for known paths. */
export function createRouteTable() {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  const byUrl = new Map<string, Set<string>>();
  return {
    add(url: string, methods: string | string[]) {
      let set = byUrl.get(url);
      if (!set) {
        set = new Set();
        byUrl.set(url, set);
        const source = url.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
        routes.push({ pattern: new RegExp(`^${source}$`), methods: set });
      }
      for (const m of Array.isArray(methods) ? methods : [methods]) set.add(m);
    },
    methodsFor(path: string): string[] {
      const methods = new Set<string>();
      for (const route of routes) if (route.pattern.test(path)) for (const m of route.methods) methods.add(m);
      return [...methods].sort();
    },
  };
}

/** Errors Fastify raises while routing, before any hook runs (bad percent-encoding, huge params). */
export function sendFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const problem = error.code === 'FST_ERR_BAD_URL'
    ? new ProblemError('REQUEST_PARAMETER_INVALID', 'The request path is not valid percent-encoding.')
    : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ProblemError('REQUEST_PARAMETER_INVALID', 'A path parameter is too long.')
      : toProblem(error).problem;
  // Raised before routing, so the onSend hook that sets it does not run.
  reply.header('x-request-id', request.id);
  return sendProblem(request, reply, problem);
}
