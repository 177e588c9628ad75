// FAPI 2.0 §5.3.2.1 item 13: a JWT issued (iat) or valid (nbf) up to 10 s in the future is accepted,
// more than 60 s is refused. oidc-provider accepts a client assertion's iat in the future whenever it
// has an exp, and a DPoP proof's iat within 300 s either way of its clock: both are held to 60 s here.
import { decodeJwt } from 'jose';

/** How far ahead of this server's clock a JWT's iat or nbf may be (the API's tokens and proofs: the same). */
export const MAX_FUTURE_SECONDS = 60;

/** Whether a JWT's claims say it was issued, or becomes valid, more than MAX_FUTURE_SECONDS from now. */
export function isFromTheFuture(claims: { iat?: unknown; nbf?: unknown }, nowSeconds: number): boolean {
  const latest = nowSeconds + MAX_FUTURE_SECONDS;
  return (typeof claims.iat === 'number' && claims.iat > latest) || (typeof claims.nbf === 'number' && claims.nbf > latest);
}

/**
 * A DPoP header (RFC 9449 §4.1) whose proof is from the future; false for anything else, a malformed
 * proof included: the provider refuses that itself.
 */
export function isDpopProofFromTheFuture(header: string | string[] | undefined, nowSeconds: number): boolean {
  if (typeof header !== 'string') return false;
  try {
    return isFromTheFuture(decodeJwt(header), nowSeconds);
  } catch {
    return false;
  }
}
