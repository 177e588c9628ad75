// The API version that brought each event type (docs/webhooks.md, "Event types"): a reader or an
// endpoint of an older version neither lists nor receives it, as it never sees the statuses it is
// about. Types not named here are v1's. Kept below the events domain and the edge, which both read it.

const SINCE: Readonly<Record<string, number>> = {
  'payment.requires_action': 3,
  'payment.canceled': 3,
  'payment.needs_attention': 3,
  'refund.failed': 3,
};

/** The first API version that shows events of this type. */
export function eventTypeSince(type: string): number {
  return SINCE[type] ?? 1;
}

/** Whether an API version shows events of this type. */
export function showsEventType(type: string, apiVersion: number): boolean {
  return eventTypeSince(type) <= apiVersion;
}

/** The event types a version after apiVersion brought (each subscribable): what apiVersion never shows. */
export function eventTypesAfter(apiVersion: number): string[] {
  return Object.keys(SINCE).filter((type) => eventTypeSince(type) > apiVersion);
}

/**
 * The first API version that shows an event: its type's, or the later one a webhook endpoint it
 * carries is pinned to (that endpoint is not there for an earlier version, nor are events about it).
 */
export function eventSince(type: string, object: object): number {
  const pinned =
    type.startsWith('webhook_endpoint.') && 'apiVersion' in object && typeof object.apiVersion === 'number' ? object.apiVersion : 1;
  return Math.max(eventTypeSince(type), firstVersionShowingEndpoint(pinned));
}

/**
 * The latest version a webhook endpoint may be pinned to and be there for a request of apiVersion:
 * its own, or v2 for v1, whose contract was written when v2 was the latest (docs/webhooks.md, "Versions").
 */
export function endpointVersionsShownTo(apiVersion: number): number {
  return Math.max(apiVersion, 2);
}

/** The first version that shows a webhook endpoint pinned to pinnedTo. */
function firstVersionShowingEndpoint(pinnedTo: number): number {
  return pinnedTo <= endpointVersionsShownTo(1) ? 1 : pinnedTo;
}
