// An endpoint's delivery log in SQL: its deliveries (newest first) with their attempts, and the
// deliveries a caller asks for (a redelivery, a ping). Claiming, sending and recording attempts is
// the dispatcher's (deliveries.store.ts): this file only reads them and adds pending deliveries.
import type { Actor } from '../core/actor.ts';
import type { PagePlan, PageRows } from '../core/paging.ts';
import type { Queryable } from '../db/db.ts';
import { selectPage } from '../db/paging.ts';
import { EVENT_TYPES } from '../events/events.rules.ts';
import { newEventId } from '../events/events.store.ts';
import {
  MAX_ATTEMPTS_SHOWN,
  MAX_ERROR_SHOWN,
  MAX_RESPONSE_BODY_SHOWN,
  PING_EVENT_TYPE,
  type DeliverySortKey,
  type DeliveryState,
} from './endpoints.rules.ts';
import type { WebhookEndpointRecord } from './endpoints.store.ts';

export interface WebhookDeliveryRecord {
  id: number;
  endpointId: number;
  eventId: string;
  eventType: string;
  state: DeliveryState;
  /** Attempts made so far (the dispatcher counts them). */
  attemptCount: number;
  nextAttemptAt: string;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookAttemptRecord {
  deliveryId: number;
  attemptedAt: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
}

const COLUMNS = `d.id, d.endpoint_id AS "endpointId", d.event_id AS "eventId", e.type AS "eventType", d.state, d.attempts AS "attemptCount",
  d.next_attempt_at AS "nextAttemptAt", d.created_at AS "createdAt", d.updated_at AS "updatedAt"`;
const FROM = 'webhook_deliveries d JOIN events e ON e.id = d.event_id';

export interface DeliveryFilters {
  state?: DeliveryState;
  eventId?: string;
}

/** One page of an endpoint's deliveries, newest first (DELIVERIES_NEWEST_FIRST), and the exact total. */
export function selectDeliveries(
  db: Queryable,
  endpointId: number,
  filters: DeliveryFilters,
  plan: PagePlan<DeliverySortKey>,
): Promise<PageRows<WebhookDeliveryRecord>> {
  const params: unknown[] = [endpointId];
  const where = ['d.endpoint_id = $1'];
  if (filters.state !== undefined) where.push(`d.state = $${params.push(filters.state)}`);
  if (filters.eventId !== undefined) where.push(`d.event_id = $${params.push(filters.eventId)}`);
  const condition = where.join(' AND ');
  return selectPage<WebhookDeliveryRecord, DeliverySortKey>(
    db,
    {
      countSql: `SELECT count(*) AS collection_total FROM webhook_deliveries d WHERE ${condition}`,
      rowsSql: `SELECT ${COLUMNS} FROM ${FROM} WHERE ${condition}`,
      columns: { createdAt: { sql: 'd.created_at', type: 'timestamp' }, id: { sql: 'd.id', type: 'integer' } },
      params,
    },
    plan,
  );
}

/** One delivery, only if it is the endpoint's: another endpoint's delivery is not found. */
export async function findDelivery(db: Queryable, endpointId: number, deliveryId: number): Promise<WebhookDeliveryRecord | undefined> {
  const { rows } = await db.query<WebhookDeliveryRecord>(`SELECT ${COLUMNS} FROM ${FROM} WHERE d.endpoint_id = $1 AND d.id = $2`, [
    endpointId,
    deliveryId,
  ]);
  return rows[0];
}

/** The attempts of these deliveries, oldest first, the latest MAX_ATTEMPTS_SHOWN of each. */
export async function selectAttempts(db: Queryable, deliveryIds: readonly number[]): Promise<WebhookAttemptRecord[]> {
  if (deliveryIds.length === 0) return [];
  const { rows } = await db.query<WebhookAttemptRecord>(
    `SELECT "deliveryId", "attemptedAt", "statusCode", "durationMs", error, "responseBody" FROM (
       SELECT id, delivery_id AS "deliveryId", attempted_at AS "attemptedAt", status_code AS "statusCode",
              duration_ms AS "durationMs", left(error, $2) AS error, left(response_body, $3) AS "responseBody",
              row_number() OVER (PARTITION BY delivery_id ORDER BY id DESC) AS latest
         FROM webhook_attempts WHERE delivery_id = ANY($1::bigint[])
     ) a WHERE latest <= $4 ORDER BY "deliveryId", id`,
    [deliveryIds, MAX_ERROR_SHOWN, MAX_RESPONSE_BODY_SHOWN, MAX_ATTEMPTS_SHOWN],
  );
  return rows;
}

export interface RedeliveryCandidate {
  id: string;
  type: string;
  /** The record the event carries (a webhook endpoint's says which version it is pinned to). */
  object: object;
  /** Whether the event was delivered (or is being delivered) to the endpoint already. */
  deliveredBefore: boolean;
}

/** An event as a redelivery to this endpoint needs it; undefined when there is no such event (or it was purged). */
export async function findRedeliveryCandidate(
  db: Queryable,
  endpointId: number,
  eventId: string,
): Promise<RedeliveryCandidate | undefined> {
  const { rows } = await db.query<RedeliveryCandidate>(
    `SELECT e.id, e.type, e.object,
            EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.endpoint_id = $1) AS "deliveredBefore"
       FROM events e WHERE e.id = $2`,
    [endpointId, eventId],
  );
  return rows[0];
}

/** A new pending delivery of an existing event to one endpoint. */
export async function insertDelivery(db: Queryable, endpointId: number, eventId: string): Promise<WebhookDeliveryRecord> {
  const { rows } = await db.query<WebhookDeliveryRecord>(
    `WITH d AS (INSERT INTO webhook_deliveries (endpoint_id, event_id) VALUES ($1, $2) RETURNING *)
     SELECT ${COLUMNS} FROM d JOIN events e ON e.id = d.event_id`,
    [endpointId, eventId],
  );
  return rows[0]!;
}

/**
 * Records a ping of one endpoint: a webhook_endpoint.ping event carrying the endpoint's record (which
 * holds no secret), and a pending delivery of it to that endpoint only. Unlike recordEvent, no other
 * endpoint receives it, whatever it subscribes to.
 */
export async function recordPingDelivery(db: Queryable, endpoint: WebhookEndpointRecord, actor: Actor): Promise<WebhookDeliveryRecord> {
  const { rows } = await db.query<WebhookDeliveryRecord>(
    `WITH e AS (
       INSERT INTO events (id, type, object_type, object, actor) VALUES ($1, $2, $3, $4::jsonb, $6::jsonb) RETURNING id, type
     ), d AS (
       INSERT INTO webhook_deliveries (endpoint_id, event_id) SELECT $5, e.id FROM e RETURNING *
     )
     SELECT ${COLUMNS} FROM d JOIN e ON e.id = d.event_id`,
    [newEventId(), PING_EVENT_TYPE, EVENT_TYPES[PING_EVENT_TYPE], JSON.stringify(endpoint), endpoint.id, JSON.stringify(actor)],
  );
  return rows[0]!;
}
