// Events in SQL: appended in the caller's transaction (the outbox, src/db/outbox.ts: each fanned
// out in the same statement to a delivery for every enabled endpoint subscribed to its type); read
// newest first; purged after their retention.
import { randomBytes } from 'node:crypto';
import type { Actor } from '../core/actor.ts';
import { eventSince } from '../core/event-versions.ts';
import type { PagePlan, PageRows } from '../core/paging.ts';
import type { Queryable } from '../db/db.ts';
import { deferToOutbox, writeEvents } from '../db/outbox.ts';
import { selectPage, type SortColumn } from '../db/paging.ts';
import { EVENT_TYPES, type EventObjectFilter, type EventObjectType, type EventSortKey, type EventType } from './events.rules.ts';

/** An event's id: `evt_` and 128 random bits, the same `webhook-id` on every delivery of it. */
export function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

/**
 * Step: records that type happened to object (its record as committed by this transaction). Inside
 * a transaction the event is written with the transaction's last statement (src/db/outbox.ts): a
 * change that rolls back leaves no event, one that commits always has it. actor: who made the
 * change. Returns the event's id.
 */
export async function recordEvent(tx: Queryable, type: EventType, object: object, actor: Actor): Promise<string> {
  const event = { id: newEventId(), type, objectType: EVENT_TYPES[type], object, since: eventSince(type, object), actor };
  if (!deferToOutbox(tx, event)) await writeEvents(tx, [event]);
  return event.id;
}

/** An event as stored: the record of the resource it is about, as its change committed it. */
export interface EventRecord {
  id: string;
  /** Insertion order: between events of one transaction (one createdAt), the later one is higher. */
  seq: number;
  type: EventType;
  objectType: EventObjectType;
  object: Record<string, unknown>;
  /** Who made the change; null for events recorded before actors were (migration 0017). */
  actor: Actor | null;
  createdAt: string;
}

export interface EventFilters {
  types?: readonly EventType[];
  /** RFC 3339 bounds, both inclusive. */
  minCreatedAt?: string;
  maxCreatedAt?: string;
  /** Leaves out events about webhook endpoints pinned to a later API version than this. */
  endpointsUpTo?: number;
  /** Only events about this kind of resource, or this one resource (the events_object_idx index). */
  object?: EventObjectFilter;
}

const EVENT_COLUMNS = 'id, seq, type, object_type AS "objectType", object, actor, created_at AS "createdAt"';

const SORT_COLUMNS: Record<EventSortKey, SortColumn> = {
  createdAt: { sql: 'created_at', type: 'timestamp' },
  seq: { sql: 'seq', type: 'integer' },
};

function whereClause(filters: EventFilters, params: unknown[]): string {
  const conditions = ['true'];
  if (filters.types !== undefined) conditions.push(`type = ANY($${params.push(filters.types)}::text[])`);
  if (filters.minCreatedAt !== undefined) conditions.push(`created_at >= $${params.push(filters.minCreatedAt)}::timestamptz`);
  if (filters.maxCreatedAt !== undefined) conditions.push(`created_at <= $${params.push(filters.maxCreatedAt)}::timestamptz`);
  if (filters.object !== undefined) {
    conditions.push(`object_type = $${params.push(filters.object.type)}`);
    if (filters.object.id !== undefined) conditions.push(`object ->> 'id' = $${params.push(String(filters.object.id))}`);
  }
  if (filters.endpointsUpTo !== undefined) {
    conditions.push(`(object_type <> 'webhook_endpoint' OR (object ->> 'apiVersion')::int <= $${params.push(filters.endpointsUpTo)})`);
  }
  return conditions.join(' AND ');
}

/** One page of events, newest first (EVENTS_NEWEST_FIRST), and the exact number matching the filters (db/paging.ts). */
export function selectEventPage(db: Queryable, filters: EventFilters, plan: PagePlan<EventSortKey>): Promise<PageRows<EventRecord>> {
  const params: unknown[] = [];
  const where = whereClause(filters, params);
  return selectPage<EventRecord, EventSortKey>(
    db,
    {
      countSql: `SELECT count(*) AS collection_total FROM events WHERE ${where}`,
      rowsSql: `SELECT ${EVENT_COLUMNS} FROM events WHERE ${where}`,
      columns: SORT_COLUMNS,
      params,
    },
    plan,
  );
}

export async function findEvent(db: Queryable, id: string): Promise<EventRecord | undefined> {
  const { rows } = await db.query<EventRecord>(`SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1`, [id]);
  return rows[0];
}

/**
 * Deletes up to batch of the events older than retentionDays, oldest first, with their deliveries
 * and attempts (ON DELETE CASCADE). Returns how many it deleted.
 */
export async function deleteEventsOlderThan(db: Queryable, retentionDays: number, batch: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM events WHERE id IN (
       SELECT id FROM events WHERE created_at < now() - make_interval(days => $1) ORDER BY created_at, seq LIMIT $2
     )`,
    [retentionDays, batch],
  );
  return rowCount;
}
