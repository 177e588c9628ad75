// The resource server's copy of revoked subjects (revoked_subjects, written by `orderpay users
// disable | erase` and `orderpay clients disable | delete`): a token is refused when its user or
// its client is, by the rule of src/core/subject-revocation.ts. Read incrementally, at most once
// per interval (src/http/revocation-copy.ts).
import { refusesTokenIssuedAt, type SubjectRevocation } from '../core/subject-revocation.ts';
import { createRevocationCopy, type CopiedRow, type RevocationCopyOptions } from './revocation-copy.ts';

export interface SubjectRevocationsOptions extends Omit<RevocationCopyOptions<CopiedRow>, 'loadChangedSince'> {
  /** Rows changed after `since` (RFC 3339; all live ones when undefined). */
  loadChangedSince: (since: string | undefined) => Promise<SubjectRevocation[]>;
}

export interface SubjectRevocations {
  /** Whether a token for these subjects, issued at `issuedAt` (epoch seconds), is refused. */
  isRevoked(subjects: readonly string[], issuedAt: number): Promise<boolean>;
  /** The same answer without waiting while the copy is fresh; undefined (or absent) when isRevoked must read first. */
  isRevokedNow?(subjects: readonly string[], issuedAt: number): boolean | undefined;
}

export function createSubjectRevocations({ loadChangedSince, ...options }: SubjectRevocationsOptions): Required<SubjectRevocations> {
  const copy = createRevocationCopy({
    ...options,
    loadChangedSince: async (since) => (await loadChangedSince(since)).map((row) => ({ ...row, key: row.subject })),
  });
  return {
    async isRevoked(subjects, issuedAt) {
      for (const subject of subjects) {
        const revocation = await copy.find(subject);
        if (revocation && refusesTokenIssuedAt(revocation, issuedAt)) return true;
      }
      return false;
    },
    isRevokedNow(subjects, issuedAt) {
      for (const subject of subjects) {
        const fresh = copy.findFresh(subject);
        if (!fresh) return undefined;
        if (fresh.row && refusesTokenIssuedAt(fresh.row, issuedAt)) return true;
      }
      return false;
    },
  };
}
