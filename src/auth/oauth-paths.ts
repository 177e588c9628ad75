// The paths of the authorization server: the provider's under /oauth, and its RFC 8414 metadata.

const OAUTH_PATH = /^\/(?:oauth(?:[/?]|$)|\.well-known\/oauth-authorization-server\/oauth(?:[/?]|$))/;

/** Whether a request URL (path and query) is the authorization server's. */
export function isAuthorizationServerPath(url: string): boolean {
  return OAUTH_PATH.test(url);
}
