// RFC 9457 problem details: the one shape of every error body, built from the catalogue.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERRORS, problemSlug, type ErrorCode } from './errors.ts';

export interface FieldError {
  detail: string;
  /** RFC 6901 JSON Pointer into the request body. */
  pointer?: string;
  /** Name of the query, path or header parameter. */
  parameter?: string;
}

export interface ProblemOptions {
  errors?: FieldError[];
  /** Extension members (RFC 9457 §3.2), e.g. currentStatus. */
  extensions?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** Thrown anywhere below the routes; the error handler turns it into a problem response. */
export class ProblemError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly options: ProblemOptions;

  constructor(code: ErrorCode, detail: string, options: ProblemOptions = {}) {
    super(detail);
    this.name = 'ProblemError';
    this.code = code;
    this.detail = detail;
    this.options = options;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }
}

export function problemTypeUri(publicUrl: string, code: ErrorCode): string {
  return `${publicUrl}/problems/${problemSlug(code)}`;
}

/** The RFC 9457 body of a problem, as sent for this request. */
export function problemBody(request: FastifyRequest, problem: ProblemError): Record<string, unknown> {
  const definition = ERRORS[problem.code];
  const body: Record<string, unknown> = {
    type: problemTypeUri(request.server.config.publicUrl, problem.code),
    title: definition.title,
    status: definition.status,
    detail: problem.detail,
    instance: request.url.split('?', 1)[0],
    code: problem.code,
    requestId: request.id,
    ...problem.options.extensions,
  };
  if (problem.options.errors?.length) body.errors = problem.options.errors;
  return body;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: ProblemError): FastifyReply {
  for (const [name, value] of Object.entries(problem.options.headers ?? {})) reply.header(name, value);
  // Error bodies are never cacheable, and must not replay a stale ETag from the success path.
  reply.removeHeader('etag');
  return reply.code(problem.status).header('cache-control', 'no-store').type(PROBLEM_CONTENT_TYPE).send(problemBody(request, problem));
}
