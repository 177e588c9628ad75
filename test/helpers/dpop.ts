// DPoP proofs made by hand (RFC 9449 §4.2), for the requests a real client would never send: another
// method or URL, an old or future iat, a reused jti, a wrong header. openid-client makes the good ones.
import { randomUUID } from 'node:crypto';
import { exportJWK, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import { findActiveSigningKey } from '../../src/auth/keys.store.ts';
import { accessTokenHash } from '../../src/http/dpop.ts';
import type { AuthServer } from './oauth.ts';

export interface ProofOptions {
  method: string;
  url: string;
  /** The access token the proof is for (ath); none for the token endpoint. */
  accessToken?: string;
  /** Claims to add or replace (iat, jti, htm…); undefined removes one. */
  claims?: Record<string, unknown>;
  /** Header members to add or replace (typ, alg, jwk). */
  header?: Record<string, unknown>;
}

/** A DPoP proof signed by keyPair's private key, its public key in the header; ES256 unless the header says otherwise. */
export async function makeProof(keyPair: { privateKey: CryptoKey; publicKey: CryptoKey }, options: ProofOptions): Promise<string> {
  const jwk: JWK = await exportJWK(keyPair.publicKey);
  const claims: Record<string, unknown> = {
    jti: randomUUID(),
    iat: Math.floor(Date.now() / 1000),
    htm: options.method,
    htu: options.url,
    ...(options.accessToken === undefined ? {} : { ath: accessTokenHash(options.accessToken) }),
    ...options.claims,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk, ...options.header } as never)
    .sign(keyPair.privateKey);
}

/** A JWS with alg none: a header and payload, no signature (RFC 7519 §6.1). */
export function unsecuredProof(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'dpop+jwt', ...header })}.${part(claims)}.`;
}

/**
 * A well-formed access token of the server's issuer for a service client, signed with its active
 * key: for bindings the token endpoint does not give (mTLS) or a server that cannot issue one.
 */
export async function signAccessToken(
  server: Pick<AuthServer, 'db' | 'issuer' | 'config'>,
  clientId: string,
  extra: Record<string, unknown>,
): Promise<string> {
  const key = (await findActiveSigningKey(server.db))!;
  const { alg: _alg, ...material } = key.privateJwk;
  const iat = Math.floor(Date.now() / 1000);
  const claims = {
    iss: server.issuer,
    aud: server.config.audience,
    sub: clientId,
    client_id: clientId,
    scope: 'orders:read',
    iat,
    exp: iat + 300,
    ...extra,
  };
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' }).sign(await importJWK(material, key.alg));
}
