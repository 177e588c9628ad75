// The authorization server in the Fastify process: oidc-provider mounted at /oauth (rebuilt when
// signing keys rotate), the JWKS, userinfo, and the login and consent pages.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { Clock } from '../core/clock.ts';
import type { Db } from '../db/db.ts';
import type { Counters } from '../http/rate-limit/counters.ts';
import type { DpopCheck } from '../http/token-binding.ts';
import type { ClientMetadata } from './clients.rules.ts';
import { interactionRoutes } from './interactions.routes.ts';
import { registerJwksRoute } from './jwks.routes.ts';
import { ensureActiveSigningKey } from './keys.store.ts';
import { createOwnTokenVerifier } from './own-token-verifier.ts';
import { createRotatingProvider } from './rotating-provider.ts';
import { mountProvider } from './provider-mount.ts';
import { ensureCookieKeys } from './secrets.store.ts';
import { userinfoRoutes } from './userinfo.routes.ts';

const KEY_CHECK_INTERVAL_MS = 5_000;

export async function registerAuthorizationServer(
  app: FastifyInstance,
  config: Config,
  db: Db,
  {
    counters,
    dpop,
    keyCheckIntervalMs = KEY_CHECK_INTERVAL_MS,
    staticClients,
    now,
  }: {
    counters: Counters;
    /** The DPoP proofs' checks, shared with the API (src/http/token-binding.ts). */
    dpop: DpopCheck;
    keyCheckIntervalMs?: number;
    /** Clients the configuration declares (the /docs and /console clients): docs-client.ts, console-client.ts. */
    staticClients: ClientMetadata[];
    now?: Clock;
  },
): Promise<void> {
  await ensureActiveSigningKey(db);
  const cookieKeys = await ensureCookieKeys(db);
  const provider = await createRotatingProvider({
    config,
    db,
    cookieKeys,
    keyCheckIntervalMs,
    staticClients,
    now,
  });
  await mountProvider(app, { config, provider, counters });
  registerJwksRoute(app, db);
  await app.register(userinfoRoutes, {
    config,
    db,
    verifier: createOwnTokenVerifier(db, config),
    dpop,
    // The provider knows every client, those of the configuration (the /docs and /console clients) too.
    findRedirectUris: async (clientId) => (await provider.latest().Client.find(clientId))?.redirectUris ?? [],
  });
  await app.register(interactionRoutes, { provider: provider.latest, db, csrfKey: cookieKeys[0]!, counters });
}
