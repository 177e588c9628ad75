// Which browser origins may call the authorization server's endpoints for a client (the token,
// revocation, introspection and userinfo endpoints; docs/api.md, "Browser apps (CORS)").
import type { Config } from '../config.ts';
import { isAllowedOrigin } from '../http/cors.ts';

/**
 * An origin on the allow-list (ORDERPAY_CORS_ORIGINS) that is also one of the client's redirect
 * URIs' (where its pages run); and our own, whose requests are not cross-origin at all (browsers
 * send Origin on a same-origin POST too).
 */
export function isClientOrigin(config: Config, origin: string, redirectUris: readonly string[]): boolean {
  if (origin === new URL(config.publicUrl).origin) return true;
  return isAllowedOrigin(config.cors, origin) && redirectUris.some((uri) => URL.parse(uri)?.origin === origin);
}
