// The idempotency layer for POST requests (draft-ietf-httpapi-idempotency-key-header, Stripe's
// semantics): claim the key before any work, do the work and store its response in one
// transaction, replay that response to every retry. Generic: any route can respond through it.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Queryable } from '../db/db.ts';
import { missingIdempotencyKey, toProblem } from '../http/error-handler.ts';
import { PROBLEM_CONTENT_TYPE, problemBody, ProblemError } from '../http/problem.ts';
import { CACHE_NONE } from '../http/representation.ts';
import { jsonContentType } from '../http/versioning.ts';
import { decideOnTakenKey, fingerprintRequest, keyInUse, parseIdempotencyKey, type RequestBinding, type StoredResponse } from './idempotency.rules.ts';
import {
  completeKeyClaim, findKeyRecord, holdKeyClaim, insertKeyClaim, purgeExpiredKeys, reclaimExpiredKey, releaseKeyClaim,
  takeOverLapsedClaim, type KeyClaim, type KeyOwner, type KeyTimes,
} from './idempotency.store.ts';

/** What an operation answers; serialized once, by the route's response schema, and stored. */
export interface Outcome {
  status: number;
  body: unknown;
  headers?: { location?: string; etag?: string };
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

const REPLAYED_HEADER = 'idempotent-replayed';

export async function respondIdempotently(
  request: FastifyRequest,
  reply: FastifyReply,
  options: { required: boolean },
  work: IdempotentWork,
): Promise<FastifyReply> {
  const header = request.headers['idempotency-key'];
  if (header === undefined) {
    if (options.required) throw missingIdempotencyKey();
    const outcome = await request.server.db.transaction((tx) => work(tx, `request-${request.id}`));
    return sendResponse(reply, serializeOutcome(request, reply, outcome), false);
  }
  const key = parseIdempotencyKey(Array.isArray(header) ? header.join(', ') : header);
  const owner = keyOwner(request);
  const binding: RequestBinding = {
    method: request.method,
    path: request.url.split('?', 1)[0]!,
    fingerprint: fingerprintRequest(request.apiVersion, request.body),
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
  try {
    response = await db.transaction(async (tx) => {
      // Ours until commit: a retry that finds our lock lapsed skips the locked row (409), never takes it.
      if (!(await holdKeyClaim(tx, claim))) throw keyInUse();
      const stored = serializeOutcome(request, reply, await work(tx, `op_${claim.operationId}`));
      if (!(await completeKeyClaim(tx, claim, stored))) throw keyInUse();
      await failpoint?.('idempotency.before-commit');
      return stored;
    });
  } catch (error) {
    return settleFailure(request, reply, claim, error as Error);
  }
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
  const { problem, internal } = toProblem(error);
  const db = request.server.db;
  if (!internal && STORED_STATUSES.has(problem.status) && !NOT_STORED.has(problem.code)) {
    const stored = serializeProblem(request, problem);
    if (await completeKeyClaim(db, claim, stored)) return sendResponse(reply, stored, false);
  } else {
    // A no-op when the claim is no longer ours (IDEMPOTENCY_KEY_IN_USE from holdKeyClaim).
    await releaseKeyClaim(db, claim).catch((releaseError: unknown) => request.log.error({ err: releaseError }, 'could not release an idempotency key'));
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
  return { status: outcome.status, headers, body: reply.serializeInput(outcome.body as Record<string, unknown>, String(outcome.status)) as string };
}

function serializeProblem(request: FastifyRequest, problem: ProblemError): StoredResponse {
  const headers = { ...problem.options.headers, 'content-type': PROBLEM_CONTENT_TYPE, 'cache-control': CACHE_NONE };
  return { status: problem.status, headers, body: JSON.stringify(problemBody(request, problem)) };
}

function sendResponse(reply: FastifyReply, response: StoredResponse, replayed: boolean): FastifyReply {
  reply.code(response.status).headers(response.headers);
  if (replayed) reply.header(REPLAYED_HEADER, 'true');
  return reply.send(response.body);
}

/** Purges keys past their retention every few minutes, in whichever processes run the API. */
export function scheduleIdempotencyKeyPurge(app: FastifyInstance, everyMs = 10 * 60_000): void {
  const timer = setInterval(() => {
    purgeExpiredKeys(app.db).catch((error: unknown) => app.log.warn({ err: error }, 'idempotency key purge failed'));
  }, everyMs);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}
