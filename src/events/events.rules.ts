// The events orderpay records (docs/webhooks.md "Event types"): each names the resource it is about,
// whose representation at the moment of the change the event carries; and the filters of GET /events.
import { DomainError } from '../core/errors.ts';
import { showsEventType } from '../core/event-versions.ts';
import type { SortKey } from '../core/paging.ts';

/** The resources events carry, by the name each has in an event's object_type. */
export const EVENT_OBJECT_TYPES = ['order', 'payment', 'refund', 'product', 'webhook_endpoint'] as const;
export type EventObjectType = (typeof EVENT_OBJECT_TYPES)[number];

/** Every event type, with the resource it carries. */
export const EVENT_TYPES = {
  'order.created': 'order',
  'order.paid': 'order',
  'order.shipped': 'order',
  'order.delivered': 'order',
  'order.cancelled': 'order',
  'order.deleted': 'order',
  'payment.succeeded': 'payment',
  'payment.declined': 'payment',
  'payment.requires_action': 'payment',
  'payment.canceled': 'payment',
  'payment.needs_attention': 'payment',
  'refund.succeeded': 'refund',
  'refund.failed': 'refund',
  'product.created': 'product',
  'product.updated': 'product',
  'webhook_endpoint.disabled': 'webhook_endpoint',
  'webhook_endpoint.ping': 'webhook_endpoint',
} as const satisfies Record<string, EventObjectType>;
export type EventType = keyof typeof EVENT_TYPES;

export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];

/** An endpoint subscribes to a list of types, or to every type with this wildcard. */
export const ALL_EVENTS = '*';

/** The event types an API version shows (core/event-versions.ts). */
export function eventTypesAt(apiVersion: number): EventType[] {
  return EVENT_TYPE_NAMES.filter((type) => showsEventType(type, apiVersion));
}

/**
 * The `type` filter of GET /events: event types separated by commas, as `sort` lists its keys.
 * An empty one, or one the reader's version does not know, is refused, naming the parameter; one
 * named twice counts once.
 */
export function parseEventTypeFilter(raw: string | undefined, known: readonly EventType[]): EventType[] | undefined {
  if (raw === undefined) return undefined;
  const types = new Set<EventType>();
  for (const name of raw.split(',')) {
    if (!(known as readonly string[]).includes(name)) {
      const detail = name === '' ? 'type has an empty event type' : `"${name}" is not an event type; use ${known.join(', ')}`;
      throw new DomainError('REQUEST_PARAMETER_INVALID', detail, { errors: [{ parameter: 'type', detail }] });
    }
    types.add(name as EventType);
  }
  return [...types];
}

export interface CreatedAtRange {
  minCreatedAt?: string;
  maxCreatedAt?: string;
}

/**
 * The createdAt range of GET /events (RFC 3339 timestamps, both ends inclusive), written with an
 * upper-case T and Z as PostgreSQL reads them; a range that ends before it starts is refused.
 */
export function parseCreatedAtRange(range: CreatedAtRange): CreatedAtRange {
  const minCreatedAt = range.minCreatedAt?.toUpperCase();
  const maxCreatedAt = range.maxCreatedAt?.toUpperCase();
  if (minCreatedAt !== undefined && maxCreatedAt !== undefined && Date.parse(minCreatedAt) > Date.parse(maxCreatedAt)) {
    const detail = 'minCreatedAt is later than maxCreatedAt';
    throw new DomainError('REQUEST_PARAMETER_INVALID', `${detail}.`, { errors: [{ parameter: 'minCreatedAt', detail }] });
  }
  return { minCreatedAt, maxCreatedAt };
}

/** The events of one kind of resource, or of one resource (GET /events?objectType=…&objectId=…). */
export interface EventObjectFilter {
  type: EventObjectType;
  id?: number;
}

/** objectType and objectId as sent: an id names a resource only with its kind (ids are per kind). */
export function parseObjectFilter(query: { objectType?: EventObjectType; objectId?: number }): EventObjectFilter | undefined {
  if (query.objectId !== undefined && query.objectType === undefined) {
    const detail = 'objectId names a resource only with objectType (order, payment, refund, product or webhook_endpoint)';
    throw new DomainError('REQUEST_PARAMETER_INVALID', `${detail}.`, { errors: [{ parameter: 'objectId', detail }] });
  }
  // An absent id is left out of the cursor's scope, as every absent filter is (core/paging.ts).
  return query.objectType === undefined ? undefined : { type: query.objectType, id: query.objectId };
}

export type EventSortKey = 'createdAt' | 'seq';
/** The log's one order, newest first; seq orders the events of one transaction, which share their createdAt. */
export const EVENTS_NEWEST_FIRST: SortKey<EventSortKey>[] = [
  { field: 'createdAt', descending: true },
  { field: 'seq', descending: true },
];
