// Signing keys in the database: the authorization server signs with the newest active key; the
// JWKS publishes the public half of every key that has not expired, so tokens signed by a
// retired key keep verifying until they expire.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Queryable } from '../db/db.ts';

export const SIGNING_ALG = 'RS256';

export interface SigningKey {
  kid: string;
  alg: string;
  privateJwk: JWK;
  publicJwk: JWK;
  createdAt: string;
}

interface SigningKeyRow {
  kid: string;
  alg: string;
  private_jwk: JWK;
  public_jwk: JWK;
  created_at: string;
}

const toKey = (row: SigningKeyRow): SigningKey => ({
  kid: row.kid,
  alg: row.alg,
  privateJwk: row.private_jwk,
  publicJwk: row.public_jwk,
  createdAt: row.created_at,
});

export async function createSigningKey(db: Queryable, alg = SIGNING_ALG): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, modulusLength: 2048 });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const decorate = (jwk: JWK): JWK => ({ ...jwk, kid, alg, use: 'sig' });
  const { rows } = await db.query<SigningKeyRow>(
    `INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk) VALUES ($1, $2, $3, $4)
     RETURNING kid, alg, private_jwk, public_jwk, created_at`,
    [kid, alg, JSON.stringify(decorate(await exportJWK(privateKey))), JSON.stringify(decorate(publicJwk))],
  );
  return toKey(rows[0]!);
}

/** The key new tokens are signed with: the newest one not retired. */
export async function findActiveSigningKey(db: Queryable): Promise<SigningKey | undefined> {
  const { rows } = await db.query<SigningKeyRow>(
    `SELECT kid, alg, private_jwk, public_jwk, created_at FROM signing_keys
     WHERE retired_at IS NULL ORDER BY created_at DESC, kid LIMIT 1`,
  );
  return rows[0] && toKey(rows[0]);
}

export async function ensureActiveSigningKey(db: Queryable): Promise<SigningKey> {
  return (await findActiveSigningKey(db)) ?? createSigningKey(db);
}

/** Public keys of every key still published (not past expires_at). */
export async function listPublishedKeys(db: Queryable): Promise<JWK[]> {
  const { rows } = await db.query<{ public_jwk: JWK }>(
    `SELECT public_jwk FROM signing_keys WHERE expires_at IS NULL OR expires_at > now() ORDER BY created_at DESC, kid`,
  );
  return rows.map((r) => r.public_jwk);
}
