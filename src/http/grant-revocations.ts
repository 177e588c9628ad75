// The resource server's copy of revoked grants (revoked_grants, written by the authorization
// server): access tokens whose `gid` names one are refused. Read incrementally, at most once per
// interval (src/http/revocation-copy.ts).
import { createRevocationCopy, type CopiedRow, type RevocationCopyOptions } from './revocation-copy.ts';

/** A revoked grant as the authorization server records it (src/auth/revoked-grants.store.ts). */
interface RevokedGrant {
  grantDigest: string;
  /** RFC 3339, the database's clock. */
  revokedAt: string;
  expiresAt: string;
}

export interface GrantRevocationsOptions extends Omit<RevocationCopyOptions<CopiedRow>, 'loadChangedSince'> {
  /** Revocations after `since` (RFC 3339; all live ones when undefined). */
  loadRevokedSince: (since: string | undefined) => Promise<RevokedGrant[]>;
}

export interface GrantRevocations {
  /** Whether the grant with this digest was revoked, as of at most `intervalMs` ago. */
  isRevoked(grantDigest: string): Promise<boolean>;
  /** The same answer without waiting while the copy is fresh; undefined (or absent) when isRevoked must read first. */
  isRevokedNow?(grantDigest: string): boolean | undefined;
}

export function createGrantRevocations({ loadRevokedSince, ...options }: GrantRevocationsOptions): Required<GrantRevocations> {
  const copy = createRevocationCopy({
    ...options,
    // A grant's row never changes after it is written: its change is its revocation.
    loadChangedSince: async (since) =>
      (await loadRevokedSince(since)).map((grant) => ({ key: grant.grantDigest, changedAt: grant.revokedAt, expiresAt: grant.expiresAt })),
  });
  return {
    isRevoked: async (grantDigest) => (await copy.find(grantDigest)) !== undefined,
    isRevokedNow: (grantDigest) => {
      const fresh = copy.findFresh(grantDigest);
      return fresh && fresh.row !== undefined;
    },
  };
}
