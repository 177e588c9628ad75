// Authentication at the resource server: Bearer tokens (RFC 6750) and DPoP-bound ones (RFC 9449,
// `Authorization: DPoP` with a proof: src/http/token-binding.ts). The onRequest hook verifies the
// access token (src/http/token-verifier.ts) and sets request.principal; the route-level scope check.
// Object-level checks (ownership) happen below, in the services. The reading of the Authorization
// header and the challenges are /oauth/userinfo's too (src/auth/userinfo.routes.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Principal } from '../core/principal.ts';
import type { Scope } from '../core/scopes.ts';
import { ProblemError } from './problem.ts';
import { describeTokenRejection, tokenRejectionFrom, type TokenRejectedError } from './token-rejections.ts';
import { DPOP_ALGORITHMS } from './dpop.ts';
import { type DpopCheck, refuseBoundBearer, TokenBindingRefusal } from './token-binding.ts';
import type { TokenVerifier, VerifiedAccess } from './token-verifier.ts';

const REALM = 'orderpay';

const SCHEME = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?: |$)/;
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const DPOP = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The schemes an access token may come under: RFC 6750's, and RFC 9449's for DPoP-bound tokens. */
export type TokenScheme = 'Bearer' | 'DPoP';

/** The error_description of credentials outside b64token (token68 for DPoP, RFC 9449 §7.1). */
export function malformedCredentials(scheme: TokenScheme): string {
  return `the ${scheme} credentials are malformed`;
}

/** RFC 6750 §2.1: the b64token of `Authorization: Bearer <token>`, or undefined when malformed. */
export function bearerCredentials(header: string): string | undefined {
  return BEARER.exec(header)?.[1];
}

/** RFC 6750 §3: error, error_description and scope values use only %x20-21 / %x23-5B / %x5D-7E. */
const OUTSIDE_CHALLENGE_VALUE = /[^\x20\x21\x23-\x5b\x5d-\x7e]/g;

/** RFC 6750 §3: the WWW-Authenticate challenge of a refusal, with its error attributes. */
export function bearerChallenge(params: Record<string, string> = {}): string {
  const extra = Object.entries(params)
    .map(([k, v]) => `, ${k}="${v.replace(OUTSIDE_CHALLENGE_VALUE, '')}"`)
    .join('');
  return `Bearer realm="${REALM}"${extra}`;
}

/** RFC 9449 §7.1: the DPoP challenge, naming the algorithms a proof may use, with the error attributes. */
export function dpopChallenge(params: Record<string, string>): string {
  const extra = Object.entries(params)
    .map(([k, v]) => `, ${k}="${v.replace(OUTSIDE_CHALLENGE_VALUE, '')}"`)
    .join('');
  return `DPoP algs="${DPOP_ALGORITHMS.join(' ')}"${extra}`;
}

/** The challenge of a refusal under the scheme the client used. */
export function challengeFor(scheme: TokenScheme, params: Record<string, string>): string {
  return scheme === 'DPoP' ? dpopChallenge(params) : bearerChallenge(params);
}

/** RFC 9700 §2.5: whether the query string carries an access token (which leaks into logs and Referer). */
export function hasAccessTokenInQuery(url: string): boolean {
  const queryStart = url.indexOf('?');
  return queryStart >= 0 && url.includes('access_token') && new URLSearchParams(url.slice(queryStart + 1)).has('access_token');
}

/** What the Authorization header holds, as RFC 6750 §2.1 and §3.1 (and RFC 9449 §7.1) tell the cases apart. */
export type AuthorizationCredentials =
  | { kind: 'token'; scheme: TokenScheme; token: string }
  /** No credentials, or another scheme (Basic…): a challenge without an error code. */
  | { kind: 'absent' }
  /** Several Authorization fields: which credentials were meant is ambiguous (invalid_request). */
  | { kind: 'several' }
  /** Bearer or DPoP with credentials outside b64token (invalid_token). */
  | { kind: 'malformed'; scheme: TokenScheme };

/** The access token of a request's Authorization header and its scheme, or why there is none. */
export function readAuthorization(request: FastifyRequest): AuthorizationCredentials {
  // Node keeps the first of several Authorization fields and drops the rest.
  if (countAuthorizationFields(request.raw.rawHeaders) > 1) return { kind: 'several' };
  const header = request.headers.authorization;
  const scheme = header ? SCHEME.exec(header)?.[1]?.toLowerCase() : undefined;
  if (scheme === 'bearer') {
    const token = bearerCredentials(header!);
    return token === undefined ? { kind: 'malformed', scheme: 'Bearer' } : { kind: 'token', scheme: 'Bearer', token };
  }
  if (scheme === 'dpop') {
    const token = DPOP.exec(header!)?.[1];
    return token === undefined ? { kind: 'malformed', scheme: 'DPoP' } : { kind: 'token', scheme: 'DPoP', token };
  }
  return { kind: 'absent' };
}

/** onRequest hook: authenticates the caller, or answers 401/400 before any other work. */
function tokenAuthentication(verifier: TokenVerifier, dpop: DpopCheck) {
  return async function authenticateToken(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    // RFC 9700 §2.5: tokens in the URI leak into logs and Referer; we accept only the header.
    if (hasAccessTokenInQuery(request.url)) {
      throw new ProblemError('AUTH_TOKEN_NOT_IN_HEADER', 'Send the access token in the Authorization header, not in the query string.', {
        headers: { 'www-authenticate': bearerChallenge({ error: 'invalid_request', error_description: 'token in query string' }) },
      });
    }
    const bearer = readAuthorization(request);
    if (bearer.kind === 'several') {
      throw new ProblemError('REQUEST_HEADER_INVALID', 'Send one Authorization header, not several.', {
        errors: [{ parameter: 'Authorization', detail: 'Authorization must be sent once' }],
        headers: { 'www-authenticate': bearerChallenge({ error: 'invalid_request', error_description: 'several Authorization headers' }) },
      });
    }
    if (bearer.kind === 'absent') {
      throw new ProblemError('AUTH_TOKEN_MISSING', 'This endpoint requires an access token: Authorization: Bearer <token>.', {
        headers: { 'www-authenticate': bearerChallenge() },
      });
    }
    if (bearer.kind === 'malformed') throw invalidToken(bearer.scheme, malformedCredentials(bearer.scheme));
    const { scheme, token } = bearer;
    let verified: VerifiedAccess;
    try {
      // A token seen before is answered from memory, without a promise per check.
      verified = verifier.verifyCached(token) ?? (await verifier.verify(token));
    } catch (error) {
      const rejection = tokenRejectionFrom(error);
      if (!rejection) throw error;
      throw invalidToken(scheme, describeTokenRejection(rejection), whereTokensComeFrom(rejection, verifier));
    }
    try {
      if (scheme === 'Bearer') refuseBoundBearer(verified.jkt);
      else await dpop.confirm(request, token, verified.jkt);
    } catch (error) {
      throw bindingProblem(error, request);
    }
    request.principal = verified.principal;
  };
}

/**
 * RFC 6750 §3.1 invalid_token, one catalogue code whatever the check (docs/errors.md): the
 * error_description names the check, the detail says it again with what would pass. The challenge
 * is of the scheme the token came under.
 */
function invalidToken(scheme: TokenScheme, description: string, hint?: string): ProblemError {
  return new ProblemError('AUTH_TOKEN_INVALID', `The access token is invalid: ${description}.${hint ? ` ${hint}` : ''}`, {
    headers: { 'www-authenticate': challengeFor(scheme, { error: 'invalid_token', error_description: description }) },
  });
}

/**
 * RFC 9449 §7: a binding refused (invalid_token, invalid_dpop_proof: always the DPoP challenge,
 * which names the algorithms), or a proof whose jti could not be recorded: refused rather than
 * risk a replay (503, docs/errors.md).
 */
function bindingProblem(error: unknown, request: FastifyRequest): ProblemError {
  if (!(error instanceof TokenBindingRefusal)) return dpopUnavailable(error, request);
  const headers = { 'www-authenticate': dpopChallenge({ error: error.error, error_description: error.description }) };
  if (error.error === 'invalid_token')
    return new ProblemError('AUTH_TOKEN_INVALID', `The access token is invalid: ${error.description}.`, { headers });
  return new ProblemError('AUTH_DPOP_PROOF_INVALID', `The DPoP proof is invalid: ${error.description}.`, { headers });
}

/** A token for another server: which issuer and audience this one accepts (both are public). */
function whereTokensComeFrom(rejection: TokenRejectedError, verifier: TokenVerifier): string | undefined {
  if (rejection.check !== 'issuer' && rejection.check !== 'audience') return undefined;
  return `This API accepts tokens issued by ${verifier.issuer} for the audience ${verifier.audience}.`;
}

/** rawHeaders alternates names and values. */
function countAuthorizationFields(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i]!.length === 13 && rawHeaders[i]!.toLowerCase() === 'authorization') count++;
  return count;
}

/** A proof whose jti the store could not record is refused, never let through: the cause goes to the log. */
export function dpopUnavailable(error: unknown, request: FastifyRequest): ProblemError {
  request.log.warn({ err: error }, 'DPoP proof not accepted: its jti could not be recorded');
  return new ProblemError(
    'AUTH_DPOP_UNAVAILABLE',
    'DPoP proofs cannot be checked just now; nothing was done. Retry shortly with a new proof.',
  );
}

/** Route-level scope check: 403 insufficient_scope naming the scope needed (RFC 6750 §3.1). */
export function requireScope(request: FastifyRequest, scope: Scope): Principal {
  return requireAnyScope(request, [scope]);
}

/**
 * The same for an operation that any of several scopes allows (OpenAPI's alternative security
 * requirements): the refusal names the first, the one a client should ask for.
 */
export function requireAnyScope(request: FastifyRequest, scopes: readonly [Scope, ...Scope[]]): Principal {
  const principal = request.principal;
  if (!principal) throw new Error('requireScope called on an unauthenticated route');
  if (!scopes.some((scope) => principal.scopes.has(scope))) {
    const [scope] = scopes;
    throw new ProblemError('AUTH_INSUFFICIENT_SCOPE', `This operation requires the scope "${scope}".`, {
      headers: { 'www-authenticate': bearerChallenge({ error: 'insufficient_scope', scope }) },
    });
  }
  return principal;
}

/**
 * Decorates the app with `authenticate`, the onRequest hook that route groups needing an access
 * token add (the resource routes; not /oauth, /livez or the docs).
 */
async function authenticate(app: FastifyInstance, options: { verifier: TokenVerifier; dpop: DpopCheck }): Promise<void> {
  app.decorateRequest('principal', undefined);
  app.decorate('authenticate', tokenAuthentication(options.verifier, options.dpop));
}

export const authenticatePlugin = fp(authenticate, { name: 'orderpay-authenticate', fastify: '5.x' });

declare module 'fastify' {
  interface FastifyInstance {
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}
