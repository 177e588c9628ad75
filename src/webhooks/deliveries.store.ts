// Webhook deliveries in SQL: claiming the due ones under a lease (FOR ... SKIP LOCKED, so that any
// number of processes share the work and none sends a delivery another holds; a lease that ran out
// is an attempt lost, and no delivery is sent more often than the schedule says), recording each
// attempt and what it made of its delivery, and the health of endpoints (failing_since, disabled).
import type { Queryable } from '../db/db.ts';
import type { EventObjectType, EventType } from '../events/events.rules.ts';
import type { EventRecord } from '../events/events.store.ts';
import { WEBHOOK_ENDPOINT_COLUMNS, type WebhookEndpointRecord } from './endpoints.store.ts';
import type { AttemptRecord, DeliveryVerdict } from './deliveries.rules.ts';

/** A claimed delivery with what sending it needs: its endpoint and its event. */
export interface ClaimedDelivery {
  id: number;
  /** Attempts made, this one included: the lease's token (see recordDeliveryOutcome). */
  attempts: number;
  endpoint: {
    id: number;
    url: string;
    apiVersion: number;
    /** Sealed (src/webhooks/secrets.ts). */
    secret: string;
    /** Sealed; only while it still signs (previous_secret_expires_at is in the future). */
    previousSecret: string | null;
  };
  event: Omit<EventRecord, 'seq'>;
  /** The attempt before this one ran out of its lease unrecorded (its process stopped): now recorded as lost. */
  lostAttempt: boolean;
  /** The schedule's attempts are all made: failed by the claim, not to be sent (attempts not counted up). */
  usedUp: boolean;
}

interface ClaimRow {
  id: number;
  attempts: number;
  lost_attempt: boolean;
  used_up: boolean;
  endpoint_id: number;
  url: string;
  api_version: number;
  secret: string;
  previous_secret: string | null;
  event_id: string;
  type: EventType;
  object_type: EventObjectType;
  object: Record<string, unknown>;
  created_at: string;
}

// Due: pending, its time come, and no unexpired lease on it.
const DUE = `d.state = 'pending' AND d.next_attempt_at <= now() AND (d.leased_until IS NULL OR d.leased_until <= now())`;
// In flight: leased and the lease not yet run out (whichever process holds it).
const IN_FLIGHT_COUNT = `(SELECT count(*)::int FROM webhook_deliveries l
  WHERE l.endpoint_id = w.id AND l.state = 'pending' AND l.leased_until > now())`;

/**
 * Step 1 of a claim: locks up to `limit` enabled endpoints that have a due delivery and fewer than
 * perEndpoint in flight, oldest due first. Whoever holds an endpoint's lock is the only one
 * claiming its deliveries; the others skip it. NO KEY UPDATE: an insert of a delivery (its foreign
 * key takes KEY SHARE on the endpoint) never waits for a dispatcher.
 */
export async function lockEndpointsWithDueDeliveries(tx: Queryable, limit: number, perEndpoint: number): Promise<number[]> {
  const { rows } = await tx.query<{ id: number }>(
    `SELECT w.id FROM webhook_endpoints w
     CROSS JOIN LATERAL (
       SELECT d.next_attempt_at FROM webhook_deliveries d
        WHERE d.endpoint_id = w.id AND ${DUE}
        ORDER BY d.next_attempt_at LIMIT 1
     ) due
     WHERE NOT w.disabled AND ${IN_FLIGHT_COUNT} < $2
     ORDER BY due.next_attempt_at, w.id
     LIMIT $1
     FOR NO KEY UPDATE OF w SKIP LOCKED`,
    [limit, perEndpoint],
  );
  return rows.map((row) => row.id);
}

/** What a lost attempt's row in the delivery log says. */
const LOST_ATTEMPT_ERROR = 'no outcome recorded: the process sending it stopped, or could not reach the database, before its lease ran out';

/**
 * Step 2 of a claim, in the transaction that locked the endpoints (a statement of its own, so that
 * it counts the leases every earlier holder of those locks committed): leases up to `limit` due
 * deliveries, at most perEndpoint in flight per endpoint, taken in turns across the endpoints
 * (each one's first, then each one's second, …). Each claimed delivery counts one more attempt.
 * A delivery whose lease ran out had an attempt nobody recorded: a row says so. One that has had
 * maxAttempts already is not leased but failed: the schedule bounds the sends even when attempts
 * go unrecorded (a process killed, the database lost), where no verdict could end it.
 */
export async function leaseDueDeliveries(
  tx: Queryable,
  endpointIds: readonly number[],
  options: { limit: number; perEndpoint: number; leaseMs: number; maxAttempts: number },
): Promise<ClaimedDelivery[]> {
  const { rows } = await tx.query<ClaimRow>(
    `WITH candidates AS (
       SELECT due.id, due.leased_until, due.attempts >= $5 AS used_up, e.ord,
              row_number() OVER (PARTITION BY e.id ORDER BY due.next_attempt_at, due.id) AS turn
         FROM unnest($1::bigint[]) WITH ORDINALITY AS e(id, ord)
         CROSS JOIN LATERAL (
           SELECT $2::int - count(*)::int AS room FROM webhook_deliveries l
            WHERE l.endpoint_id = e.id AND l.state = 'pending' AND l.leased_until > now()
         ) r
         CROSS JOIN LATERAL (
           SELECT d.id, d.next_attempt_at, d.leased_until, d.attempts FROM webhook_deliveries d
            WHERE d.endpoint_id = e.id AND ${DUE}
            ORDER BY d.next_attempt_at, d.id
            LIMIT greatest(r.room, 0)
            FOR NO KEY UPDATE SKIP LOCKED
         ) due
     ), claimed AS (
       SELECT id, leased_until, used_up FROM candidates ORDER BY turn, ord LIMIT $3
     ), lost AS (
       INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, error, response_body)
       SELECT id, leased_until - make_interval(secs => $4::double precision / 1000), NULL, 0, $6, NULL
         FROM claimed WHERE leased_until IS NOT NULL
     )
     UPDATE webhook_deliveries d
        SET leased_until = CASE WHEN claimed.used_up THEN NULL ELSE now() + make_interval(secs => $4::double precision / 1000) END,
            state = CASE WHEN claimed.used_up THEN 'failed' ELSE d.state END,
            attempts = CASE WHEN claimed.used_up THEN d.attempts ELSE d.attempts + 1 END,
            updated_at = now()
       FROM claimed, webhook_endpoints w, events ev
      WHERE d.id = claimed.id AND w.id = d.endpoint_id AND ev.id = d.event_id
     RETURNING d.id, d.attempts, claimed.leased_until IS NOT NULL AS lost_attempt, claimed.used_up,
               w.id AS endpoint_id, w.url, w.api_version, w.secret,
               CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS previous_secret,
               ev.id AS event_id, ev.type, ev.object_type, ev.object, ev.created_at`,
    [endpointIds, options.perEndpoint, options.limit, options.leaseMs, options.maxAttempts, LOST_ATTEMPT_ERROR],
  );
  return rows.map((row) => ({
    id: row.id,
    attempts: row.attempts,
    endpoint: {
      id: row.endpoint_id,
      url: row.url,
      apiVersion: row.api_version,
      secret: row.secret,
      previousSecret: row.previous_secret,
    },
    event: { id: row.event_id, type: row.type, objectType: row.object_type, object: row.object, createdAt: row.created_at },
    lostAttempt: row.lost_attempt,
    usedUp: row.used_up,
  }));
}

/** Appends an attempt to the delivery's log (nothing when the delivery was deleted meanwhile). */
export async function insertAttempt(tx: Queryable, deliveryId: number, attempt: AttemptRecord): Promise<void> {
  await tx.query(
    `INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, error, response_body)
     SELECT id, now() - make_interval(secs => $3::double precision / 1000), $2, $3, $4, $5
       FROM webhook_deliveries WHERE id = $1`,
    [deliveryId, attempt.statusCode ?? null, attempt.durationMs, attempt.error ?? null, attempt.responseBody ?? null],
  );
}

/**
 * Ends the lease with the outcome, if the lease is still this attempt's: `attempts` is its token,
 * so a process whose lease ran out (and whose delivery another has claimed since) changes nothing.
 * Returns whether it did.
 */
export async function recordDeliveryOutcome(
  tx: Queryable,
  delivery: { id: number; attempts: number },
  outcome: DeliveryVerdict,
): Promise<boolean> {
  const retryInMs = outcome.state === 'pending' ? outcome.retryInMs : 0;
  const { rowCount } = await tx.query(
    `UPDATE webhook_deliveries
        SET state = $3, leased_until = NULL, updated_at = now(),
            next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + make_interval(secs => $4::double precision / 1000) ELSE next_attempt_at END
      WHERE id = $1 AND attempts = $2 AND state = 'pending'`,
    [delivery.id, delivery.attempts, outcome.state, retryInMs],
  );
  return rowCount > 0;
}

// failingSince is part of the endpoint's representation: changing it is a new revision (ETag).

/**
 * An attempt to the endpoint succeeded: it is failing no more, and it last succeeded now. A busy
 * endpoint succeeds hundreds of times a second: its row is written only when it was failing or its
 * last success is a second old, so lastSucceededAt is within about a second of the latest. That
 * figure alone is no new revision (version and updated_at stay: decision 0118); ending a failure is.
 */
export async function markEndpointSucceeding(tx: Queryable, endpointId: number): Promise<void> {
  await tx.query(
    `UPDATE webhook_endpoints
        SET last_succeeded_at = now(), failing_since = NULL,
            updated_at = CASE WHEN failing_since IS NULL THEN updated_at ELSE now() END,
            version = CASE WHEN failing_since IS NULL THEN version ELSE version + 1 END
      WHERE id = $1 AND (failing_since IS NOT NULL OR last_succeeded_at IS NULL OR last_succeeded_at <= now() - interval '1 second')`,
    [endpointId],
  );
}

/** An attempt to the endpoint failed: failing since now unless already. Returns since when, and the time now. */
export async function markEndpointFailing(tx: Queryable, endpointId: number): Promise<{ failingSince: string | null; now: string }> {
  // One statement: the update (only when not yet failing) and the value either way; the outer
  // SELECT sees the row as before the update, so the update's own value comes first.
  const { rows } = await tx.query<{ failing_since: string | null; now: string }>(
    `WITH started AS (
       UPDATE webhook_endpoints SET failing_since = now(), updated_at = now(), version = version + 1
        WHERE id = $1 AND failing_since IS NULL RETURNING failing_since
     )
     SELECT coalesce((SELECT failing_since FROM started), w.failing_since) AS failing_since, now() AS now
       FROM webhook_endpoints w WHERE w.id = $1`,
    [endpointId],
  );
  return { failingSince: rows[0]?.failing_since ?? null, now: rows[0]?.now ?? new Date().toISOString() };
}

/** Disables the endpoint unless it already is; its record after the change, or undefined. */
export async function disableEndpoint(tx: Queryable, endpointId: number): Promise<WebhookEndpointRecord | undefined> {
  const { rows } = await tx.query<WebhookEndpointRecord>(
    `UPDATE webhook_endpoints SET disabled = true, updated_at = now(), version = version + 1
      WHERE id = $1 AND NOT disabled
     RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
    [endpointId],
  );
  return rows[0];
}
