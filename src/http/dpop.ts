// RFC 9449 DPoP at the resource server: the checks of the proof a request carries with a DPoP-bound
// access token (§4.3, §7.1), each failure named in words a 401 can say. The header and claim checks
// are pure; verifyDpopProof adds the signature (jose) and the key's thumbprint. Whether the proof's
// jti was seen before is asked of the store (./dpop-replay.ts), by ./token-binding.ts.
import { hash } from 'node:crypto';
import {
  calculateJwkThumbprint,
  type CryptoKey,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors as joseErrors,
  type FlattenedJWSInput,
  type JWSHeaderParameters,
  jwtVerify,
  type JWTPayload,
} from 'jose';
import { TailKeyedMap } from './tail-keyed-map.ts';

/** FAPI 2.0 §5.4.1: what a proof may be signed with; the authorization server's list too (src/auth/provider.ts). */
export const DPOP_ALGORITHMS = ['ES256', 'PS256', 'EdDSA'] as const;

/**
 * How old a proof may be (RFC 9449 §11.1: a short window, within which jti are remembered). The
 * authorization server's own window is the same five minutes (oidc-provider's).
 */
export const DPOP_PROOF_MAX_AGE_SECONDS = 300;

/** FAPI 2.0 §5.3.2.1 item 13: up to 10 s ahead must pass, over 60 s must not; clocks may differ by a minute, as for tokens. */
export const DPOP_PROOF_MAX_FUTURE_SECONDS = 60;

/** A jti longer than this is no identifier a client made up for one proof (oauth4webapi sends 43 characters). */
const MAX_JTI_LENGTH = 256;

/** RFC 7517/7518: the members that make a JWK private (and `k`, a symmetric key). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** RFC 9449 §7.1 invalid_dpop_proof; `description` is the error_description (RFC 6750 §3 characters only). */
export class DpopProofRejectedError extends Error {
  readonly description: string;

  constructor(description: string) {
    super(`DPoP proof refused: ${description}`);
    this.description = description;
  }
}

const reject = (description: string) => new DpopProofRejectedError(description);

/** What the proof must say of this request: RFC 9449 §4.3 checks 8 to 12. */
export interface ProofExpectations {
  /** The request's method (htm). */
  method: string;
  /** The request's URL as PUBLIC_URL spells it, without query and fragment (htu): expectedHtu. */
  url: string;
  /** The access token the request carries (ath). */
  accessToken: string;
  /** The thumbprint the token is bound to (its cnf.jkt). */
  jkt: string;
  /** This server's time, in seconds since the epoch. */
  nowSeconds: number;
}

/** What the replay check needs of a proof that passed every other check. */
export interface CheckedProof {
  jti: string;
  iat: number;
}

/**
 * RFC 9449 §4.3 item 11: the URL a proof's htu must name, PUBLIC_URL's spelling of the request's
 * path (the service may stand behind a proxy: the Host and X-Forwarded-* headers are never read).
 */
export function expectedHtu(publicUrl: string, requestUrl: string): string {
  const queryAt = requestUrl.indexOf('?');
  return new URL(publicUrl + (queryAt === -1 ? requestUrl : requestUrl.slice(0, queryAt))).href;
}

/** §4.3 items 3 to 5: typ dpop+jwt, an allowed alg, a public jwk. Pure. */
export function checkProofHeader(header: Record<string, unknown>): void {
  if (header.typ !== 'dpop+jwt') throw reject('the DPoP proof is not of type dpop+jwt');
  if (!(DPOP_ALGORITHMS as readonly unknown[]).includes(header.alg))
    throw reject('the DPoP proof is not signed with ES256, PS256 or EdDSA');
  const jwk = header.jwk;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw reject('the DPoP proof header has no jwk');
  if (PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) throw reject("the DPoP proof's jwk is not a public key");
}

/** §4.3 items 8 to 12 and §7.1's ath, against this request. Pure. */
export function checkProofClaims(payload: JWTPayload, expected: ProofExpectations): CheckedProof {
  const { jti, iat, htm, htu, ath } = payload;
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH)
    throw reject("the DPoP proof's jti claim is missing or invalid");
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw reject("the DPoP proof's iat claim is missing or invalid");
  if (iat < expected.nowSeconds - DPOP_PROOF_MAX_AGE_SECONDS) {
    throw reject(`the DPoP proof is too old (iat more than ${DPOP_PROOF_MAX_AGE_SECONDS} s ago)`);
  }
  if (iat > expected.nowSeconds + DPOP_PROOF_MAX_FUTURE_SECONDS) {
    throw reject(`the DPoP proof was issued in the future (iat more than ${DPOP_PROOF_MAX_FUTURE_SECONDS} s ahead)`);
  }
  if (htm !== expected.method) throw reject('the DPoP proof is for another method (htm)');
  if (typeof htu !== 'string' || !sameHtu(htu, expected.url)) throw reject('the DPoP proof is for another URL (htu)');
  if (ath !== accessTokenHash(expected.accessToken)) throw reject('the DPoP proof is for another access token (ath)');
  return { jti, iat };
}

/** §4.3 item 11: compared without query and fragment, after RFC 3986 §6.2.2/§6.2.3 normalisation (the URL parser's). */
function sameHtu(htu: string, expected: string): boolean {
  const url = URL.parse(htu);
  if (!url) return false;
  url.search = '';
  url.hash = '';
  return url.href === expected;
}

/** RFC 9449 §4.2: ath, the base64url SHA-256 of the access token. */
export function accessTokenHash(accessToken: string): string {
  return hash('sha256', accessToken, 'base64url');
}

/** The protected header, or a refusal: not three base64url parts with a JSON header. */
function proofHeader(proof: string): Record<string, unknown> {
  try {
    return decodeProtectedHeader(proof) as Record<string, unknown>;
  } catch {
    throw reject('the DPoP proof is not a well-formed JWT');
  }
}

/** What jose's refusal of a proof whose header passed stands for. */
function joseRejection(error: unknown): unknown {
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return reject('the DPoP proof signature does not verify with its jwk');
  if (error instanceof joseErrors.JWTClaimValidationFailed || error instanceof joseErrors.JWTExpired) {
    return reject("the DPoP proof's claims are invalid");
  }
  // A jwk of another key type than the alg, or one jose cannot import.
  if (
    error instanceof joseErrors.JOSENotSupported ||
    error instanceof TypeError ||
    (error instanceof joseErrors.JWSInvalid && /jwk/i.test(error.message))
  ) {
    return reject("the DPoP proof's jwk is not a public key for its alg");
  }
  if (error instanceof joseErrors.JOSEError) return reject('the DPoP proof is not a well-formed JWT');
  return error;
}

/** A proof's public key as imported, and its RFC 7638 thumbprint (what cnf.jkt names). */
interface ProofKey {
  key: CryptoKey;
  thumbprint: string;
}

/**
 * The keys of proofs seen before, by the proof's protected header (typ, alg and the jwk itself): a
 * client signs every proof with one key, so it is imported and its thumbprint computed once. A
 * bounded memo of a pure function of the header: another process simply imports the key again.
 */
const proofKeys = new TailKeyedMap<ProofKey>(10_000);

/** jose's key function for a proof: its embedded jwk (checked to be a public signing key), imported once. */
async function proofKeyOf(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<ProofKey> {
  const cached = proofKeys.get(token.protected!);
  if (cached) return cached;
  const key = (await EmbeddedJWK(header, token)) as CryptoKey;
  const imported = { key, thumbprint: await calculateJwkThumbprint(header.jwk!) };
  proofKeys.set(token.protected!, imported);
  return imported;
}

/** Every check of one proof but its jti's novelty; DpopProofRejectedError naming the failed one. */
export async function verifyDpopProof(proof: string, expected: ProofExpectations): Promise<CheckedProof> {
  checkProofHeader(proofHeader(proof));
  let payload: JWTPayload;
  let thumbprint: string | undefined;
  try {
    const keyOf = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
      const proofKey = await proofKeyOf(header, token);
      thumbprint = proofKey.thumbprint;
      return proofKey.key;
    };
    ({ payload } = await jwtVerify(proof, keyOf, { typ: 'dpop+jwt', algorithms: [...DPOP_ALGORITHMS] }));
  } catch (error) {
    throw joseRejection(error);
  }
  const checked = checkProofClaims(payload, expected);
  if (thumbprint !== expected.jkt) {
    throw reject('the DPoP proof is signed by another key than the token is bound to (cnf.jkt)');
  }
  return checked;
}
