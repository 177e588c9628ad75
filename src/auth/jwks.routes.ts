// The JWKS straight from the database: a key created by `orderpay keys rotate` in any process is
// published at once, before any provider starts signing with it. Readable from any origin, like the
// discovery document that points to it: public keys, the same for every caller.
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/db.ts';
import { listPublishedKeys } from './keys.store.ts';

export function registerJwksRoute(app: FastifyInstance, db: Db): void {
  app.get('/oauth/jwks', { schema: { hide: true } }, async function sendJwks(_request, reply) {
    reply
      .header('cache-control', 'public, max-age=60')
      .header('access-control-allow-origin', '*')
      .type('application/jwk-set+json; charset=utf-8');
    return { keys: await listPublishedKeys(db) };
  });
}
