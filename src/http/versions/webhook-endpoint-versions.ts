// v3: a webhook endpoint can be pinned to v3 and subscribe to its event types; created with an earlier version, an endpoint is pinned to v2 unless the request says otherwise. An endpoint pinned to
// a later version than a request's is not there for that request (404, not listed), nor are the
// events about it (docs/webhooks.md, "Versions"): its apiVersion and enabledEvents hold values the
// earlier version cannot show, as a payment in progress is not there for v2.
import { type TObject, type TSchema, Type } from 'typebox';
import { eventTypesAfter } from '../../core/event-versions.ts';
import { type JsonObject, reshape, type VersionChange } from './version-change.ts';

/** The last version before this change. */
const BEFORE = 2;

/** A property's schema with some keywords changed; optional if it was (TypeBox marks that with a non-enumerable key). */
function withKeywords(schema: TSchema, keywords: Record<string, unknown>): TSchema {
  const next = Type.Unsafe({ ...schema, ...keywords });
  return '~optional' in schema ? Type.Optional(next) : next;
}

/** apiVersion at most BEFORE; enabledEvents at most as many as the subscribable types BEFORE shows. */
function endpointBefore(newer: TObject): TObject {
  const eventTypes = newer.properties.enabledEvents as TSchema & { items: TSchema & { enum: string[] } };
  return reshape(newer, (p) => ({
    ...p,
    apiVersion: withKeywords(p.apiVersion!, {
      maximum: BEFORE,
      description: `The API version the event objects are rendered in, as GET would show them in that version (default ${BEFORE}).`,
    }),
    enabledEvents: withKeywords(p.enabledEvents!, {
      maxItems: (p.enabledEvents as TSchema & { maxItems: number }).maxItems - eventTypesAfter(BEFORE).length,
      items: withKeywords(eventTypes.items, { enum: eventTypes.items.enum.filter((type) => !eventTypesAfter(BEFORE).includes(type)) }),
    }),
  }));
}

/** Nothing to reshape: an endpoint an earlier version sees is one of its own. */
const same = (body: JsonObject) => body;

export const webhookEndpointVersions: VersionChange = {
  version: 3,
  description:
    'Webhook endpoints can be pinned to v3 (`"apiVersion": 3`, the default for a new endpoint) and subscribe to its event types; created with an earlier version, an endpoint is pinned to v2 unless the request says otherwise. An endpoint pinned to a later version than the request is not there for it (404, not listed), nor are events about it.',
  resources: {
    WebhookEndpoint: { schema: endpointBefore, downgrade: same },
    WebhookEndpointWithSecret: { schema: endpointBefore, downgrade: same },
  },
  requests: {
    WebhookEndpointBody: { schema: endpointBefore, upgrade: same },
    // Before v3 a new endpoint was pinned to the latest version then, v2: it still is.
    CreateWebhookEndpointBody: { schema: endpointBefore, upgrade: (body) => ({ apiVersion: BEFORE, ...body }) },
  },
};
