// The idempotency plugin for POST requests (draft-ietf-httpapi-idempotency-key-header, Stripe's
// semantics): claim the key before any work, do the work and store its response in one
// transaction, replay that response to every retry. A route opts in with
// `config: { idempotency: 'required' | 'optional' }`, the one place that decides: the plugin adds
// the Idempotency-Key header to the route's schema (validated and documented) from it.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { Type, type TSchema } from 'typebox';
import { DomainError } from '../core/errors.ts';
import type { Queryable } from '../db/db.ts';
import { PROBLEM_CONTENT_TYPE, problemBody, problemHeaders } from './problem.ts';
import { toProblem } from './problems.ts';
import { CACHE_NONE } from './representation.ts';
import { routeChecked } from './schemas.ts';
import { isMissingHeader, type AjvError } from './validation-problems.ts';
import { representAtVersion, sentBody } from './version-routes.ts';
import { jsonContentType } from './versioning.ts';
import type { Failpoint } from '../core/failpoints.ts';
import { fingerprintRequest, IDEMPOTENCY_KEY_PATTERN, parseIdempotencyKey, type StoredResponse } from '../idempotency/idempotency.rules.ts';
import { runKeyedWork, type Completion, type KeyedRequest, type KeyedWork, type RecoveryPoint } from '../idempotency/keyed-work.ts';

export type IdempotencyMode = 'required' | 'optional';

/** What an operation answers; serialized once, by the route's response schema, and stored. */
export type Outcome = ResourceOutcome | { problem: DomainError; afterCommit?: () => void };

interface ResourceOutcome {
  status: number;
  body: unknown;
  headers?: { location?: string; etag?: string };
  /**
   * Runs once the transaction that did the work has committed, and never for a replay: what is
   * counted (src/http/business-metrics.ts) is what happened.
   */
  afterCommit?: () => void;
}

/**
 * The work of one request, in the transaction that also stores its response. `reference` is the
 * same for every retry of the operation (through releases, takeovers and crashes) and unique
 * otherwise: a processor's own idempotency key.
 */
export type IdempotentWork = (tx: Queryable, reference: string) => Promise<Outcome>;

const STORED_STATUSES = new Set([404, 409, 422]);
const NOT_STORED: ReadonlySet<string> = new Set(['RESOURCE_CONFLICT', 'IDEMPOTENCY_KEY_IN_USE', 'PAYMENT_ORDER_PAYMENT_IN_PROGRESS']);

const KEY_HEADER = 'idempotency-key';
const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * An operation's example key in the OpenAPI documents: a UUID of its own (a tool that fills keys
 * from examples must not send one operation's key to another), all starting with this marker, by
 * which /docs knows a key nobody typed and sends a fresh one on every try (src/http/docs-page.ts).
 */
export const EXAMPLE_KEY_PREFIX = 'e0e0e0e0-';

export function exampleIdempotencyKey(method: string, url: string): string {
  const hex = createHash('sha256').update(`${method} ${url}`).digest('hex');
  return `${EXAMPLE_KEY_PREFIX}${hex.slice(0, 4)}-4${hex.slice(5, 8)}-8${hex.slice(9, 12)}-${hex.slice(12, 24)}`;
}

function idempotencyKeySchema(method: string, url: string): TSchema {
  const key = Type.String({
    description:
      'Unique per logical operation, the same on every retry of it: 1–255 visible ASCII characters, bare or as a quoted string. Keys are scoped to the caller and kept 24 hours. See docs/payments.md.',
    examples: [exampleIdempotencyKey(method, url)],
  });
  return routeChecked(key, { pattern: IDEMPOTENCY_KEY_PATTERN });
}

/** 400 for a required Idempotency-Key left out: its own code, so clients learn keys are required. */
function missingIdempotencyKey(): DomainError {
  return new DomainError(
    'IDEMPOTENCY_KEY_MISSING',
    'Send an Idempotency-Key header: a unique value for this operation, repeated on every retry of it.',
    {
      errors: [{ parameter: KEY_HEADER, detail: `header ${KEY_HEADER} is required` }],
    },
  );
}

function modeOf(config: unknown): IdempotencyMode | undefined {
  const mode = (config as { idempotency?: unknown } | undefined)?.idempotency;
  if (mode === undefined) return undefined;
  if (mode !== 'required' && mode !== 'optional')
    throw new Error(`config.idempotency must be 'required' or 'optional', got ${String(mode)}`);
  return mode;
}

/** onRoute: the route's header schema gains Idempotency-Key, required or optional as configured. */
function declareKeyHeader(route: RouteOptions): void {
  const mode = modeOf(route.config);
  if (!mode) return;
  const schema = route.schema ?? {};
  route.schema = schema;
  const headers = (schema.headers ?? Type.Object({})) as TSchema & { properties?: Record<string, TSchema>; required?: string[] };
  schema.headers = {
    ...headers,
    type: 'object',
    properties: { ...headers.properties, [KEY_HEADER]: idempotencyKeySchema(String(route.method), route.url) },
    ...(mode === 'required' ? { required: [...(headers.required ?? []), KEY_HEADER] } : {}),
  };
  const formatValidationError = route.schemaErrorFormatter;
  route.schemaErrorFormatter = function formatMissingIdempotencyKey(errors, dataVar) {
    if (dataVar === 'headers' && isMissingHeader(errors as AjvError[], KEY_HEADER)) return missingIdempotencyKey();
    return formatValidationError ? formatValidationError(errors, dataVar) : new Error(`${dataVar} failed validation`);
  };
}

async function idempotency(app: FastifyInstance, options: { failpoint?: Failpoint }): Promise<void> {
  app.decorate('failpoint', options.failpoint);
  app.addHook('onRoute', declareKeyHeader);
}

export const idempotencyPlugin = fp(idempotency, {
  name: 'orderpay-idempotency',
  fastify: '5.x',
  dependencies: ['orderpay-problems', 'orderpay-versioning', 'orderpay-authenticate'],
});

/** Phase work in the edge's terms (src/idempotency/keyed-work.ts): outcomes, rendered and stored here. */
export interface PhasedWork {
  begin(tx: Queryable, reference: string): Promise<Outcome | RecoveryPoint>;
  resume(recoveryPoint: number, reference: string, complete: (tx: Queryable, outcome: Outcome) => Promise<void>): Promise<Outcome>;
}

/**
 * Answers the request through the idempotency layer: with a key, claimed, performed once and
 * replayed; without one (where the route makes it optional), performed in a transaction of its own.
 * Only for routes with `config.idempotency`, whose schema validation has checked the header.
 */
export async function respondIdempotently(
  request: FastifyRequest,
  reply: FastifyReply,
  work: IdempotentWork | PhasedWork,
): Promise<FastifyReply> {
  const header = request.headers[KEY_HEADER];
  const phased = typeof work === 'function' ? { begin: work } : work;
  // Schema validation has refused a missing key where the route requires one (every phased route).
  if (header === undefined) {
    const outcome = await request.server.db.transaction(async (tx) => {
      const begun = await phased.begin(tx, `request-${request.id}`);
      if ('recoveryPoint' in begun) throw new Error('work in phases needs an Idempotency-Key');
      return begun;
    });
    outcome.afterCommit?.();
    return sendResponse(reply, serializeOutcome(request, reply, outcome), false);
  }
  const render = (outcome: Outcome): Completion => ({
    response: serializeOutcome(request, reply, outcome),
    afterCommit: outcome.afterCommit,
  });
  const keyed: KeyedWork = {
    begin: async (tx, reference) => {
      const begun = await phased.begin(tx, reference);
      return 'recoveryPoint' in begun ? begun : render(begun);
    },
    resume:
      'resume' in phased
        ? async (recoveryPoint, reference, complete) =>
            render(await phased.resume(recoveryPoint, reference, (tx, outcome) => complete(tx, render(outcome))))
        : undefined,
  };
  const result = await runKeyedWork(request.server.db, keyedRequest(request, header), keyed, {
    failpoint: request.server.failpoint,
    storedRefusal: (error) => storedRefusal(request, error),
    onTakeover: (keyId) => request.log.warn({ idempotencyKeyId: keyId }, 'took over an idempotency key whose lock lapsed'),
    onReleaseFailure: (error) => request.log.error({ err: error }, 'could not release an idempotency key'),
  });
  if (result.replayed) return sendResponse(reply, result.response, true);
  result.afterCommit?.();
  await request.server.failpoint?.('idempotency.after-commit');
  return sendResponse(reply, result.response, false);
}

/** The key, its owner (the OAuth client and the token's subject) and what it is bound to. */
function keyedRequest(request: FastifyRequest, header: string | string[]): KeyedRequest {
  const principal = request.principal;
  if (!principal) throw new Error('idempotent routes require an authenticated caller');
  return {
    owner: { clientId: principal.clientId, subject: principal.subject },
    key: parseIdempotencyKey(Array.isArray(header) ? header.join(', ') : header),
    binding: {
      method: request.method,
      path: request.url.split('?', 1)[0]!,
      fingerprint: fingerprintRequest(request.apiVersion, sentBody(request)),
    },
    times: request.server.config.idempotency,
  };
}

/**
 * Refusals by the rules about the data a request names (404, 409, 422) are the operation's result
 * and are kept. Malformed requests (400) and permissions (401, 403) never began the operation, and
 * these conflicts depend on timing: a retry must be able to do better.
 */
function storedRefusal(request: FastifyRequest, error: Error): StoredResponse | undefined {
  const problem = toProblem(error);
  if (!STORED_STATUSES.has(problem.status) || NOT_STORED.has(problem.code)) return undefined;
  return serializeProblem(request, problem);
}

/** The exact bytes and headers of the response, as sent now and replayed later. */
function serializeOutcome(request: FastifyRequest, reply: FastifyReply, outcome: Outcome): StoredResponse {
  if ('problem' in outcome) return serializeProblem(request, outcome.problem);
  const contentType = jsonContentType(request);
  const headers: Record<string, string> = {
    'content-type': contentType.includes('charset') ? contentType : `${contentType}; charset=utf-8`,
    'cache-control': CACHE_NONE,
  };
  if (outcome.headers?.location) headers.location = outcome.headers.location;
  if (outcome.headers?.etag) headers.etag = outcome.headers.etag;
  return {
    status: outcome.status,
    headers,
    body: reply.serializeInput(
      representAtVersion(request, outcome.status, outcome.body) as Record<string, unknown>,
      String(outcome.status),
    ) as string,
  };
}

function serializeProblem(request: FastifyRequest, problem: DomainError): StoredResponse {
  const headers = { ...problemHeaders(problem), 'content-type': PROBLEM_CONTENT_TYPE, 'cache-control': CACHE_NONE };
  return { status: problem.status, headers, body: JSON.stringify(problemBody(request, problem)) };
}

function sendResponse(reply: FastifyReply, response: StoredResponse, replayed: boolean): FastifyReply {
  reply.code(response.status).headers(response.headers);
  if (replayed) reply.header(REPLAYED_HEADER, 'true');
  return reply.send(response.body);
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Test-only fault injection at named points of an idempotent write (./failpoints.ts). */
    failpoint: Failpoint | undefined;
  }
  interface FastifyContextConfig {
    /** Whether the route takes an Idempotency-Key: the plugin does the rest. */
    idempotency?: IdempotencyMode;
  }
}
