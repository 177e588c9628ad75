// The transactional outbox: the events a transaction records are written at its end, all in one
// statement, with their fan-out to a webhook delivery for every enabled endpoint subscribed to the
// type whose API version shows it. Db.transaction opens an outbox for each transaction and flushes it just before COMMIT, so
// a change that rolls back leaves no event and one that commits always has its events; a caller
// that ends its transaction with a statement of its own (the idempotency layer storing the
// response) folds them into that statement instead, which spares the transaction a round trip.
import type { Queryable } from './db.ts';

export interface OutboxEvent {
  id: string;
  type: string;
  objectType: string;
  /** The record of the resource, as the change committed it. */
  object: object;
  /** The first API version that shows the type: endpoints of older versions get no delivery of it. */
  since: number;
  /** Who made the change (src/core/actor.ts). */
  actor: object;
}

const outboxes = new WeakMap<Queryable, OutboxEvent[]>();
/** Transactions whose outbox was taken with events in it: once they commit, the dispatchers are told. */
const wroteEvents = new WeakSet<Queryable>();
const committedListeners = new Set<() => void>();

/** Db.transaction: the events of this transaction, until its end. */
export function openOutbox(tx: Queryable): void {
  outboxes.set(tx, []);
  wroteEvents.delete(tx);
}

/** Defers the event to the end of tx's transaction; false when tx has no outbox (write it now). */
export function deferToOutbox(tx: Queryable, event: OutboxEvent): boolean {
  const outbox = outboxes.get(tx);
  if (!outbox) return false;
  outbox.push(event);
  return true;
}

/** The events tx recorded and no statement has written yet; the outbox is empty afterwards. */
export function takeOutbox(tx: Queryable): OutboxEvent[] {
  const events = outboxes.get(tx) ?? [];
  if (events.length > 0) {
    outboxes.set(tx, []);
    wroteEvents.add(tx);
  }
  return events;
}

/**
 * `WITH …` writing events and their deliveries, to put before a statement whose parameters take
 * the first `firstParam - 1` places; empty without events.
 */
export function outboxCte(events: readonly OutboxEvent[], firstParam: number): { sql: string; params: unknown[] } {
  if (events.length === 0) return { sql: '', params: [] };
  const rows = events.map((e) => ({ id: e.id, type: e.type, object_type: e.objectType, object: e.object, since: e.since, actor: e.actor }));
  return {
    sql: `WITH outbox_input AS (
        SELECT * FROM ROWS FROM (jsonb_to_recordset($${firstParam}::jsonb) AS (id text, type text, object_type text, object jsonb, since integer, actor jsonb))
          WITH ORDINALITY AS e(id, type, object_type, object, since, actor, n)
      ), outbox_events AS (
        INSERT INTO events (id, type, object_type, object, actor)
        SELECT id, type, object_type, object, actor FROM outbox_input ORDER BY n
      ), outbox_deliveries AS (
        INSERT INTO webhook_deliveries (endpoint_id, event_id)
        SELECT w.id, e.id FROM outbox_input e JOIN webhook_endpoints w
          ON NOT w.disabled AND w.api_version >= e.since AND (w.enabled_events @> ARRAY[e.type] OR w.enabled_events @> ARRAY['*'])
      ) `,
    params: [JSON.stringify(rows)],
  };
}

/** Writes what is left in tx's outbox: before COMMIT, or at once for a statement outside a transaction. */
export async function writeEvents(tx: Queryable, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  const { sql, params } = outboxCte(events, 1);
  await tx.query(`${sql}SELECT 1`, params);
}

/** Db.transaction, just before COMMIT. */
export function flushOutbox(tx: Queryable): Promise<void> {
  return writeEvents(tx, takeOutbox(tx));
}

/**
 * Db.transaction, just after COMMIT: when tx wrote events, the listeners are told (the webhook
 * dispatcher of this process wakes at once, and wakes the others: src/webhooks/wake-ups.ts). A
 * hint only: a process told nothing still finds the work when it next polls.
 */
export function outboxCommitted(tx: Queryable): void {
  if (!wroteEvents.delete(tx)) return;
  for (const listener of committedListeners) listener();
}

/** Calls listener after each commit of a transaction that wrote events, in this process; returns how to stop. */
export function onEventsCommitted(listener: () => void): () => void {
  committedListeners.add(listener);
  return () => committedListeners.delete(listener);
}
