// Mounts the authorization server (oidc-provider) at /oauth in the Fastify process, with the
// login and consent pages. Signing keys live in the database: when another process rotates them
// (orderpay keys rotate), every process notices within KEY_CHECK_INTERVAL_MS and rebuilds its
// provider with the new key set, so all of them sign with the new key and publish both.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import middie from '@fastify/middie';
import type Provider from 'oidc-provider';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { interactionRoutes } from './interactions.routes.ts';
import { ensureActiveSigningKey, listPublishedKeys, listSigningJwks } from './keys.store.ts';
import { createProvider } from './provider.ts';
import { limitOAuthRequests } from './rate-limits.ts';
import { ensureCookieKeys } from './secrets.store.ts';

const KEY_CHECK_INTERVAL_MS = 5_000;

export async function registerAuthorizationServer(
  app: FastifyInstance,
  config: Config,
  db: Db,
  { keyCheckIntervalMs = KEY_CHECK_INTERVAL_MS, now = () => new Date() }: { keyCheckIntervalMs?: number; now?: () => Date } = {},
): Promise<void> {
  await ensureActiveSigningKey(db);
  const cookieKeys = await ensureCookieKeys(db);
  let signing = await listSigningJwks(db);
  let provider: Provider = createProvider({ config, db, signingKeys: signing.keys, cookieKeys });
  let callback = provider.callback();
  let checkedAt = Date.now();

  async function currentProvider(): Promise<Provider> {
    if (Date.now() - checkedAt < keyCheckIntervalMs) return provider;
    checkedAt = Date.now();
    const latest = await listSigningJwks(db);
    if (latest.fingerprint !== signing.fingerprint) {
      signing = latest;
      provider = createProvider({ config, db, signingKeys: latest.keys, cookieKeys });
      callback = provider.callback();
    }
    return provider;
  }

  // The provider builds every URL it publishes (discovery, redirects) from the request's host
  // and scheme; both are pinned to PUBLIC_URL so no client header can change them.
  const publicUrl = new URL(config.publicUrl);
  const pinToPublicUrl = (req: IncomingMessage) => {
    req.headers.host = publicUrl.host;
    req.headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
    delete req.headers['x-forwarded-host'];
  };
  const clientIp = (req: IncomingMessage) => (req as { ip?: string }).ip ?? req.socket.remoteAddress ?? 'unknown';

  await app.register(middie);
  app.use('/oauth', function serveAuthorizationServer(req, res, next) {
    limitOAuthRequests(db, clientIp(req), res, now())
      .then((limited) => {
        if (limited) return;
        pinToPublicUrl(req);
        // The interaction pages and the JWKS are Fastify routes; everything else is the provider's.
        if (req.url?.startsWith('/interaction/') || req.url === '/jwks') return next();
        // RFC 6749 §5.1: token responses carry Pragma: no-cache beside the provider's no-store.
        if (req.url?.startsWith('/token')) res.setHeader('pragma', 'no-cache');
        return currentProvider().then(() => callback(req, res));
      })
      .catch(next);
  });
  // RFC 8414 §3.1: the metadata of an issuer with a path lives at /.well-known/…/<path>.
  app.use('/.well-known/oauth-authorization-server/oauth', function serveServerMetadata(req, res, next) {
    if (req.url !== '/' && req.url !== '') return next();
    limitOAuthRequests(db, clientIp(req), res, now())
      .then((limited) => {
        if (limited) return;
        pinToPublicUrl(req);
        req.url = '/.well-known/openid-configuration';
        // oidc-provider takes its mount path from originalUrl less url; without this the endpoints
        // in the document would lose their /oauth prefix.
        (req as { originalUrl?: string }).originalUrl = `/oauth${req.url}`;
        return currentProvider().then(() => callback(req, res));
      })
      .catch(next);
  });
  // The JWKS straight from the database: a key created by `orderpay keys rotate` in any process
  // is published at once, before any provider starts signing with it.
  app.get('/oauth/jwks', { schema: { hide: true } }, async function sendJwks(_request, reply) {
    reply.header('cache-control', 'public, max-age=60').type('application/jwk-set+json; charset=utf-8');
    return { keys: await listPublishedKeys(db) };
  });
  await app.register(interactionRoutes, { provider: () => provider, db, csrfKey: cookieKeys[0]!, now });
}
