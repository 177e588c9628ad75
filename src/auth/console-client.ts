// The public client the staff console signs in with (src/http/console-page.ts): authorization code
// + PKCE, refresh tokens (rotated on every use, src/auth/provider.ts), its redirect URI the
// console's own. Declared by the configuration like the /docs client, so the redirect URI follows
// PUBLIC_URL; on by default everywhere, ORDERPAY_CONSOLE=false turns it off with the page.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { SCOPES } from '../core/scopes.ts';
import {
  CONSOLE_API_VERSION,
  CONSOLE_CALLBACK_PATH,
  CONSOLE_CLIENT_ID,
  CONSOLE_SIGNED_OUT_PATH,
  type ConsoleSignIn,
} from '../http/console-page.ts';
import { buildPublicClientMetadata, ClientMetadataError, type ClientMetadata } from './clients.rules.ts';

export { CONSOLE_CLIENT_ID };

/**
 * openid for an ID token (who signed in, and the hint RP-Initiated Logout takes), email to show it,
 * and every API scope: a customer is granted none of the staff-only ones (src/auth/consent.ts), so
 * the token response's scope tells the console who it has. No offline_access: refresh tokens come
 * with the refresh_token grant alone (provider.ts), and end with the session, as a console's should.
 */
const CONSOLE_SCOPES = ['openid', 'email', ...SCOPES];

/**
 * The console client's metadata, or undefined when it is not offered: turned off, or a PUBLIC_URL
 * no redirect URI may use (plain http off loopback, which is logged: the page then says it cannot
 * sign in). A process without the authorization server still describes it, for the page it serves
 * signs in at ORDERPAY_ISSUER, which must offer the same client.
 */
export function buildConsoleClient(config: Config, log: FastifyBaseLogger): ClientMetadata | undefined {
  if (!config.console) return undefined;
  try {
    const metadata = buildPublicClientMetadata(CONSOLE_CLIENT_ID, {
      name: 'the orderpay staff console',
      redirectUris: [`${config.publicUrl}${CONSOLE_CALLBACK_PATH}`],
      scopes: CONSOLE_SCOPES,
      apiVersion: CONSOLE_API_VERSION,
    });
    if (!config.servers.authorization) {
      log.info(
        `/console signs in at ${config.issuer}, which this process does not serve: that authorization server must offer ${CONSOLE_CLIENT_ID} (ORDERPAY_CONSOLE)`,
      );
    }
    return {
      ...metadata,
      post_logout_redirect_uris: [`${config.publicUrl}${CONSOLE_SIGNED_OUT_PATH}`],
      api_version: CONSOLE_API_VERSION,
    };
  } catch (error) {
    if (!(error instanceof ClientMetadataError)) throw error;
    log.warn(`/console cannot sign in (${error.message}); set PUBLIC_URL to the https URL it is served at.`);
    return undefined;
  }
}

/** What the console page needs to know of the client to sign in with it. */
export function describeConsoleSignIn(client: ClientMetadata | undefined): ConsoleSignIn | null {
  if (!client) return null;
  return {
    clientId: client.client_id,
    redirectUri: (client.redirect_uris as string[])[0]!,
    postLogoutRedirectUri: (client.post_logout_redirect_uris as string[])[0]!,
    scope: String(client.scope),
  };
}
