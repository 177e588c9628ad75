// The event log's use cases: read it (staff and service clients: it holds every customer's orders
// and payments) and purge what is past its retention. Callers get records; rendering them in an
// API version is the edge's (events.representation.ts).
import { LATEST_API_VERSION } from '../core/api-versions.ts';
import { DomainError } from '../core/errors.ts';
import { endpointVersionsShownTo, eventSince } from '../core/event-versions.ts';
import { planPage, toCollection, type Collection, type PageRequest } from '../core/paging.ts';
import { isStaffOrService, type Principal } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import {
  EVENTS_NEWEST_FIRST,
  type EventObjectType,
  eventTypesAt,
  parseCreatedAtRange,
  parseEventTypeFilter,
  parseObjectFilter,
} from './events.rules.ts';
import { deleteEventsOlderThan, findEvent, selectEventPage, type EventRecord } from './events.store.ts';

/** Customers never read the log, whatever their token says: it shows other customers' data. */
function assertEventReader(principal: Principal): void {
  if (!isStaffOrService(principal)) {
    throw new DomainError('AUTH_FORBIDDEN', "The event log holds every customer's data: staff users and service clients only.");
  }
}

export interface ListEventsCommand {
  page: PageRequest;
  /** The type filter as sent: event types separated by commas. */
  type?: string;
  minCreatedAt?: string;
  maxCreatedAt?: string;
  /** The kind of resource the events are about, and which one (objectId requires objectType). */
  objectType?: EventObjectType;
  objectId?: number;
  /**
   * The reader's API version: events it does not show (of a later type, or about a webhook endpoint
   * pinned to a later version) are not there for it.
   */
  apiVersion: number;
}

export async function listEvents(db: Queryable, principal: Principal, command: ListEventsCommand): Promise<Collection<EventRecord>> {
  assertEventReader(principal);
  const shownTypes = eventTypesAt(command.apiVersion);
  const earlier = command.apiVersion < LATEST_API_VERSION;
  const types = parseEventTypeFilter(command.type, shownTypes) ?? (earlier ? shownTypes : undefined);
  const range = parseCreatedAtRange(command);
  const object = parseObjectFilter(command);
  const filters = { types, ...range, object, ...(earlier && { endpointsUpTo: endpointVersionsShownTo(command.apiVersion) }) };
  const plan = planPage(command.page, 'events', filters, EVENTS_NEWEST_FIRST);
  return toCollection(await selectEventPage(db, filters, plan), plan);
}

export async function getEvent(db: Queryable, principal: Principal, eventId: string, apiVersion: number): Promise<EventRecord> {
  assertEventReader(principal);
  const event = await findEvent(db, eventId);
  if (!event || eventSince(event.type, event.object) > apiVersion)
    throw new DomainError('EVENT_NOT_FOUND', `Event ${eventId} does not exist.`);
  return event;
}

/**
 * Deletes every event older than retentionDays (ORDERPAY_EVENTS_RETENTION_DAYS), in batches so
 * that no one statement holds many locks; the purge job runs it. Returns how many it deleted.
 */
export async function purgeExpiredEvents(db: Queryable, retentionDays: number, batch = 10_000): Promise<number> {
  let purged = 0;
  for (;;) {
    const deleted = await deleteEventsOlderThan(db, retentionDays, batch);
    purged += deleted;
    if (deleted < batch) return purged;
  }
}
