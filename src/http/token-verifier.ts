// RFC 9068 JWT access tokens, verified with jose against the issuer's JWKS: iss, aud, exp, typ
// "at+jwt", an algorithm allow-list, a binding this API can check (RFC 9449's cnf.jkt, or none),
// and (our own issuer's) not issued under a revoked grant nor to a user or client an operator
// disabled. A refusal names the check that failed (src/http/token-rejections.ts). Whether the
// request proves the binding is asked afterwards (src/http/token-binding.ts).
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { isApiVersion, UNPINNED_API_VERSION } from '../core/api-versions.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import type { Principal } from '../core/principal.ts';
import { subjectsOf } from '../core/subject-revocation.ts';
import type { GrantRevocations } from './grant-revocations.ts';
import type { SubjectRevocations } from './subject-revocations.ts';
import { TokenRejectedError, tokenRejectionFrom } from './token-rejections.ts';
import { TailKeyedMap } from './tail-keyed-map.ts';

// RFC 8725 §3.1: never let the token choose the algorithm; "none" and HMAC are not accepted.
const ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];

export interface TokenVerifierOptions {
  issuer: string;
  audience: string;
  /** Public keys of our own issuer, read again when a token names an unknown key id. */
  loadKeys?: () => Promise<JWK[]>;
  /** JWKS URL of an external issuer. */
  jwksUrl?: string;
  /**
   * Our own issuer's revoked grants. Not consulted when jwksUrl names an external issuer: its
   * tokens' claims mean nothing to our revoked_grants table.
   */
  revocations?: GrantRevocations;
  /** Our own issuer's disabled, erased and deleted users and clients; not consulted for an external issuer either. */
  subjectRevocations?: SubjectRevocations;
  now?: Clock;
}

/**
 * JWKS from a loader. Reloaded when a token names an unknown kid (key rotation), at most once per
 * second of the injected clock for such misses, so made-up kids cannot flood the key store; and
 * when older than a minute, so a key that expired (or was withdrawn) stops verifying.
 */
function reloadingJwks(loadKeys: () => Promise<JWK[]>, now: Clock): JWTVerifyGetKey {
  const MAX_AGE_MS = 60_000;
  let current: JWTVerifyGetKey | undefined;
  let loadedAt = -Infinity;
  let missReloadAt = -Infinity;
  const load = async () => {
    current = createLocalJWKSet({ keys: await loadKeys() });
    loadedAt = now().getTime();
    return current;
  };
  return async (header, token) => {
    const jwks = current && now().getTime() - loadedAt < MAX_AGE_MS ? current : await load();
    try {
      return await jwks(header, token);
    } catch (error) {
      if (!(error instanceof joseErrors.JWKSNoMatchingKey) || now().getTime() - missReloadAt < 1000) throw error;
      missReloadAt = now().getTime();
      return (await load())(header, token);
    }
  };
}

/** The `gid` claim: the digest of the grant the token was issued under (src/auth/provider.ts). */
function grantDigestFrom(payload: Record<string, unknown>): string | undefined {
  if (payload.gid === undefined) return undefined;
  if (typeof payload.gid !== 'string') throw new TokenRejectedError('claims', 'gid');
  return payload.gid;
}

/**
 * The `api_version` claim: the version the token's client is pinned to (src/auth/provider.ts).
 * Absent, malformed or no longer spoken, the token is unpinned rather than refused: the claim
 * chooses a default representation, it grants nothing.
 */
function apiVersionFrom(payload: Record<string, unknown>): number {
  const claimed = payload.api_version;
  return typeof claimed === 'number' && isApiVersion(claimed) ? claimed : UNPINNED_API_VERSION;
}

/**
 * RFC 7800 cnf: the DPoP key thumbprint the token is bound to (RFC 9449 §6.1), or undefined for an
 * unbound token. Any other confirmation method (mTLS's x5t#S256, RFC 8705) is one this API cannot
 * check: accepted, the token would work without its proof of possession.
 */
function boundKeyFrom(payload: Record<string, unknown>): string | undefined {
  const cnf = payload.cnf;
  if (cnf === undefined) return undefined;
  if (typeof cnf !== 'object' || cnf === null || Array.isArray(cnf)) throw new TokenRejectedError('claims', 'cnf');
  if (Object.keys(cnf).some((method) => method !== 'jkt')) throw new TokenRejectedError('sender_constrained');
  const { jkt } = cnf as { jkt?: unknown };
  if (typeof jkt !== 'string' || jkt === '') throw new TokenRejectedError('claims', 'cnf');
  return jkt;
}

function principalFrom(payload: Record<string, unknown>): Principal {
  const sub = payload.sub;
  const clientId = payload.client_id;
  if (typeof sub !== 'string') throw new TokenRejectedError('claims', 'sub');
  if (typeof clientId !== 'string') throw new TokenRejectedError('claims', 'client_id');
  const caller = {
    clientId,
    scopes: new Set(typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : []),
    subject: sub,
    apiVersion: apiVersionFrom(payload),
  };
  // RFC 9068 §2.2: without a resource owner (client credentials) sub is the client's identifier.
  if (sub === clientId) return { kind: 'service', ...caller };
  // Neither the client nor a user id: not a subject this API knows.
  if (!/^[1-9]\d{0,15}$/.test(sub)) throw new TokenRejectedError('claims', 'sub');
  const roles = Array.isArray(payload.roles) ? payload.roles : [];
  return { kind: 'user', userId: Number(sub), role: roles.includes('staff') ? 'staff' : 'customer', ...caller };
}

/** A verified token: the caller it stands for and the DPoP key it is bound to, if any. */
export interface VerifiedAccess {
  principal: Principal;
  /** RFC 9449 cnf.jkt: the thumbprint of the key whose proofs must accompany the token. */
  jkt: string | undefined;
}

export interface TokenVerifier {
  /** The issuer and audience a token must name, as the verifier was configured. */
  readonly issuer: string;
  readonly audience: string;
  /** The caller the token stands for and its binding; TokenRejectedError naming the failed check otherwise. */
  verify(token: string): Promise<VerifiedAccess>;
  /**
   * verify's answer without waiting, for a token verified before whose revocation checks can be
   * answered from fresh copies (a client reusing its token: almost every request); undefined when
   * verify must be asked. Throws as verify does for a revoked one.
   */
  verifyCached(token: string): VerifiedAccess | undefined;
  /** The verified claims, for introspection (RFC 7662); TokenRejectedError as verify. */
  verifyClaims(token: string): Promise<JWTPayload>;
}

interface VerifiedToken extends VerifiedAccess {
  payload: JWTPayload;
  grantDigest: string | undefined;
}

/** How far ahead of this server's clock a token's issuing clock may be (docs/api.md). */
export const MAX_CLOCK_SKEW_SECONDS = 60;

/**
 * Verified tokens are remembered until they expire (bounded), so a client reusing its token pays
 * for the signature check once. This memoises a pure function of the token: a second instance
 * without the entry simply verifies again. Whether the token's grant was revoked, or its user or
 * client disabled, is not part of that function: it is asked on every call, cached or not.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const now = options.now ?? systemClock;
  const keys = options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl)) : reloadingJwks(options.loadKeys ?? (async () => []), now);
  const revocations = options.jwksUrl ? undefined : options.revocations;
  const subjectRevocations = options.jwksUrl ? undefined : options.subjectRevocations;
  const cache = new TailKeyedMap<VerifiedToken>(10_000);

  async function refuseRevoked({ grantDigest, principal, payload }: VerifiedToken): Promise<void> {
    if (grantDigest !== undefined && (await revocations?.isRevoked(grantDigest))) throw new TokenRejectedError('revoked');
    if (await subjectRevocations?.isRevoked(subjectsOf(principal), payload.iat!)) throw new TokenRejectedError('revoked');
  }

  async function verifySignatureAndClaims(token: string, nowSeconds: number): Promise<VerifiedToken> {
    const { payload } = await jwtVerify(token, keys, {
      issuer: options.issuer,
      audience: options.audience,
      typ: 'at+jwt',
      algorithms: ALGORITHMS,
      requiredClaims: ['exp', 'iat', 'sub', 'client_id'],
      currentDate: now(),
    });
    // A token issued in the future comes from a clock (or a forger) we do not trust; jose checks
    // iat only against a maximum age. Clocks may differ by MAX_CLOCK_SKEW_SECONDS.
    if ((payload.iat ?? 0) > nowSeconds + MAX_CLOCK_SKEW_SECONDS) throw new TokenRejectedError('issued_in_future');
    const jkt = boundKeyFrom(payload);
    // Another issuer's gid, if it has one, is not ours to read.
    return { principal: principalFrom(payload), jkt, payload, grantDigest: revocations ? grantDigestFrom(payload) : undefined };
  }

  /** refuseRevoked from the copies alone: undefined when one of them must be read first. */
  function refuseRevokedNow({ grantDigest, principal, payload }: VerifiedToken): true | undefined {
    const grantRevoked = grantDigest === undefined || !revocations ? false : revocations.isRevokedNow?.(grantDigest);
    const subjectRevoked = subjectRevocations ? subjectRevocations.isRevokedNow?.(subjectsOf(principal), payload.iat!) : false;
    if (grantRevoked === undefined || subjectRevoked === undefined) return undefined;
    if (grantRevoked || subjectRevoked) throw new TokenRejectedError('revoked');
    return true;
  }

  /** The cached verification of token, unless there is none or the token has expired since. */
  function cachedVerification(token: string, nowSeconds: number): VerifiedToken | undefined {
    const verified = cache.get(token);
    return verified && verified.payload.exp! > nowSeconds ? verified : undefined;
  }

  async function verifyToken(token: string): Promise<VerifiedToken> {
    const nowSeconds = now().getTime() / 1000;
    let verified = cachedVerification(token, nowSeconds);
    if (!verified) {
      try {
        verified = await verifySignatureAndClaims(token, nowSeconds);
      } catch (error) {
        throw tokenRejectionFrom(error) ?? error;
      }
      cache.set(token, verified);
    }
    await refuseRevoked(verified);
    return verified;
  }

  return {
    issuer: options.issuer,
    audience: options.audience,
    verify: verifyToken,
    verifyCached(token) {
      const verified = cachedVerification(token, now().getTime() / 1000);
      return verified && refuseRevokedNow(verified) && verified;
    },
    verifyClaims: async (token) => (await verifyToken(token)).payload,
  };
}
