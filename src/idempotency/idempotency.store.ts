// Idempotency keys in SQL. Times come from the database's clock, the one every process shares.
import type { Queryable } from '../db/db.ts';
import { outboxCte, takeOutbox } from '../db/outbox.ts';
import type { KeyRecord, RequestBinding, StoredResponse } from './idempotency.rules.ts';

/** Whose key it is: keys are scoped to the OAuth client and the token's subject. */
export interface KeyOwner {
  clientId: string;
  subject: string;
}

/** A claim this request holds on a key; lockToken proves it is still ours. */
export interface KeyClaim {
  id: number;
  lockToken: string;
  /** Stable across every retry of the operation: the processor's idempotency reference. */
  operationId: string;
  /** What the operation's phase 1 recorded (a payment's id), or null before it committed. */
  recoveryPoint: number | null;
}

const CLAIM_COLUMNS = 'id, lock_token AS "lockToken", operation_id::text AS "operationId", recovery_point AS "recoveryPoint"';

export interface KeyTimes {
  lockSeconds: number;
  retentionSeconds: number;
}

/** The atomic claim: the unique constraint lets exactly one concurrent insert through. */
export async function insertKeyClaim(
  db: Queryable,
  owner: KeyOwner,
  key: string,
  binding: RequestBinding,
  lockToken: string,
  times: KeyTimes,
): Promise<KeyClaim | undefined> {
  const { rows } = await db.query<KeyClaim>(
    `INSERT INTO idempotency_keys (client_id, subject, key, method, path, fingerprint, state, operation_id, lock_token, locked_until, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'in_flight', gen_random_uuid(), $7, now() + make_interval(secs => $8), now() + make_interval(secs => $9))
     ON CONFLICT ON CONSTRAINT idempotency_keys_caller_key DO NOTHING RETURNING ${CLAIM_COLUMNS}`,
    [
      owner.clientId,
      owner.subject,
      key,
      binding.method,
      binding.path,
      binding.fingerprint,
      lockToken,
      times.lockSeconds,
      times.retentionSeconds,
    ],
  );
  return rows[0];
}

interface KeyRow {
  id: number;
  method: string;
  path: string;
  fingerprint: string;
  state: 'in_flight' | 'completed';
  expired: boolean;
  lockExpired: boolean;
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
}

export async function findKeyRecord(db: Queryable, owner: KeyOwner, key: string): Promise<KeyRecord | undefined> {
  const { rows } = await db.query<KeyRow>(
    `SELECT id, method, path, fingerprint, state, expires_at <= now() AS expired, locked_until <= now() AS "lockExpired",
            response_status AS "responseStatus", response_headers AS "responseHeaders", response_body AS "responseBody"
       FROM idempotency_keys WHERE client_id = $1 AND subject = $2 AND key = $3`,
    [owner.clientId, owner.subject, key],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { responseStatus, responseHeaders, responseBody, ...rest } = row;
  const response =
    responseStatus === null ? undefined : { status: responseStatus, headers: responseHeaders ?? {}, body: responseBody ?? '' };
  return { ...rest, response };
}

/**
 * Takes over an in-flight claim whose lock lapsed; only one of several contenders succeeds. A
 * holder still working keeps the row locked in its transaction: SKIP LOCKED answers "not now"
 * (409 to the caller) instead of waiting for it.
 */
export async function takeOverLapsedClaim(db: Queryable, id: number, lockToken: string, times: KeyTimes): Promise<KeyClaim | undefined> {
  const { rows } = await db.query<KeyClaim>(
    `UPDATE idempotency_keys SET lock_token = $2, locked_until = now() + make_interval(secs => $3)
      WHERE id = (SELECT id FROM idempotency_keys WHERE id = $1 AND state = 'in_flight' AND locked_until <= now() FOR UPDATE SKIP LOCKED)
      RETURNING ${CLAIM_COLUMNS}`,
    [id, lockToken, times.lockSeconds],
  );
  return rows[0];
}

/**
 * A key past its retention is free: the row is reused as a fresh claim (a new operation) for the
 * new request, unless a request still holds it, however old the key.
 */
export async function reclaimExpiredKey(
  db: Queryable,
  id: number,
  binding: RequestBinding,
  lockToken: string,
  times: KeyTimes,
): Promise<KeyClaim | undefined> {
  const { rows } = await db.query<KeyClaim>(
    `UPDATE idempotency_keys SET method = $2, path = $3, fingerprint = $4, state = 'in_flight', operation_id = gen_random_uuid(),
            lock_token = $5, locked_until = now() + make_interval(secs => $6), recovery_point = NULL, response_status = NULL, response_headers = NULL,
            response_body = NULL, created_at = now(), expires_at = now() + make_interval(secs => $7)
      WHERE id = (SELECT id FROM idempotency_keys WHERE id = $1 AND expires_at <= now() AND (state = 'completed' OR locked_until <= now())
                  FOR UPDATE SKIP LOCKED)
      RETURNING ${CLAIM_COLUMNS}`,
    [id, binding.method, binding.path, binding.fingerprint, lockToken, times.lockSeconds, times.retentionSeconds],
  );
  return rows[0];
}

/**
 * Inside the work's transaction: locks the claim row for the transaction's life, so a takeover
 * waits for our outcome instead of racing it. False when the claim is no longer ours.
 */
export async function holdKeyClaim(tx: Queryable, claim: KeyClaim): Promise<boolean> {
  const { rows } = await tx.query("SELECT 1 FROM idempotency_keys WHERE id = $1 AND lock_token = $2 AND state = 'in_flight' FOR UPDATE", [
    claim.id,
    claim.lockToken,
  ]);
  return rows.length === 1;
}

/** Inside phase 1's transaction: what it recorded, which a retry resumes from. False when the claim is no longer ours. */
export async function recordRecoveryPoint(tx: Queryable, claim: KeyClaim, recoveryPoint: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    "UPDATE idempotency_keys SET recovery_point = $3 WHERE id = $1 AND lock_token = $2 AND state = 'in_flight'",
    [claim.id, claim.lockToken, recoveryPoint],
  );
  return rowCount === 1;
}

/**
 * Stores the response: inside the work's transaction, so both commit or neither does. The events
 * the work recorded are written by the same statement (src/db/outbox.ts): no round trip of their own.
 */
export async function completeKeyClaim(db: Queryable, claim: KeyClaim, response: StoredResponse): Promise<boolean> {
  const outbox = outboxCte(takeOutbox(db), 6);
  const { rowCount } = await db.query(
    `${outbox.sql}UPDATE idempotency_keys SET state = 'completed', response_status = $3, response_headers = $4::jsonb, response_body = $5, locked_until = now()
      WHERE id = $1 AND lock_token = $2 AND state = 'in_flight'`,
    [claim.id, claim.lockToken, response.status, JSON.stringify(response.headers), response.body, ...outbox.params],
  );
  return rowCount === 1;
}

/**
 * After a failure that rolled a phase back: the claim's lock lapses at once, so the retry takes it
 * over and goes on from its recovery point, as the same operation (the processor sees the same reference).
 */
export async function releaseKeyClaim(db: Queryable, claim: KeyClaim): Promise<void> {
  await db.query(
    "UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE id = $1 AND lock_token = $2 AND state = 'in_flight'",
    [claim.id, claim.lockToken],
  );
}

/** Deletes keys past their retention, a batch at a time; returns how many went. */
export async function purgeExpiredKeys(db: Queryable, batch = 10_000): Promise<number> {
  const { rowCount } = await db.query(
    'DELETE FROM idempotency_keys WHERE id IN (SELECT id FROM idempotency_keys WHERE expires_at <= now() ORDER BY expires_at LIMIT $1)',
    [batch],
  );
  return rowCount;
}
