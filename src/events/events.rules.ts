// The events orderpay records (docs/webhooks.md "Event types"): each names the resource it is about,
// whose representation at the moment of the change the event carries.

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
  'refund.succeeded': 'refund',
  'product.created': 'product',
  'product.updated': 'product',
  'webhook_endpoint.disabled': 'webhook_endpoint',
  'webhook_endpoint.ping': 'webhook_endpoint',
} as const satisfies Record<string, EventObjectType>;
export type EventType = keyof typeof EVENT_TYPES;

export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];

/** An endpoint subscribes to a list of types, or to every type with this wildcard. */
export const ALL_EVENTS = '*';
