// An endpoint's delivery log and the deliveries a caller asks for: an event sent again, a ping.
// Both only add a pending delivery; the dispatcher sends it like any other.
import { actorOf } from '../core/actor.ts';
import { readReport, type Report, type ReportQuery } from '../core/day-range.ts';
import { DomainError } from '../core/errors.ts';
import { planPage, toCollection, type Collection, type PageRequest } from '../core/paging.ts';
import type { Principal } from '../core/principal.ts';
import type { Db, Queryable } from '../db/db.ts';
import { type DailyWebhookDeliveryRecord, selectDailyWebhookDeliveries } from './daily-webhook-deliveries.store.ts';
import {
  findDelivery,
  findRedeliveryCandidate,
  insertDelivery,
  recordPingDelivery,
  selectAttempts,
  selectDeliveries,
  type DeliveryFilters,
  type WebhookAttemptRecord,
  type WebhookDeliveryRecord,
} from './delivery-log.store.ts';
import { assertRedeliverable, DELIVERIES_NEWEST_FIRST } from './endpoints.rules.ts';
import type { WebhookEndpointRecord } from './endpoints.store.ts';
import { assertWebhookManager, loadWebhookEndpoint } from './endpoints.service.ts';

/** A delivery with its attempts, oldest first. */
export interface WebhookDeliveryWithAttempts extends WebhookDeliveryRecord {
  attempts: WebhookAttemptRecord[];
}

async function withAttempts(db: Queryable, deliveries: WebhookDeliveryRecord[]): Promise<WebhookDeliveryWithAttempts[]> {
  const attempts = await selectAttempts(
    db,
    deliveries.map((d) => d.id),
  );
  return deliveries.map((delivery) => ({ ...delivery, attempts: attempts.filter((a) => a.deliveryId === delivery.id) }));
}

/** Step: a disabled endpoint is sent nothing, a ping or a redelivery included. */
function assertEnabled(endpoint: WebhookEndpointRecord): void {
  if (endpoint.disabled) {
    throw new DomainError(
      'WEBHOOK_ENDPOINT_DISABLED',
      `Webhook endpoint ${endpoint.id} is disabled; enable it (PUT with "disabled": false) before sending it events.`,
    );
  }
}

export interface ListDeliveriesCommand extends DeliveryFilters {
  endpointId: number;
  /** The request's API version: an endpoint pinned to a later one is not there for it. */
  shownTo: number;
  page: PageRequest;
}

/** One endpoint's deliveries, newest first: never another endpoint's. */
export async function listDeliveries(
  db: Queryable,
  principal: Principal,
  command: ListDeliveriesCommand,
): Promise<Collection<WebhookDeliveryWithAttempts>> {
  assertWebhookManager(principal);
  const filters = { state: command.state, eventId: command.eventId };
  const plan = planPage(command.page, 'webhook-deliveries', { ...filters, endpointId: command.endpointId }, DELIVERIES_NEWEST_FIRST);
  await loadWebhookEndpoint(db, command.endpointId, command.shownTo);
  const read = await selectDeliveries(db, command.endpointId, filters, plan);
  return toCollection({ ...read, rows: await withAttempts(db, read.rows) }, plan);
}

export async function getDelivery(
  db: Queryable,
  principal: Principal,
  endpointId: number,
  deliveryId: number,
  shownTo: number,
): Promise<WebhookDeliveryWithAttempts> {
  assertWebhookManager(principal);
  await loadWebhookEndpoint(db, endpointId, shownTo);
  const delivery = await findDelivery(db, endpointId, deliveryId);
  if (!delivery) {
    throw new DomainError('WEBHOOK_DELIVERY_NOT_FOUND', `Webhook endpoint ${endpointId} has no delivery ${deliveryId}.`);
  }
  const [shown] = await withAttempts(db, [delivery]);
  return shown!;
}

/** A new pending delivery of an event the endpoint subscribes to, or was delivered before. */
export async function redeliverEvent(
  db: Db,
  principal: Principal,
  endpointId: number,
  eventId: string,
  shownTo: number,
): Promise<WebhookDeliveryWithAttempts> {
  assertWebhookManager(principal);
  return db.transaction(async (tx) => {
    // Locked: a concurrent delete or disabling waits for this delivery, or this waits for it.
    const endpoint = await loadWebhookEndpoint(tx, endpointId, shownTo, true);
    assertEnabled(endpoint);
    const event = await findRedeliveryCandidate(tx, endpointId, eventId);
    if (!event) {
      throw new DomainError('EVENT_NOT_FOUND', `Event ${eventId} does not exist.`, {
        errors: [{ pointer: '/eventId', detail: 'no event has this id' }],
      });
    }
    assertRedeliverable(event, endpoint, event.deliveredBefore);
    return { ...(await insertDelivery(tx, endpointId, eventId)), attempts: [] };
  });
}

/** A webhook_endpoint.ping event, delivered to this endpoint only. */
export async function pingWebhookEndpoint(
  db: Db,
  principal: Principal,
  endpointId: number,
  shownTo: number,
): Promise<WebhookDeliveryWithAttempts> {
  assertWebhookManager(principal);
  return db.transaction(async (tx) => {
    const endpoint = await loadWebhookEndpoint(tx, endpointId, shownTo, true);
    assertEnabled(endpoint);
    return { ...(await recordPingDelivery(tx, endpoint, actorOf(principal))), attempts: [] };
  });
}

/** Deliveries per UTC day and endpoint, by state, with their attempts: staff and service clients only. */
export function dailyWebhookDeliveries(
  db: Queryable,
  principal: Principal,
  query: ReportQuery,
  now: Date,
): Promise<Report<DailyWebhookDeliveryRecord>> {
  assertWebhookManager(principal);
  return readReport(query, now, (filter) => selectDailyWebhookDeliveries(db, filter));
}
