// The API's OAuth scopes: what a token may do. The authorization server offers them; the routes
// require them (docs/api.md "Scopes").
export const SCOPES = [
  'orders:read',
  'orders:write',
  'products:write',
  'payments:read',
  'payments:write',
  'payments:refund',
  'events:read',
  'webhooks:read',
  'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What gives the power to refund (a refund, or cancelling a paid order): payments:refund, or
 * payments:write as it did before payments:refund existed, so that no client of v1, v2 or v3 breaks
 * (docs/decisions/0129-refunds-have-their-own-scope.md). The first is the one to ask for.
 */
export const REFUND_SCOPES: readonly [Scope, ...Scope[]] = ['payments:refund', 'payments:write'];

/** Scopes only staff users (and service clients) may hold; a customer is never granted them. */
export const STAFF_ONLY_SCOPES: ReadonlySet<string> = new Set<Scope>([
  'products:write',
  'payments:refund',
  'events:read',
  'webhooks:read',
  'webhooks:write',
]);

/**
 * What each scope allows, for developers (the OpenAPI documents and docs/api.md); the consent
 * page says it to the person signing in (src/auth/pages.ts).
 */
export const SCOPE_GRANTS: Readonly<Record<Scope, string>> = {
  'orders:read': "Read orders, their items and a user's orders: a customer their own, staff and service clients every one.",
  'orders:write': 'Place, change and delete orders: a customer their own, staff and service clients every one.',
  'products:write': 'Create and replace products. Staff users and service clients only: never granted to a customer.',
  'payments:read': 'Read payments and refunds: a customer those of their own orders, staff and service clients every one.',
  'payments:write':
    'Pay orders (with an Idempotency-Key). For staff users and service clients it also still refunds, as before payments:refund existed (docs/decisions/0129-refunds-have-their-own-scope.md).',
  'payments:refund':
    'Refund payments, and cancel paid orders (which refunds them). Staff users and service clients only: never granted to a customer.',
  'events:read': "Read the event log (every customer's orders and payments as they changed). Staff users and service clients only.",
  'webhooks:read': 'Read webhook endpoints and their delivery logs. Staff users and service clients only.',
  'webhooks:write': 'Create, change, delete and test webhook endpoints and rotate their secrets. Staff users and service clients only.',
};
