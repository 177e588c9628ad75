// A resource server's copy of a table of revocations the authorization server writes (revoked
// grants, revoked subjects), read incrementally: lazily, by the check that finds it stale, at most
// once per interval. One small query a second per process, and every process sees a revocation
// within about that interval.
import { systemClock, type Clock } from '../core/clock.ts';

/**
 * Each read starts this far before the newest change already seen. A row's change time is when
 * its statement began, which commits a moment later, so a row may become visible after a newer
 * one was read; a row is re-read rather than missed (the map dedupes). Twice the default statement
 * timeout.
 */
const REREAD_OVERLAP_MS = 30_000;

/** A row of the copy: its key, when it last changed, and when no token can need it (null: never). */
export interface CopiedRow {
  key: string;
  /** RFC 3339, the database's clock. */
  changedAt: string;
  expiresAt: string | null;
}

export interface RevocationCopyOptions<Row extends CopiedRow> {
  /** Rows changed after `since` (RFC 3339; all live ones when undefined). */
  loadChangedSince: (since: string | undefined) => Promise<Row[]>;
  /** How stale the copy may get; 0 reads on every check (tests). */
  intervalMs?: number;
  /** Wall clock that token expiry is judged by: rows are dropped when no token can need them. */
  now?: Clock;
  /** Monotonic milliseconds the interval is measured with. */
  elapsed?: () => number;
}

export interface RevocationCopy<Row> {
  /** The row with this key, as of at most `intervalMs` ago; a failed read rejects (no stale answer). */
  find(key: string): Promise<Row | undefined>;
  /** The same answer without waiting, while the copy is fresh: `{ row }`; undefined when find must read first. */
  findFresh(key: string): { row: Row | undefined } | undefined;
}

export function createRevocationCopy<Row extends CopiedRow>({
  loadChangedSince,
  intervalMs = 1000,
  now = systemClock,
  elapsed = () => performance.now(),
}: RevocationCopyOptions<Row>): RevocationCopy<Row> {
  const rows = new Map<string, Row>();
  let newestChangeMs: number | undefined;
  /** When the last completed read started: its rows are at least that fresh. */
  let freshAsOf = -Infinity;
  let inFlight: { startedAt: number; done: Promise<void> } | undefined;

  async function readChanges(startedAt: number): Promise<void> {
    const since = newestChangeMs === undefined ? undefined : new Date(newestChangeMs - REREAD_OVERLAP_MS).toISOString();
    for (const row of await loadChangedSince(since)) {
      rows.set(row.key, row);
      newestChangeMs = Math.max(newestChangeMs ?? -Infinity, Date.parse(row.changedAt));
    }
    const nowMs = now().getTime();
    for (const [key, row] of rows) if (row.expiresAt !== null && Date.parse(row.expiresAt) <= nowMs) rows.delete(key);
    freshAsOf = Math.max(freshAsOf, startedAt);
  }

  /** Whether the last completed read is recent enough to answer from. */
  const isFresh = (at: number) => at - freshAsOf < intervalMs;

  /** Reads unless fresh enough; checks that find it stale together share one read. */
  function refreshWhenStale(): Promise<void> | undefined {
    const at = elapsed();
    if (isFresh(at)) return undefined;
    if (inFlight && at - inFlight.startedAt < intervalMs) return inFlight.done;
    const read = { startedAt: at, done: readChanges(at) };
    inFlight = read;
    const forgetRead = () => {
      if (inFlight === read) inFlight = undefined;
    };
    // Both ways: a failed read is not an answer, the next check reads again.
    read.done.then(forgetRead, forgetRead);
    return read.done;
  }

  return {
    async find(key) {
      await refreshWhenStale();
      return rows.get(key);
    },
    findFresh(key) {
      return isFresh(elapsed()) ? { row: rows.get(key) } : undefined;
    },
  };
}
