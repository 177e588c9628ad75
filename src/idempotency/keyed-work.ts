// One operation under an idempotency key, in atomic phases (Brandur Leach, "Implementing Stripe-like
// Idempotency Keys in Postgres"): the key is claimed, and committed, before any work; phase 1 does
// the work in a transaction that holds the claim and ends it with either the response or a recovery
// point (what it recorded); from a recovery point the rest runs with no transaction open while it
// waits on the outside world, and commits its outcome with the response. A retry replays the stored
// response, or resumes from the recovery point. Any entry uses it: a route, a processor's event.
import { randomUUID } from 'node:crypto';
import type { Failpoint } from '../core/failpoints.ts';
import type { Queryable, Db } from '../db/db.ts';
import { decideOnTakenKey, keyInUse, type RequestBinding, type StoredResponse } from './idempotency.rules.ts';
import {
  completeKeyClaim,
  findKeyRecord,
  holdKeyClaim,
  insertKeyClaim,
  reclaimExpiredKey,
  recordRecoveryPoint,
  releaseKeyClaim,
  takeOverLapsedClaim,
  type KeyClaim,
  type KeyOwner,
  type KeyTimes,
} from './idempotency.store.ts';

/** A request under a key: whose key, which, what it is bound to, and how long it holds and is kept. */
export interface KeyedRequest {
  owner: KeyOwner;
  key: string;
  binding: RequestBinding;
  times: KeyTimes;
}

/** The end of an operation: the response stored and sent, and what runs once it has committed. */
export interface Completion {
  response: StoredResponse;
  /** Runs once the transaction that stored the response has committed, and never for a replay. */
  afterCommit?: () => void;
}

/** What phase 1 recorded, e.g. the payment it created: a retry resumes from it. */
export interface RecoveryPoint {
  recoveryPoint: number;
}

/** Stores the completion in tx, the transaction that commits the operation's outcome. */
export type CompleteInTransaction = (tx: Queryable, completion: Completion) => Promise<void>;

export interface KeyedWork {
  /**
   * Phase 1, in the transaction that holds the claim: the whole work of a one-phase operation (its
   * completion), or the intent recorded (a recovery point). `reference` is the same for every retry
   * of the operation and unique otherwise: the outside world's idempotency key.
   */
  begin(tx: Queryable, reference: string): Promise<Completion | RecoveryPoint>;
  /**
   * The phases after a recovery point: the call to the outside world with no transaction open, then
   * the outcome committed together with the completion, through `complete` (the operation opens that
   * transaction). Throws when the outcome is not known yet: the claim is released, the recovery
   * point kept, and a retry resumes here.
   */
  resume?(recoveryPoint: number, reference: string, complete: CompleteInTransaction): Promise<Completion>;
}

export interface KeyedWorkOptions {
  failpoint?: Failpoint;
  /**
   * The response of a refusal that is the operation's result (its rules refused the data it names):
   * stored and replayed like a success. Undefined for a failure a retry may do better at.
   */
  storedRefusal(error: Error): StoredResponse | undefined;
  /** A claim whose holder let its lock lapse was taken over (a process that died). */
  onTakeover?(keyId: number): void;
  /** The claim could not be released after a failure: its lock lapses in its own time. */
  onReleaseFailure?(error: unknown): void;
}

export type KeyedResult = { replayed: true; response: StoredResponse } | ({ replayed: false } & Completion);

/** Runs work once under the key, or replays what the key's first request stored. */
export async function runKeyedWork(db: Db, request: KeyedRequest, work: KeyedWork, options: KeyedWorkOptions): Promise<KeyedResult> {
  const claimed = await claimKey(db, request, options);
  if (claimed.kind === 'replay') return { replayed: true, response: claimed.response };
  const { claim } = claimed;
  try {
    const completion = await performPhases(db, claim, work, options);
    return { replayed: false, ...completion };
  } catch (error) {
    return settleFailure(db, claim, error as Error, options);
  }
}

/**
 * Step 1: claim the key, or find what became of it. A key can be released or reclaimed between
 * our insert and our read, so the sequence is retried a few times before answering 409.
 */
async function claimKey(
  db: Db,
  { owner, key, binding, times }: KeyedRequest,
  options: KeyedWorkOptions,
): Promise<{ kind: 'claimed'; claim: KeyClaim } | { kind: 'replay'; response: StoredResponse }> {
  // The repeat of a finished operation (a client's retry) is answered by this one read.
  const finished = await findKeyRecord(db, owner, key);
  if (finished?.state === 'completed' && !finished.expired) {
    const decision = decideOnTakenKey(finished, binding);
    if (decision.kind === 'refuse') throw decision.problem;
    if (decision.kind === 'replay') return decision;
  }
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
      options.onTakeover?.(record.id);
      return { kind: 'claimed', claim: taken };
    }
  }
  throw keyInUse();
}

/** Step 2: phase 1 unless a recovery point says it is done, then the phases after it. */
async function performPhases(db: Db, claim: KeyClaim, work: KeyedWork, options: KeyedWorkOptions): Promise<Completion> {
  const reference = `op_${claim.operationId}`;
  let recoveryPoint = claim.recoveryPoint;
  if (recoveryPoint === null) {
    const begun = await db.transaction(async (tx) => {
      // Ours until commit: a retry that finds our lock lapsed skips the locked row (409), never takes it.
      if (!(await holdKeyClaim(tx, claim))) throw keyInUse();
      const result = await work.begin(tx, reference);
      if ('response' in result) await storeCompletion(tx, claim, result, options);
      else if (!(await recordRecoveryPoint(tx, claim, result.recoveryPoint))) throw keyInUse();
      return result;
    });
    if ('response' in begun) return begun;
    recoveryPoint = begun.recoveryPoint;
    await options.failpoint?.('idempotency.after-recovery-point');
  }
  if (!work.resume) throw new Error('a recovery point was recorded for work that cannot resume');
  let completed = false;
  const complete = completeUnderClaim(claim, options);
  const completion = await work.resume(recoveryPoint, reference, async (tx, done) => {
    await complete(tx, done);
    completed = true;
  });
  if (!completed) throw new Error('resume returned a completion it did not store');
  return completion;
}

/** Stores the response in tx, which holds the claim; the failpoint sees the work done, not yet committed. */
async function storeCompletion(tx: Queryable, claim: KeyClaim, completion: Completion, options: KeyedWorkOptions): Promise<void> {
  if (!(await completeKeyClaim(tx, claim, completion.response))) throw keyInUse();
  await options.failpoint?.('idempotency.before-commit');
}

/**
 * For the phases after a recovery point: storing the response is the claim's last statement, which
 * finds the claim still ours (or throws) and locks it until the outcome commits.
 */
function completeUnderClaim(claim: KeyClaim, options: KeyedWorkOptions): CompleteInTransaction {
  return (tx, completion) => storeCompletion(tx, claim, completion, options);
}

/**
 * A refusal by the rules is the operation's result: stored and replayed like a success. Any other
 * failure rolled its phase back: the claim is released (its lock lapses now) with its recovery
 * point, so a retry takes it over and goes on from there. If even the release fails, the lock
 * lapses in its own time.
 */
async function settleFailure(db: Db, claim: KeyClaim, error: Error, options: KeyedWorkOptions): Promise<KeyedResult> {
  const stored = options.storedRefusal(error);
  if (stored) {
    if (await completeKeyClaim(db, claim, stored)) return { replayed: false, response: stored };
  } else {
    // A no-op when the claim is no longer ours (IDEMPOTENCY_KEY_IN_USE from holdKeyClaim).
    await releaseKeyClaim(db, claim).catch((releaseError: unknown) => options.onReleaseFailure?.(releaseError));
  }
  throw error;
}
