// The resource server's copy of revoked grants (revoked_grants, written by the authorization
// server): access tokens whose `gid` names one are refused. The copy is read incrementally, lazily
// by the request that finds it stale, at most once per interval: one small query a second per
// process, and every process sees a revocation within about that interval.
import { systemClock, type Clock } from '../core/clock.ts';

/**
 * Each read starts this far before the newest revocation already seen. revoked_at is the time its
 * INSERT began, which commits a moment later, so a row may become visible after a newer one was
 * read; a row is re-read rather than missed (the set dedupes). Twice the default statement timeout.
 */
const REREAD_OVERLAP_MS = 30_000;

/** A revoked grant as the authorization server records it (src/auth/revoked-grants.store.ts). */
interface RevokedGrant {
  grantDigest: string;
  /** RFC 3339, the database's clock. */
  revokedAt: string;
  expiresAt: string;
}

export interface GrantRevocationsOptions {
  /** Revocations after `since` (RFC 3339; all live ones when undefined). */
  loadRevokedSince: (since: string | undefined) => Promise<RevokedGrant[]>;
  /** How stale the copy may get; 0 reads on every check (tests). */
  intervalMs?: number;
  /** Wall clock that token expiry is judged by: entries are dropped when no token can need them. */
  now?: Clock;
  /** Monotonic milliseconds the interval is measured with. */
  elapsed?: () => number;
}

export interface GrantRevocations {
  /** Whether the grant with this digest was revoked, as of at most `intervalMs` ago. */
  isRevoked(grantDigest: string): Promise<boolean>;
}

export function createGrantRevocations({
  loadRevokedSince,
  intervalMs = 1000,
  now = systemClock,
  elapsed = () => performance.now(),
}: GrantRevocationsOptions): GrantRevocations {
  /** Grant digest → when its record expires (epoch ms). */
  const revoked = new Map<string, number>();
  let newestRevokedAtMs: number | undefined;
  /** When the last completed read started: its rows are at least that fresh. */
  let freshAsOf = -Infinity;
  let inFlight: { startedAt: number; done: Promise<void> } | undefined;

  async function readRevocations(startedAt: number): Promise<void> {
    const since = newestRevokedAtMs === undefined ? undefined : new Date(newestRevokedAtMs - REREAD_OVERLAP_MS).toISOString();
    for (const row of await loadRevokedSince(since)) {
      revoked.set(row.grantDigest, Date.parse(row.expiresAt));
      newestRevokedAtMs = Math.max(newestRevokedAtMs ?? -Infinity, Date.parse(row.revokedAt));
    }
    const nowMs = now().getTime();
    for (const [digest, expiresAt] of revoked) if (expiresAt <= nowMs) revoked.delete(digest);
    freshAsOf = Math.max(freshAsOf, startedAt);
  }

  /** Reads unless fresh enough; requests that find it stale together share one read. */
  function refreshWhenStale(): Promise<void> | undefined {
    const at = elapsed();
    if (at - freshAsOf < intervalMs) return undefined;
    if (inFlight && at - inFlight.startedAt < intervalMs) return inFlight.done;
    const read = { startedAt: at, done: readRevocations(at) };
    inFlight = read;
    const forgetRead = () => {
      if (inFlight === read) inFlight = undefined;
    };
    // Both ways: a failed read is not an answer, the next check reads again.
    read.done.then(forgetRead, forgetRead);
    return read.done;
  }

  return {
    async isRevoked(grantDigest) {
      await refreshWhenStale();
      return revoked.has(grantDigest);
    },
  };
}
