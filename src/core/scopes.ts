// The API's OAuth scopes: what a token may do. The authorization server offers them; the routes
// require them (docs/api.md "Scopes").
export const SCOPES = [
  'orders:read',
  'orders:write',
  'products:write',
  'payments:read',
  'payments:write',
  'events:read',
  'webhooks:read',
  'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Scopes only staff users (and service clients) may hold; a customer is never granted them. */
export const STAFF_ONLY_SCOPES: ReadonlySet<string> = new Set<Scope>(['products:write', 'events:read', 'webhooks:read', 'webhooks:write']);

/**
 * What each scope allows, for developers (the OpenAPI documents and docs/api.md); the consent
 * page says it to the person signing in (src/auth/pages.ts).
 */
export const SCOPE_GRANTS: Readonly<Record<Scope, string>> = {
  'orders:read': "Read orders, their items and a user's orders: a customer their own, staff and service clients every one.",
  'orders:write': 'Place, change and delete orders: a customer their own, staff and service clients every one.',
  'products:write': 'Create and replace products. Staff users and service clients only: never granted to a customer.',
  'payments:read': 'Read payments and refunds: a customer those of their own orders, staff and service clients every one.',
  'payments:write': 'Pay orders (with an Idempotency-Key); refunds too for staff users and service clients.',
  'events:read': "Read the event log (every customer's orders and payments as they changed). Staff users and service clients only.",
  'webhooks:read': 'Read webhook endpoints and their delivery logs. Staff users and service clients only.',
  'webhooks:write': 'Create, change, delete and test webhook endpoints and rotate their secrets. Staff users and service clients only.',
};
