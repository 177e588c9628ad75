// Signs RFC 9068 access tokens with the active signing key. Used by `orderpay tokens issue`
// (operators, benchmarks, local development) beside the tokens the authorization server issues.
import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import type { Queryable } from '../db/db.ts';
import { SCOPES, STAFF_ONLY_SCOPES } from '../core/scopes.ts';
import { findUserAccount } from '../users/users.store.ts';
import { findClientApiVersion } from './clients.store.ts';
import { ensureActiveSigningKey, type SigningKey } from './keys.store.ts';

export interface AccessTokenClaims {
  issuer: string;
  audience: string;
  subject: string;
  clientId: string;
  scope: string;
  roles?: string[];
  /** The `api_version` claim: the API version the client is pinned to (registered clients only). */
  apiVersion?: number;
  /** Lifetime in seconds. */
  expiresIn?: number;
  /** RFC 9449 §6.1: the thumbprint of the DPoP key the token is bound to (cnf.jkt). */
  jkt?: string;
  now?: Date;
}

export async function signAccessToken(key: SigningKey, claims: AccessTokenClaims): Promise<string> {
  const iat = Math.floor((claims.now ?? new Date()).getTime() / 1000);
  const payload: Record<string, unknown> = { client_id: claims.clientId, scope: claims.scope, jti: randomUUID() };
  if (claims.roles?.length) payload.roles = claims.roles;
  if (claims.apiVersion !== undefined) payload.api_version = claims.apiVersion;
  if (claims.jkt !== undefined) payload.cnf = { jkt: claims.jkt };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
    .setIssuer(claims.issuer)
    .setAudience(claims.audience)
    .setSubject(claims.subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (claims.expiresIn ?? 600))
    .sign(await importJWK(key.privateJwk, key.alg));
}

/** Thrown when a token is asked for a subject or scope that cannot have it. */
export class TokenRequestError extends Error {}

/** The subject asked for is not in the database: where that database is, the caller says. */
export class UnknownSubjectError extends TokenRequestError {}

/**
 * A token for a user (by email; role and allowed scopes from the database) or a service client.
 * Empty scopes means every API scope the subject may hold; customers never get staff-only ones.
 * A registered client's token carries its pinned API version, as the authorization server's do;
 * user tokens (client orderpay-cli) and unregistered clients' carry none. A disabled user or
 * client gets none, as from the authorization server (the API would refuse it anyway). With jkt,
 * the token is bound to that DPoP key, as the authorization server binds one sent with a proof.
 */
export async function issueTokenFor(
  db: Queryable,
  settings: { issuer: string; audience: string },
  subject: { email: string } | { clientId: string },
  scopes: string[] = [],
  expiresIn = 600,
  jkt?: string,
): Promise<string> {
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw new TokenRequestError(`unknown scope ${unknown.join(', ')}; known: ${SCOPES.join(' ')}`);
  const key = await ensureActiveSigningKey(db);
  const base = { ...settings, expiresIn, jkt };
  if ('clientId' in subject) {
    const client = await findClientApiVersion(db, subject.clientId);
    if (client?.disabled) throw new TokenRequestError(`client ${subject.clientId} is disabled (orderpay clients enable)`);
    return signAccessToken(key, {
      ...base,
      subject: subject.clientId,
      clientId: subject.clientId,
      scope: (scopes.length ? scopes : [...SCOPES]).join(' '),
      apiVersion: client?.apiVersion,
    });
  }
  const user = await findUserAccount(db, { email: subject.email });
  if (!user) throw new UnknownSubjectError(`no user with email ${subject.email}`);
  if (user.disabledAt !== null) throw new TokenRequestError(`user ${subject.email} is disabled (orderpay users enable)`);
  const allowed: string[] = user.role === 'staff' ? [...SCOPES] : SCOPES.filter((s) => !STAFF_ONLY_SCOPES.has(s));
  const refused = scopes.filter((s) => !allowed.includes(s));
  if (refused.length) throw new TokenRequestError(`a ${user.role} cannot hold ${refused.join(', ')}`);
  return signAccessToken(key, {
    ...base,
    subject: String(user.id),
    clientId: 'orderpay-cli',
    scope: (scopes.length ? scopes : allowed).join(' '),
    roles: user.role === 'staff' ? ['staff'] : undefined,
  });
}
