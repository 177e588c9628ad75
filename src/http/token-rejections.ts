// Why an access token was refused: the RFC 9068 §4 check it failed, read from jose's error classes,
// and the words the 401 says it with (RFC 6750 §3.1 error_description and the problem's detail).
// Nothing of the token is repeated: only the check, a claim's name from a fixed list, and this
// server's own issuer and audience, which its discovery document publishes anyway.
import { errors as joseErrors } from 'jose';

/** Each check an access token can fail, in the order the verifier runs them. */
export type TokenCheck =
  | 'malformed'
  | 'algorithm'
  | 'key'
  | 'keys_unavailable'
  | 'signature'
  | 'type'
  | 'claims'
  | 'issuer'
  | 'audience'
  | 'not_yet_valid'
  | 'issued_in_future'
  | 'expired'
  | 'sender_constrained'
  | 'revoked';

/** Claims the verifier reads; a name outside this list is never echoed. */
const KNOWN_CLAIMS = new Set(['iss', 'aud', 'sub', 'client_id', 'exp', 'iat', 'nbf', 'jti', 'scope', 'gid', 'cnf']);

/** The token failed `check` (RFC 6750 §3.1 invalid_token); `claim` names the claim at fault. */
export class TokenRejectedError extends Error {
  readonly check: TokenCheck;
  readonly claim: string | undefined;

  constructor(check: TokenCheck, claim?: string) {
    super(`access token refused: ${check}${claim ? ` (${claim})` : ''}`);
    this.check = check;
    this.claim = claim !== undefined && KNOWN_CLAIMS.has(claim) ? claim : undefined;
  }
}

/** A failed claim check, by the claim jose names on the error. */
function claimRejection(error: joseErrors.JWTClaimValidationFailed): TokenRejectedError {
  switch (error.claim) {
    case 'typ':
      return new TokenRejectedError('type');
    case 'iss':
      return new TokenRejectedError('issuer');
    case 'aud':
      return new TokenRejectedError('audience');
    case 'nbf':
      return new TokenRejectedError(error.reason === 'check_failed' ? 'not_yet_valid' : 'claims', 'nbf');
    case 'iat':
      return new TokenRejectedError(error.reason === 'check_failed' ? 'issued_in_future' : 'claims', 'iat');
    default:
      return new TokenRejectedError('claims', error.claim);
  }
}

/** The rejection a verification failure stands for; undefined when it is not about the token. */
export function tokenRejectionFrom(error: unknown): TokenRejectedError | undefined {
  if (error instanceof TokenRejectedError) return error;
  if (error instanceof joseErrors.JWTExpired) return new TokenRejectedError('expired');
  if (error instanceof joseErrors.JWTClaimValidationFailed) return claimRejection(error);
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return new TokenRejectedError('algorithm');
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys)
    return new TokenRejectedError('key');
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) return new TokenRejectedError('keys_unavailable');
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return new TokenRejectedError('signature');
  // JWSInvalid, JWTInvalid, JOSENotSupported…, and the TypeError of a header that is not JSON.
  if (error instanceof joseErrors.JOSEError || error instanceof TypeError) return new TokenRejectedError('malformed');
  return undefined;
}

/**
 * What the 401 says of a rejection: a short phrase for error_description, whose characters RFC
 * 6750 §3 allows (printable ASCII but `"` and `\`), and which the detail repeats.
 */
export function describeTokenRejection(rejection: TokenRejectedError): string {
  switch (rejection.check) {
    case 'malformed':
      return 'the token is not a well-formed JWT';
    case 'algorithm':
      return "the token's signing algorithm is not accepted";
    case 'key':
      return 'the token is signed with a key this server does not publish';
    case 'keys_unavailable':
      return "the issuer's signing keys could not be loaded";
    case 'signature':
      return "the token's signature does not verify";
    case 'type':
      return 'the token is not a JWT access token (typ at+jwt)';
    case 'claims':
      return rejection.claim ? `the token's ${rejection.claim} claim is missing or invalid` : "the token's claims are invalid";
    case 'issuer':
      return 'the token is from another issuer';
    case 'audience':
      return 'the token is for another audience';
    case 'not_yet_valid':
      return 'the token is not valid yet (nbf)';
    case 'issued_in_future':
      return 'the token was issued in the future (iat)';
    case 'expired':
      return 'the token has expired';
    case 'sender_constrained':
      return 'the token is bound by a method this API does not check (cnf other than jkt, such as mTLS x5t#S256)';
    case 'revoked':
      return 'the token has been revoked';
  }
}
