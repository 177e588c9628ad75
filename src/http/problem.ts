// RFC 9457 problem details: the one shape of every error body, rendered from a DomainError and
// the catalogue (src/core/errors.ts). ProblemError adds what only the edge knows: HTTP headers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ERRORS, problemSlug, type DomainErrorOptions, type ErrorCode, type FieldError } from '../core/errors.ts';
import { MAX_FIELD_ERRORS, MAX_PROBLEM_TEXT } from './schemas.ts';
import { requestPointer } from './versions/versions.ts';

export interface ProblemOptions extends DomainErrorOptions {
  headers?: Record<string, string>;
}

/** A refusal made at the edge with headers of its own (WWW-Authenticate, Allow). */
export class ProblemError extends DomainError {
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, detail: string, { headers = {}, ...options }: ProblemOptions = {}) {
    super(code, detail, options);
    this.name = 'ProblemError';
    this.headers = headers;
  }
}

export function problemTypeUri(publicUrl: string, code: ErrorCode): string {
  return `${publicUrl}/problems/${problemSlug(code)}`;
}

/** The RFC 9457 body of a problem, as sent for this request. */
export function problemBody(request: FastifyRequest, problem: DomainError): Record<string, unknown> {
  const definition = ERRORS[problem.code];
  const { detail, errors } = asSent(request, problem);
  const body: Record<string, unknown> = {
    type: problemTypeUri(request.server.config.publicUrl, problem.code),
    title: definition.title,
    status: definition.status,
    detail: bounded(detail),
    instance: bounded(request.url.split('?', 1)[0] ?? '/'),
    code: problem.code,
    requestId: request.id,
  };
  if (errors?.length) body.errors = errors.slice(0, MAX_FIELD_ERRORS).map(boundedFieldError);
  // Extension members (RFC 9457 §3.2) after the schema's own, as the schema lists them.
  return Object.assign(body, problem.options.extensions);
}

/** Text cut to the length the Problem schema promises (a body of unknown fields can name 64 KiB of them). */
function bounded(text: string): string {
  return text.length <= MAX_PROBLEM_TEXT ? text : `${text.slice(0, MAX_PROBLEM_TEXT - 1)}…`;
}

function boundedFieldError({ detail, pointer, parameter }: FieldError): FieldError {
  return {
    detail: bounded(detail),
    // A pointer cut inside an RFC 6901 escape ("~0", "~1") would no longer be a pointer.
    ...(pointer === undefined
      ? {}
      : { pointer: pointer.length <= MAX_PROBLEM_TEXT ? pointer : pointer.slice(0, MAX_PROBLEM_TEXT).replace(/~$/, '') }),
    ...(parameter === undefined ? {} : { parameter: bounded(parameter) }),
  };
}

/**
 * Pointers into the body as the client sent it: a problem raised after an older version's body
 * was upgraded to the latest (src/http/versioning.ts) names fields of the upgraded body. The
 * detail, which may quote a pointer, is rewritten with it.
 */
function asSent(request: FastifyRequest, problem: DomainError): { detail: string; errors: readonly FieldError[] | undefined } {
  const name = request.upgradedBody;
  const errors = problem.options.errors;
  if (!name || !errors?.length) return { detail: problem.detail, errors };
  let detail = problem.detail;
  const mapped = errors.map((e) => {
    if (e.pointer === undefined) return e;
    const pointer = requestPointer(name, e.pointer, request.apiVersion);
    if (pointer !== e.pointer) detail = detail.replaceAll(`${e.pointer} `, `${pointer} `);
    return { ...e, pointer };
  });
  return { detail, errors: mapped };
}

/** Headers of a problem response beside its media type: its own, and Retry-After when transient. */
export function problemHeaders(problem: DomainError): Record<string, string> {
  const retryAfter = (ERRORS[problem.code] as { retryAfterSeconds?: number }).retryAfterSeconds;
  return {
    ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
    ...(problem instanceof ProblemError ? problem.headers : {}),
  };
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: DomainError): FastifyReply {
  reply.headers(problemHeaders(problem));
  // Error bodies are never cacheable, and must not replay a stale ETag from the success path.
  reply.removeHeader('etag');
  return reply.code(problem.status).header('cache-control', 'no-store').type(PROBLEM_CONTENT_TYPE).send(problemBody(request, problem));
}
