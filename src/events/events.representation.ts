// Events as the API shows them: the envelope GET /events and webhook deliveries share, its object
// rendered from the stored record in the reader's API version by the renderer the app passes in
// (src/event-objects.ts: a domain may not reach into another's representation).
import type { Actor } from '../core/actor.ts';
import type { JsonObject } from '../http/versions/version-change.ts';
import type { EventObjectType, EventType } from './events.rules.ts';
import type { EventRecord } from './events.store.ts';

/** A stored event object → the resource as apiVersion shows it. */
export type RenderEventObject = (objectType: EventObjectType, object: JsonObject, apiVersion: number) => JsonObject;

export interface Event {
  id: string;
  type: EventType;
  createdAt: string;
  livemode: boolean;
  /** Who made the change; null for events recorded before actors were. */
  actor: Actor | null;
  data: { object: JsonObject };
}

/** What an event shows of its record (a delivery has no use for its insertion order). */
type EventContent = Omit<EventRecord, 'seq'>;

/**
 * The event in the latest version's envelope, its object in apiVersion. livemode is the
 * deployment's: whether its processor moves real money.
 */
export function eventRepresentation(record: EventContent, apiVersion: number, renderObject: RenderEventObject, livemode: boolean): Event {
  return {
    id: record.id,
    type: record.type,
    createdAt: record.createdAt,
    livemode,
    actor: record.actor,
    data: { object: renderObject(record.objectType, record.object, apiVersion) },
  };
}
