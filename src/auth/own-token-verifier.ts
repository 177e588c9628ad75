// orderpay's own access tokens, judged as the API judges them (src/http/token-verifier.ts) by the
// authorization server's endpoints that take them, introspection and userinfo: the keys from the
// database, and a grant's revocation, or its user's or client's (disabled, erased, deleted), read
// at the moment of asking rather than from the API's copies a second old
// (src/http/grant-revocations.ts, src/http/subject-revocations.ts).
import { refusesTokenIssuedAt } from '../core/subject-revocation.ts';
import type { Queryable } from '../db/db.ts';
import { createTokenVerifier, type TokenVerifier } from '../http/token-verifier.ts';
import { listPublishedKeys } from './keys.store.ts';
import { isGrantRevoked } from './revoked-grants.store.ts';
import { findSubjectRevocations } from './revoked-subjects.store.ts';

export function createOwnTokenVerifier(db: Queryable, settings: { issuer: string; audience: string }): TokenVerifier {
  return createTokenVerifier({
    ...settings,
    loadKeys: () => listPublishedKeys(db),
    // No isRevokedNow: each check reads the database.
    revocations: { isRevoked: (grantDigest) => isGrantRevoked(db, grantDigest) },
    subjectRevocations: {
      isRevoked: async (subjects, issuedAt) =>
        (await findSubjectRevocations(db, subjects)).some((revocation) => refusesTokenIssuedAt(revocation, issuedAt)),
    },
  });
}
