// RFC 7662 introspection of orderpay's own RFC 9068 JWT access tokens. oidc-provider introspects
// only what it stores and refuses any JWT with unsupported_token_type
// (lib/shared/reject_structured_tokens.js), after it has authenticated the client; this middleware
// takes that refusal back and answers as the API would judge the token: signature, issuer,
// audience, expiry, whether its grant has been revoked and whether its user or client has been
// disabled, erased or deleted (src/auth/own-token-verifier.ts).
import type { Client, KoaContextWithOIDC } from 'oidc-provider';
import { TokenRejectedError } from '../http/token-rejections.ts';
import type { TokenVerifier } from '../http/token-verifier.ts';

/**
 * RFC 7662 §2.1: the endpoint answers authenticated clients only, so tokens cannot be scanned for.
 * A client that authenticates (a resource server, a service) may introspect any orderpay token;
 * a public client, which proves nothing, learns of none (active false).
 */
export function mayIntrospect(client: Client): boolean {
  return client.clientAuthMethod !== 'none';
}

/** The provider refused the token for being a JWT, once the client had authenticated. */
function refusedAsStructured(ctx: KoaContextWithOIDC): boolean {
  return (
    ctx.oidc?.route === 'introspection' &&
    ctx.status === 400 &&
    (ctx.body as { error?: unknown } | undefined)?.error === 'unsupported_token_type' &&
    ctx.oidc.client !== undefined &&
    typeof ctx.oidc.params?.token === 'string'
  );
}

/** RFC 7662 §2.2: active and the token's claims, or active false and nothing else. */
async function introspectJwt(verifier: TokenVerifier, token: string, client: Client): Promise<Record<string, unknown>> {
  if (!mayIntrospect(client)) return { active: false };
  try {
    const { sub, client_id, scope, exp, iat, nbf, iss, aud, jti, cnf } = await verifier.verifyClaims(token);
    // RFC 9449 §6.2: a DPoP-bound token says its key's thumbprint and its type (the verifier accepts no other cnf).
    const binding = cnf === undefined ? { token_type: 'Bearer' } : { cnf, token_type: 'DPoP' };
    return { active: true, sub, client_id, scope, exp, iat, nbf, iss, aud, jti, ...binding };
  } catch (error) {
    // Whichever check failed (a forgery, expiry, revocation), RFC 7662 §2.2 says no more than that.
    if (error instanceof TokenRejectedError) return { active: false };
    throw error;
  }
}

/** Koa middleware for the provider (provider.use). */
export function introspectJwtAccessTokens(verifier: TokenVerifier) {
  return async function introspectJwtAccessToken(ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<void> {
    await next();
    if (!refusedAsStructured(ctx)) return;
    ctx.status = 200;
    ctx.body = await introspectJwt(verifier, ctx.oidc.params!.token as string, ctx.oidc.client!);
  };
}
