// The idempotency plugin for POST requests (draft-ietf-httpapi-idempotency-key-header, Stripe's
// semantics): claim the key before any work, do the work and store its response in one
// transaction, replay that response to every retry. A route opts in with
// `config: { idempotency: 'required' | 'optional' }`, the one place that decides: the plugin adds
// the Idempotency-Key header to the route's schema (validated and documented) from it.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { Type, type TSchema } from 'typebox';
import { DomainError } from '../../core/errors.ts';
import type { Queryable } from '../../db/db.ts';
import { PROBLEM_CONTENT_TYPE, problemBody, problemHeaders } from '../problem.ts';
import { toProblem } from '../problems.ts';
import { CACHE_NONE } from '../representation.ts';
import { isMissingHeader, type AjvError } from '../validation-problems.ts';
import { representAtVersion, sentBody } from '../version-routes.ts';
import { jsonContentType } from '../versioning.ts';
import type { Failpoint } from './failpoints.ts';
import {
  decideOnTakenKey,
  fingerprintRequest,
  keyInUse,
  parseIdempotencyKey,
  type RequestBinding,
  type StoredResponse,
} from './idempotency.rules.ts';
import {
  completeKeyClaim,
  findKeyRecord,
  holdKeyClaim,
  insertKeyClaim,
  reclaimExpiredKey,
  releaseKeyClaim,
  takeOverLapsedClaim,
  type KeyClaim,
  type KeyOwner,
  type KeyTimes,
} from './idempotency.store.ts';

export type IdempotencyMode = 'required' | 'optional';

/** What an operation answers; serialized once, by the route's response schema, and stored. */
export interface Outcome {
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

// Refusals by the rules about the data a request names (404, 409, 422) are the operation's result
// and are kept. Malformed requests (400) and permissions (401, 403) never began the operation, and
// these conflicts depend on timing: a retry must be able to do better.
const STORED_STATUSES = new Set([404, 409, 422]);
const NOT_STORED: ReadonlySet<string> = new Set(['RESOURCE_CONFLICT', 'IDEMPOTENCY_KEY_IN_USE']);

const KEY_HEADER = 'idempotency-key';
const REPLAYED_HEADER = 'idempotent-replayed';

const IdempotencyKey = Type.String({
  description:
    'Unique per logical operation, the same on every retry of it: 1–255 visible ASCII characters, bare or as a quoted string. Keys are scoped to the caller and kept 24 hours. See docs/payments.md.',
  examples: ['5f0c7a8e-3b7e-4f57-9a61-1d2f0c6e8b11'],
});

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
    properties: { ...headers.properties, [KEY_HEADER]: IdempotencyKey },
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

/**
 * Answers the request through the idempotency layer: with a key, claimed, performed once and
 * replayed; without one (where the route makes it optional), performed in a transaction of its own.
 * Only for routes with `config.idempotency`, whose schema validation has checked the header.
 */
export async function respondIdempotently(request: FastifyRequest, reply: FastifyReply, work: IdempotentWork): Promise<FastifyReply> {
  const header = request.headers[KEY_HEADER];
  // Schema validation has refused a missing key where the route requires one.
  if (header === undefined) {
    const outcome = await request.server.db.transaction((tx) => work(tx, `request-${request.id}`));
    outcome.afterCommit?.();
    return sendResponse(reply, serializeOutcome(request, reply, outcome), false);
  }
  const key = parseIdempotencyKey(Array.isArray(header) ? header.join(', ') : header);
  const owner = keyOwner(request);
  const binding: RequestBinding = {
    method: request.method,
    path: request.url.split('?', 1)[0]!,
    fingerprint: fingerprintRequest(request.apiVersion, sentBody(request)),
  };
  const claimed = await claimKey(request, owner, key, binding);
  if (claimed.kind === 'replay') return sendResponse(reply, claimed.response, true);
  return performClaimed(request, reply, claimed.claim, work);
}

function keyOwner(request: FastifyRequest): KeyOwner {
  const principal = request.principal;
  if (!principal) throw new Error('idempotent routes require an authenticated caller');
  return { clientId: principal.clientId, subject: principal.subject };
}

const keyTimes = (request: FastifyRequest): KeyTimes => request.server.config.idempotency;

/**
 * Step 1: claim the key, or find what became of it. A key can be released or reclaimed between
 * our insert and our read, so the sequence is retried a few times before answering 409.
 */
async function claimKey(
  request: FastifyRequest,
  owner: KeyOwner,
  key: string,
  binding: RequestBinding,
): Promise<{ kind: 'claimed'; claim: KeyClaim } | { kind: 'replay'; response: StoredResponse }> {
  const db = request.server.db;
  const times = keyTimes(request);
  for (let attempt = 0; attempt < 3; attempt++) {
    const lockToken = randomUUID();
    const inserted = await insertKeyClaim(db, owner, key, binding, lockToken, times);
    if (inserted) return { kind: 'claimed', claim: inserted };
    const record = await findKeyRecord(db, owner, key);
    if (!record) continue;
    if (record.expired) {
      const reclaimed = await reclaimExpiredKey(db, record.id, binding, lockToken, times);
      if (reclaimed) return { kind: 'claimed', claim: reclaimed };
      continue;
    }
    const decision = decideOnTakenKey(record, binding);
    if (decision.kind === 'replay') return decision;
    if (decision.kind === 'refuse') throw decision.problem;
    const taken = await takeOverLapsedClaim(db, record.id, lockToken, times);
    if (taken) {
      request.log.warn({ idempotencyKeyId: record.id }, 'took over an idempotency key whose lock lapsed');
      return { kind: 'claimed', claim: taken };
    }
  }
  throw keyInUse();
}

/** Step 2: the work and its stored response in one transaction; on failure, keep or free the key. */
async function performClaimed(request: FastifyRequest, reply: FastifyReply, claim: KeyClaim, work: IdempotentWork): Promise<FastifyReply> {
  const { db, failpoint } = request.server;
  let response: StoredResponse;
  let afterCommit: Outcome['afterCommit'];
  try {
    response = await db.transaction(async (tx) => {
      // Ours until commit: a retry that finds our lock lapsed skips the locked row (409), never takes it.
      if (!(await holdKeyClaim(tx, claim))) throw keyInUse();
      const outcome = await work(tx, `op_${claim.operationId}`);
      // The last attempt's: a transaction retried after a conflict runs the work again.
      afterCommit = outcome.afterCommit;
      const stored = serializeOutcome(request, reply, outcome);
      if (!(await completeKeyClaim(tx, claim, stored))) throw keyInUse();
      await failpoint?.('idempotency.before-commit');
      return stored;
    });
  } catch (error) {
    return settleFailure(request, reply, claim, error as Error);
  }
  afterCommit?.();
  await failpoint?.('idempotency.after-commit');
  return sendResponse(reply, response, false);
}

/**
 * A refusal by the rules (404, 409, 422) is the operation's result: stored and replayed like a
 * success. Any other failure rolled everything back: the claim is released (its lock lapses now),
 * so a retry of the request takes it over and performs the work. If even the release fails, the
 * lock lapses in its own time.
 */
async function settleFailure(request: FastifyRequest, reply: FastifyReply, claim: KeyClaim, error: Error): Promise<FastifyReply> {
  const problem = toProblem(error);
  const db = request.server.db;
  if (STORED_STATUSES.has(problem.status) && !NOT_STORED.has(problem.code)) {
    const stored = serializeProblem(request, problem);
    if (await completeKeyClaim(db, claim, stored)) return sendResponse(reply, stored, false);
  } else {
    // A no-op when the claim is no longer ours (IDEMPOTENCY_KEY_IN_USE from holdKeyClaim).
    await releaseKeyClaim(db, claim).catch((releaseError: unknown) =>
      request.log.error({ err: releaseError }, 'could not release an idempotency key'),
    );
  }
  throw error;
}

/** The exact bytes and headers of the response, as sent now and replayed later. */
function serializeOutcome(request: FastifyRequest, reply: FastifyReply, outcome: Outcome): StoredResponse {
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
