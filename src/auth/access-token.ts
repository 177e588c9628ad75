// Signs RFC 9068 access tokens with the active signing key. Used by `orderpay tokens issue`
// (operators, benchmarks, local development) until the authorization server issues them.
import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import type { SigningKey } from './keys.store.ts';

export interface AccessTokenClaims {
  issuer: string;
  audience: string;
  subject: string;
  clientId: string;
  scope: string;
  roles?: string[];
  /** Lifetime in seconds. */
  expiresIn?: number;
  now?: Date;
}

export async function signAccessToken(key: SigningKey, claims: AccessTokenClaims): Promise<string> {
  const iat = Math.floor((claims.now ?? new Date()).getTime() / 1000);
  const payload: Record<string, unknown> = { client_id: claims.clientId, scope: claims.scope, jti: randomUUID() };
  if (claims.roles?.length) payload.roles = claims.roles;
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
    .setIssuer(claims.issuer)
    .setAudience(claims.audience)
    .setSubject(claims.subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (claims.expiresIn ?? 600))
    .sign(await importJWK(key.privateJwk, key.alg));
}
