// Webhook deliveries in SQL: claiming the due ones under a lease (FOR ... SKIP LOCKED, so that any
// number of processes share the work and none sends a delivery another holds; a lease that ran out
// is an attempt lost, and no delivery is sent more often than the schedule says), recording each
// attempt and what it made of its delivery, and the health of endpoints (failing_since, disabled).
import type { Actor } from '../core/actor.ts';
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
    /** Attempts to it failed in a row, and of those the ones that timed out, when it was claimed. */
    consecutiveFailures: number;
    consecutiveTimeouts: number;
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
  consecutive_failures: number;
  consecutive_timeouts: number;
  event_id: string;
  type: EventType;
  object_type: EventObjectType;
  object: Record<string, unknown>;
  actor: Actor | null;
  created_at: string;
}

// Due: pending, its time come, and no unexpired lease on it.
const DUE = `d.state = 'pending' AND d.next_attempt_at <= now() AND (d.leased_until IS NULL OR d.leased_until <= now())`;
// In flight: leased and the lease not yet run out (whichever process holds it).
const IN_FLIGHT_COUNT = `(SELECT count(*)::int FROM webhook_deliveries l
  WHERE l.endpoint_id = w.id AND l.state = 'pending' AND l.leased_until > now())`;
// Attempts an endpoint may have in flight: $perEndpoint while its last attempt succeeded, one
// while it is failing (the next attempt is a probe: record 0120).
const endpointCap = (perEndpoint: string) => `CASE WHEN w.consecutive_failures > 0 THEN 1 ELSE ${perEndpoint} END`;
// Attempts an endpoint may still be sent in this second under the rate cap ($maxRate), across every process.
const THIS_SECOND = `date_trunc('second', now())`;
const rateRoom = (maxRate: string) =>
  `CASE WHEN w.rate_window_start = ${THIS_SECOND} THEN ${maxRate} - w.rate_window_sends ELSE ${maxRate} END`;

/** An endpoint a claim may take deliveries of. */
export interface ClaimableEndpoint {
  id: number;
  /** Its last attempt failed: one attempt at a time, from the process's share for such endpoints. */
  failing: boolean;
}

/**
 * Step 1 of a claim: locks up to `limit` enabled endpoints that have a due delivery, fewer than
 * their cap in flight and no open circuit, healthy ones first, then oldest due first. Whoever
 * holds an endpoint's lock is the only one claiming its deliveries; the others skip it. NO KEY
 * UPDATE: an insert of a delivery (its foreign key takes KEY SHARE on the endpoint) never waits
 * for a dispatcher.
 */
export async function lockEndpointsWithDueDeliveries(
  tx: Queryable,
  limit: number,
  perEndpoint: number,
  maxRate: number,
): Promise<ClaimableEndpoint[]> {
  const { rows } = await tx.query<{ id: number; failing: boolean }>(
    `SELECT w.id, w.consecutive_failures > 0 AS failing FROM webhook_endpoints w
     CROSS JOIN LATERAL (
       SELECT d.next_attempt_at FROM webhook_deliveries d
        WHERE d.endpoint_id = w.id AND ${DUE}
        ORDER BY d.next_attempt_at LIMIT 1
     ) due
     WHERE NOT w.disabled AND (w.circuit_open_until IS NULL OR w.circuit_open_until <= now())
       AND ${IN_FLIGHT_COUNT} < ${endpointCap('$2')} AND ${rateRoom('$3')} > 0
     ORDER BY w.consecutive_failures > 0, due.next_attempt_at, w.id
     LIMIT $1
     FOR NO KEY UPDATE OF w SKIP LOCKED`,
    [limit, perEndpoint, maxRate],
  );
  return rows;
}

/** What a lost attempt's row in the delivery log says. */
const LOST_ATTEMPT_ERROR = 'no outcome recorded: the process sending it stopped, or could not reach the database, before its lease ran out';

/**
 * Step 2 of a claim, in the transaction that locked the endpoints (a statement of its own, so that
 * it counts the leases every earlier holder of those locks committed): leases up to `limit` due
 * deliveries, at most perEndpoint in flight per endpoint (one while it is failing) and maxRate
 * claimed per endpoint in each second (counted on the endpoint's row), taken in turns across the
 * endpoints (each one's first, then each one's second, …). Each claimed delivery counts one more attempt.
 * A delivery whose lease ran out had an attempt nobody recorded: a row says so. One that has had
 * maxAttempts already is not leased but failed: the schedule bounds the sends even when attempts
 * go unrecorded (a process killed, the database lost), where no verdict could end it.
 */
export async function leaseDueDeliveries(
  tx: Queryable,
  endpointIds: readonly number[],
  options: { limit: number; perEndpoint: number; maxRate: number; leaseMs: number; maxAttempts: number },
): Promise<ClaimedDelivery[]> {
  const { rows } = await tx.query<ClaimRow>(
    `WITH candidates AS (
       SELECT due.id, e.id AS endpoint_id, due.leased_until, due.attempts >= $5 AS used_up, e.ord,
              row_number() OVER (PARTITION BY e.id ORDER BY due.next_attempt_at, due.id) AS turn
         FROM unnest($1::bigint[]) WITH ORDINALITY AS e(id, ord)
         JOIN webhook_endpoints w ON w.id = e.id
         CROSS JOIN LATERAL (
           SELECT least(${endpointCap('$2::int')} - count(*)::int, ${rateRoom('$7::int')}) AS room FROM webhook_deliveries l
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
       SELECT id, endpoint_id, leased_until, used_up FROM candidates ORDER BY turn, ord LIMIT $3
     ), counted AS (
       UPDATE webhook_endpoints w
          SET rate_window_sends = CASE WHEN w.rate_window_start = ${THIS_SECOND} THEN w.rate_window_sends + sends.n ELSE sends.n END,
              rate_window_start = ${THIS_SECOND}
         FROM (SELECT endpoint_id, count(*)::int AS n FROM claimed WHERE NOT used_up GROUP BY endpoint_id) sends
        WHERE w.id = sends.endpoint_id
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
               w.consecutive_failures, w.consecutive_timeouts,
               ev.id AS event_id, ev.type, ev.object_type, ev.object, ev.actor, ev.created_at`,
    [endpointIds, options.perEndpoint, options.limit, options.leaseMs, options.maxAttempts, LOST_ATTEMPT_ERROR, options.maxRate],
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
      consecutiveFailures: row.consecutive_failures,
      consecutiveTimeouts: row.consecutive_timeouts,
    },
    event: {
      id: row.event_id,
      type: row.type,
      objectType: row.object_type,
      object: row.object,
      actor: row.actor,
      createdAt: row.created_at,
    },
    lostAttempt: row.lost_attempt,
    usedUp: row.used_up,
  }));
}

/** What an attempt says of its endpoint: it answered with a 2xx, it failed (timing out or not), or nothing (a body too large to send). */
export type EndpointEffect = { kind: 'succeeded' } | { kind: 'failed'; timedOut: boolean } | { kind: 'none' };

/** What an endpoint's failed attempt made of it. */
export interface EndpointFailure {
  /** Since when every attempt to it failed. */
  failingSince: string | null;
  /** The database's time now. */
  now: string;
  consecutiveFailures: number;
  /** Until when it gets no attempt; null while its circuit is closed. */
  circuitOpenUntil: string | null;
}

// failingSince is part of the endpoint's representation: changing it is a new revision (ETag).
// The counts and the circuit are the dispatcher's own (migration 0015): no revision. After
// circuit.threshold failures in a row the circuit opens, for longer each time (circuitPauseMs's
// formula: base × 2^(failures − threshold), capped).
// A success also stamps last_succeeded_at (migration 0014), no revision either (decision 0118): a
// busy endpoint succeeds hundreds of times a second, so its row is written only when there is
// something to reset or its last success is a second old, and lastSucceededAt is within about a
// second of the latest (decision 0119).
const ENDPOINT_SUCCEEDED = `UPDATE webhook_endpoints
    SET last_succeeded_at = now(), failing_since = NULL, consecutive_failures = 0, consecutive_timeouts = 0, circuit_open_until = NULL,
        updated_at = CASE WHEN failing_since IS NULL THEN updated_at ELSE now() END,
        version = CASE WHEN failing_since IS NULL THEN version ELSE version + 1 END
  WHERE $9 = 'succeeded' AND id = $10
    AND (failing_since IS NOT NULL OR consecutive_failures > 0 OR last_succeeded_at IS NULL OR last_succeeded_at <= now() - interval '1 second')`;
const ENDPOINT_FAILED = `UPDATE webhook_endpoints
    SET failing_since = coalesce(failing_since, now()),
        updated_at = CASE WHEN failing_since IS NULL THEN now() ELSE updated_at END,
        version = CASE WHEN failing_since IS NULL THEN version + 1 ELSE version END,
        consecutive_failures = consecutive_failures + 1,
        consecutive_timeouts = CASE WHEN $11 THEN consecutive_timeouts + 1 ELSE 0 END,
        circuit_open_until = CASE WHEN consecutive_failures + 1 >= $12
          THEN now() + make_interval(secs => least($13::double precision * 2 ^ (consecutive_failures + 1 - $12), $14::double precision) / 1000)
          ELSE circuit_open_until END
  WHERE $9 = 'failed' AND id = $10
  RETURNING failing_since, consecutive_failures, circuit_open_until`;

/**
 * Records an attempt in one statement (one round trip, no transaction of its own): appends it to
 * the delivery's log (nothing when the delivery was deleted meanwhile), ends the lease with the
 * outcome if the lease is still this attempt's (`attempts` is its token, so a process whose lease
 * ran out, and whose delivery another has claimed since, changes nothing), and updates the
 * endpoint's health. Returns whether the lease was this attempt's, and a failure's effect.
 */
export async function recordAttemptOutcome(
  db: Queryable,
  delivery: { id: number; attempts: number; endpointId: number },
  attempt: AttemptRecord,
  outcome: DeliveryVerdict,
  effect: EndpointEffect,
  circuit: { threshold: number; basePauseMs: number; maxPauseMs: number },
): Promise<{ recorded: boolean; failure?: EndpointFailure }> {
  const { rows } = await db.query<{
    recorded: number;
    now: string;
    failed: boolean;
    failing_since: string | null;
    consecutive_failures: number | null;
    circuit_open_until: string | null;
  }>(
    `WITH attempt AS (
       INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, error, response_body)
       SELECT id, now() - make_interval(secs => $4::double precision / 1000), $3, $4, $5, $6
         FROM webhook_deliveries WHERE id = $1
     ), outcome AS (
       UPDATE webhook_deliveries
          SET state = $7, leased_until = NULL, updated_at = now(),
              next_attempt_at = CASE WHEN $7 = 'pending' THEN now() + make_interval(secs => $8::double precision / 1000) ELSE next_attempt_at END
        WHERE id = $1 AND attempts = $2 AND state = 'pending'
       RETURNING id
     ), succeeded AS (${ENDPOINT_SUCCEEDED}), failed AS (${ENDPOINT_FAILED})
     SELECT (SELECT count(*) FROM outcome)::int AS recorded, now() AS now, f.consecutive_failures IS NOT NULL AS failed,
            f.failing_since, f.consecutive_failures, f.circuit_open_until
       FROM (SELECT 1) AS one LEFT JOIN failed f ON true`,
    [
      delivery.id,
      delivery.attempts,
      attempt.statusCode ?? null,
      attempt.durationMs,
      attempt.error ?? null,
      attempt.responseBody ?? null,
      outcome.state,
      outcome.state === 'pending' ? outcome.retryInMs : 0,
      effect.kind,
      delivery.endpointId,
      effect.kind === 'failed' && effect.timedOut,
      circuit.threshold,
      circuit.basePauseMs,
      circuit.maxPauseMs,
    ],
  );
  const row = rows[0]!;
  if (!row.failed) return { recorded: row.recorded > 0 };
  return {
    recorded: row.recorded > 0,
    failure: {
      failingSince: row.failing_since,
      now: row.now,
      consecutiveFailures: row.consecutive_failures ?? 0,
      circuitOpenUntil: row.circuit_open_until,
    },
  };
}

/** Disables the endpoint unless it already is; its record after the change, or undefined. */
export async function disableEndpoint(tx: Queryable, endpointId: number): Promise<WebhookEndpointRecord | undefined> {
  const { rows } = await tx.query<WebhookEndpointRecord>(
    `UPDATE webhook_endpoints SET disabled = true, disabled_reason = 'failing', updated_at = now(), version = version + 1
      WHERE id = $1 AND NOT disabled
     RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
    [endpointId],
  );
  return rows[0];
}
