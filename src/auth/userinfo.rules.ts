// OpenID Connect Core §5.3, UserInfo: which of a user's claims an access token's scopes release
// (§5.4), and the RFC 6750 §3.1 refusals of the endpoint. Pure: no database, no HTTP.
import type { Principal } from '../core/principal.ts';

/**
 * OpenID Connect Core §5.4: the claims each scope asks for. The provider's `claims` configuration
 * too (src/auth/provider.ts), so ID tokens and /oauth/userinfo release the same ones.
 */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  openid: ['sub'],
  email: ['email', 'email_verified'],
  profile: ['name'],
};

type RefusalError = 'invalid_request' | 'invalid_token' | 'invalid_dpop_proof' | 'insufficient_scope';

const STATUS: Record<RefusalError, 400 | 401 | 403> = {
  invalid_request: 400,
  invalid_token: 401,
  invalid_dpop_proof: 401,
  insufficient_scope: 403,
};

/** RFC 6750 §3.1: the endpoint refuses the request; `error` is said in WWW-Authenticate and the body. */
export class UserinfoRefusal extends Error {
  readonly error: RefusalError;
  readonly description: string;
  /** insufficient_scope: the scope the request needs. */
  readonly scope: string | undefined;
  /** §3.1: a request without any credentials gets a challenge without an error code. */
  readonly challengeWithoutError: boolean;
  /** RFC 9449 §7.1: the refusal of a DPoP-bound token, or of one sent under DPoP, is a DPoP challenge. */
  readonly scheme: 'Bearer' | 'DPoP';

  constructor(
    error: RefusalError,
    description: string,
    options: { scope?: string; challengeWithoutError?: boolean; scheme?: 'Bearer' | 'DPoP' } = {},
  ) {
    super(`userinfo refused: ${error} (${description})`);
    this.error = error;
    this.description = description;
    this.scope = options.scope;
    this.challengeWithoutError = options.challengeWithoutError ?? false;
    this.scheme = options.scheme ?? 'Bearer';
  }

  get status(): 400 | 401 | 403 {
    return STATUS[this.error];
  }
}

/**
 * §5.3: only a token granted `openid` is for this endpoint; its `sub` is the user's id (RFC 9068
 * §2.2). A service's token (client credentials) is never granted `openid`.
 */
export function requireOpenidUser(principal: Principal): number {
  if (principal.kind !== 'user' || !principal.scopes.has('openid')) {
    throw new UserinfoRefusal('insufficient_scope', 'the token was not granted the openid scope', { scope: 'openid' });
  }
  return principal.userId;
}

/** §5.4: the account's claims that the token's scopes ask for, and nothing else; `sub` always (§5.3.2). */
export function releaseClaims<Claims extends { sub: string }>(
  claims: Claims,
  scopes: ReadonlySet<string>,
): Pick<Claims, 'sub'> & Partial<Claims> {
  const available: Readonly<Record<string, unknown>> = claims;
  const released: Record<string, unknown> = { sub: claims.sub };
  for (const scope of scopes) {
    const asked = Object.hasOwn(SCOPE_CLAIMS, scope) ? SCOPE_CLAIMS[scope]! : [];
    for (const claim of asked) if (available[claim] !== undefined) released[claim] = available[claim];
  }
  return released as Pick<Claims, 'sub'> & Partial<Claims>;
}
