// Webhook endpoint rules, pure: which event types an endpoint may subscribe to, when a replacement
// changes nothing, which events an endpoint may be sent again, how long a rotated secret lives,
// why an endpoint is disabled, and what a retired API version allows.
import { DomainError, type FieldError } from '../core/errors.ts';
import { eventSince, eventTypeSince, showsEventType } from '../core/event-versions.ts';
import type { SortKey } from '../core/paging.ts';
import { ALL_EVENTS, EVENT_TYPE_NAMES, type EventType } from '../events/events.rules.ts';

/** The type of the test event a ping sends: only ever to the endpoint pinged, never subscribed to. */
export const PING_EVENT_TYPE: EventType = 'webhook_endpoint.ping';

/** The event types an endpoint may list in enabledEvents (besides the wildcard "*"). */
export const SUBSCRIBABLE_EVENT_TYPES: readonly string[] = EVENT_TYPE_NAMES.filter((type) => type !== PING_EVENT_TYPE);

/** After a rotation, the previous secret still signs deliveries for this long (docs/webhooks.md). */
export const PREVIOUS_SECRET_LIFETIME_HOURS = 24;

export const WEBHOOK_ENDPOINT_SORT_KEYS = ['createdAt', 'id'] as const;
export type WebhookEndpointSortKey = (typeof WEBHOOK_ENDPOINT_SORT_KEYS)[number];

export type DeliverySortKey = 'createdAt' | 'id';
/** An endpoint's delivery log has one order, newest first. */
export const DELIVERIES_NEWEST_FIRST: SortKey<DeliverySortKey>[] = [
  { field: 'createdAt', descending: true },
  { field: 'id', descending: true },
];

/** The attempts a delivery shows: its latest ones, when a long retry schedule made more. */
export const MAX_ATTEMPTS_SHOWN = 50;
/** Characters of an attempt's response body shown (the dispatcher keeps its first 1 KiB) and of its error. */
export const MAX_RESPONSE_BODY_SHOWN = 1024;
export const MAX_ERROR_SHOWN = 1000;

export const DELIVERY_STATES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * Why a disabled endpoint is: a POST or PUT said so (staff or a service client), every attempt
 * failed for 5 days (the dispatcher), or its API version reached its sunset (decision 0117).
 */
export const DISABLED_REASONS = ['requested', 'failing', 'api_version_retired'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/**
 * The reason a disabled endpoint shows: the one stored, else 'failing'. The dispatcher's automatic
 * disable (deliveries.store.ts disableEndpoint) stores 'failing'; none is stored in the disable
 * events recorded before reasons were, and every one of them was the dispatcher's.
 */
export function shownDisabledReason(endpoint: { disabled: boolean; disabledReason?: DisabledReason | null }): DisabledReason | null {
  return endpoint.disabled ? (endpoint.disabledReason ?? 'failing') : null;
}

/**
 * The reason to store after a manager's write: none once enabled; 'requested' when the write
 * disables it; the one it had when it was disabled already (a failing endpoint whose description
 * changed is still disabled for failing).
 */
export function disabledReasonAfter(
  current: { disabled: boolean; disabledReason: DisabledReason | null } | undefined,
  disabled: boolean,
): DisabledReason | null {
  if (!disabled) return null;
  return current?.disabled ? current.disabledReason : 'requested';
}

/**
 * Step: nothing is newly pinned to a retired API version, and an endpoint pinned to one is not
 * enabled: its receiver reads that version's objects, which are no longer made, and moving it to
 * a later one hands it objects of another shape (v2's money), which only its manager can judge
 * (decision 0117). Still allowed: editing it while it stays disabled, or pinning it to a version
 * that is not retired, enabled or not, in the same request.
 */
export function assertNotPinnedToRetired(
  fields: { apiVersion: number; disabled: boolean },
  current: { apiVersion: number } | undefined,
  retiredVersions: readonly number[],
): void {
  const version = fields.apiVersion;
  if (!retiredVersions.includes(version)) return;
  if (current?.apiVersion !== version) {
    throw new DomainError(
      'WEBHOOK_ENDPOINT_API_VERSION_RETIRED',
      `API v${version} was retired: no endpoint can be pinned to it. Pin the endpoint to a later version, whose objects its receiver reads.`,
      { errors: [{ pointer: '/apiVersion', detail: `API v${version} was retired` }] },
    );
  }
  if (!fields.disabled) {
    throw new DomainError(
      'WEBHOOK_ENDPOINT_API_VERSION_RETIRED',
      `The endpoint is pinned to API v${version}, which was retired: it cannot be enabled unless the same request pins it to a later version.`,
      { errors: [{ pointer: '/disabled', detail: `an endpoint pinned to the retired API v${version} cannot be enabled` }] },
    );
  }
}

/**
 * Step: the enabledEvents of a request are types the endpoint's API version shows and that can be
 * subscribed to, or the wildcard alone; else a 400 naming each entry.
 */
export function assertEnabledEvents(enabledEvents: readonly string[], apiVersion: number): void {
  const errors: FieldError[] = [];
  enabledEvents.forEach((type, index) => {
    const pointer = `/enabledEvents/${index}`;
    if (type === ALL_EVENTS) {
      if (enabledEvents.length > 1) errors.push({ pointer, detail: `"${ALL_EVENTS}" subscribes to every type and stands alone` });
    } else if (type === PING_EVENT_TYPE) {
      errors.push({ pointer, detail: `"${type}" is sent by a ping to the endpoint pinged only; it cannot be subscribed to` });
    } else if (!SUBSCRIBABLE_EVENT_TYPES.includes(type)) {
      errors.push({ pointer, detail: `"${type}" is not an event type` });
    } else if (!showsEventType(type, apiVersion)) {
      errors.push({ pointer, detail: `"${type}" is an event of API v${eventTypeSince(type)}; the endpoint's apiVersion is ${apiVersion}` });
    }
  });
  if (errors.length > 0) {
    throw new DomainError('REQUEST_BODY_INVALID', errors.map((e) => `${e.pointer} ${e.detail}`).join('; '), { errors });
  }
}

/**
 * Whether an endpoint of apiVersion subscribing to enabledEvents receives events of type (a ping:
 * never, "*" included; a type of a later API version: never). The outbox fans out by the same rule
 * (src/db/outbox.ts).
 */
export function subscribesTo(enabledEvents: readonly string[], type: string, apiVersion: number): boolean {
  return (
    type !== PING_EVENT_TYPE && showsEventType(type, apiVersion) && (enabledEvents.includes(ALL_EVENTS) || enabledEvents.includes(type))
  );
}

interface EndpointSettings {
  url: string;
  enabledEvents: readonly string[];
  apiVersion: number;
  description: string;
  disabled: boolean;
}

/** Same-content replacement changes nothing (PUT is idempotent); the order of enabledEvents does not matter. */
export function isSameEndpoint(a: EndpointSettings, b: EndpointSettings): boolean {
  const events = (list: readonly string[]) => [...list].sort().join(' ');
  return (
    a.url === b.url &&
    events(a.enabledEvents) === events(b.enabledEvents) &&
    a.apiVersion === b.apiVersion &&
    a.description === b.description &&
    a.disabled === b.disabled
  );
}

/**
 * Step: an event may be sent again to an endpoint that subscribes to its type now, or that it was
 * delivered to before (a ping, or a type the endpoint has since dropped); nothing else is sent to
 * an endpoint that did not ask for it (another endpoint's ping carries that endpoint's settings).
 */
export function assertRedeliverable(
  event: { id: string; type: string; object?: object },
  endpoint: { enabledEvents: readonly string[]; apiVersion: number },
  deliveredBefore: boolean,
): void {
  const shown = eventSince(event.type, event.object ?? {}) <= endpoint.apiVersion;
  if (deliveredBefore || (shown && subscribesTo(endpoint.enabledEvents, event.type, endpoint.apiVersion))) return;
  const detail = `Event ${event.id} is of type ${event.type}, which the endpoint does not subscribe to, and was never delivered to it.`;
  throw new DomainError('WEBHOOK_EVENT_NOT_SUBSCRIBED', detail, {
    errors: [{ pointer: '/eventId', detail: `the endpoint does not subscribe to ${event.type}` }],
  });
}
