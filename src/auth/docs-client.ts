// The public client /docs signs in with (src/http/docs-page.ts): authorization code + PKCE, its
// redirect URI the page's own. The provider knows it from the configuration, not the database, so
// the redirect URI follows PUBLIC_URL wherever the process serves, and a production deployment has
// it only when ORDERPAY_DOCS_CLIENT says so.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { LATEST_API_VERSION } from '../core/api-versions.ts';
import { SCOPES } from '../core/scopes.ts';
import { DOCS_CLIENT_ID, DOCS_REDIRECT_PATH } from '../http/docs-page.ts';
import { buildPublicClientMetadata, ClientMetadataError, type ClientMetadata } from './clients.rules.ts';

/**
 * The docs client's metadata, or undefined when it is not offered: turned off, no authorization
 * server in this process, or a PUBLIC_URL no redirect URI may use (plain http off loopback, which
 * is logged: the page then takes pasted tokens only).
 */
export function buildDocsClient(config: Config, log: FastifyBaseLogger): ClientMetadata | undefined {
  if (!config.docsClient || !config.servers.authorization) return undefined;
  try {
    const metadata = buildPublicClientMetadata(DOCS_CLIENT_ID, {
      name: 'the orderpay API reference',
      redirectUris: [`${config.publicUrl}${DOCS_REDIRECT_PATH}`],
      scopes: [...SCOPES],
    });
    // A page that tries requests needs no refresh token (one in a browser tab is one more to leak):
    // when the access token expires, Authorize again signs in through the session.
    return { ...metadata, grant_types: ['authorization_code'], api_version: LATEST_API_VERSION };
  } catch (error) {
    if (!(error instanceof ClientMetadataError)) throw error;
    log.warn(`/docs cannot sign in (${error.message}); set PUBLIC_URL to the https URL it is served at. Pasted access tokens still work.`);
    return undefined;
  }
}
