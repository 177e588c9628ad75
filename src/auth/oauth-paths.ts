// The paths of the authorization server: the provider's under /oauth, and its RFC 8414 metadata;
// and which of them answer CORS themselves.

const OAUTH_PATH = /^\/(?:oauth(?:[/?]|$)|\.well-known\/oauth-authorization-server\/oauth(?:[/?]|$))/;

/** Whether a request URL (path and query) is the authorization server's. */
export function isAuthorizationServerPath(url: string): boolean {
  return OAUTH_PATH.test(url);
}

/** OpenID Connect Core §5.3: orderpay's own route (src/auth/userinfo.routes.ts), which discovery advertises. */
export const USERINFO_PATH = '/oauth/userinfo';

const USERINFO_URL = /^\/oauth\/userinfo(?:\?|$)/;

/**
 * Whether the authorization server sets a request's CORS headers itself: /oauth but userinfo, a
 * Fastify route under the API's CORS (src/http/cors.ts), which refines it per client
 * (src/auth/userinfo.routes.ts).
 */
export function setsOwnCorsHeaders(url: string): boolean {
  return isAuthorizationServerPath(url) && !USERINFO_URL.test(url);
}
