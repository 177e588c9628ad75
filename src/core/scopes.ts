// The API's OAuth scopes: what a token may do. The authorization server offers them; the routes
// require them (docs/api.md "Scopes").
export const SCOPES = ['orders:read', 'orders:write', 'products:write', 'payments:read', 'payments:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** Scopes only staff users (and service clients) may hold; a customer is never granted them. */
export const STAFF_ONLY_SCOPES: ReadonlySet<string> = new Set<Scope>(['products:write']);
