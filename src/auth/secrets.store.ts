// Secrets generated on first start and kept in the database, so every process of a deployment
// shares them (cookie signing keys of the authorization server).
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/db.ts';

/** Cookie signing keys, newest first (oidc-provider signs with the first, verifies with all). */
export async function ensureCookieKeys(db: Queryable): Promise<string[]> {
  const fresh = [randomBytes(32).toString('base64url')];
  // Two processes starting together: the first insert wins, both read the same value back.
  await db.query('INSERT INTO app_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    'cookie_keys',
    JSON.stringify(fresh),
  ]);
  const { rows } = await db.query<{ value: string[] }>('SELECT value FROM app_secrets WHERE name = $1', ['cookie_keys']);
  return rows[0]!.value;
}
