// OpenID Connect Core §5.3: the claims of the user an access token stands for, as far as its
// scopes release them. The token is judged as the API judges it, its grant's revocation and its
// user's or client's read at the moment of asking (src/auth/own-token-verifier.ts); the user is
// read afresh, so a user who no longer exists (or is disabled) has no claims to give.
import type { Queryable } from '../db/db.ts';
import { describeTokenRejection, tokenRejectionFrom } from '../http/token-rejections.ts';
import type { TokenVerifier } from '../http/token-verifier.ts';
import { accountClaims, findAccountRow } from './account.ts';
import { releaseClaims, requireOpenidUser, UserinfoRefusal } from './userinfo.rules.ts';

type AccountClaims = ReturnType<typeof accountClaims>;

export interface Userinfo {
  /** The released claims, `sub` first. */
  claims: Pick<AccountClaims, 'sub'> & Partial<AccountClaims>;
  /** The client the token was issued to (its pages' origins are the ones CORS lets read the answer). */
  clientId: string;
}

/**
 * The userinfo of an access token; UserinfoRefusal (invalid_token, insufficient_scope) otherwise.
 * confirmBinding judges the token's DPoP binding against the request (src/http/token-binding.ts)
 * before anything of the user is read.
 */
export async function findUserinfo(
  db: Queryable,
  verifier: TokenVerifier,
  token: string,
  confirmBinding: (jkt: string | undefined) => Promise<void>,
): Promise<Userinfo> {
  const { principal, jkt } = await verifyAccessToken(verifier, token);
  await confirmBinding(jkt);
  const userId = requireOpenidUser(principal);
  const user = await findAccountRow(db, String(userId));
  if (!user) throw new UserinfoRefusal('invalid_token', "the token's user no longer exists");
  return { claims: releaseClaims(accountClaims(user), principal.scopes), clientId: principal.clientId };
}

/** RFC 6750 §3.1 invalid_token, naming the check that failed as the API does (docs/errors.md). */
async function verifyAccessToken(verifier: TokenVerifier, token: string) {
  try {
    return await verifier.verify(token);
  } catch (error) {
    const rejection = tokenRejectionFrom(error);
    if (!rejection) throw error;
    throw new UserinfoRefusal('invalid_token', describeTokenRejection(rejection));
  }
}
