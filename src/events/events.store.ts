// Events in SQL: appended in the caller's transaction (the outbox), each fanned out in the same
// statement to a delivery for every enabled webhook endpoint that subscribes to its type.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/db.ts';
import { ALL_EVENTS, EVENT_TYPES, type EventType } from './events.rules.ts';

/** An event's id: `evt_` and 128 random bits, the same `webhook-id` on every delivery of it. */
export function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

/**
 * Step: records that type happened to object (its record as committed by this transaction): a
 * change that rolls back leaves no event, one that commits always has it. Returns the event's id.
 */
export async function recordEvent(tx: Queryable, type: EventType, object: object): Promise<string> {
  const id = newEventId();
  await tx.query(
    `WITH event AS (
       INSERT INTO events (id, type, object_type, object) VALUES ($1, $2, $3, $4::jsonb) RETURNING id, type
     )
     INSERT INTO webhook_deliveries (endpoint_id, event_id)
     SELECT w.id, event.id FROM event JOIN webhook_endpoints w
       ON NOT w.disabled AND (w.enabled_events @> ARRAY[event.type] OR w.enabled_events @> ARRAY['${ALL_EVENTS}'])`,
    [id, type, EVENT_TYPES[type], JSON.stringify(object)],
  );
  return id;
}
