// Rate-limit counters in PostgreSQL at a fraction of a round trip per request. Each process leases
// hits of a window from the shared counter (src/db/rate-limits.ts) and hands them out itself: a
// key's first lease in a window is 1 hit, each next one twice the last, up to 1% of the limit (at
// most 1000), and a busy key's next block is leased while the last one lasts. The database grants
// only the hits under the limit, so no window ever admits more than its limit, across any number
// of processes. What a lease costs is the other way: hits a process leased and did not use are
// lost to the others, so a caller spread over N processes may be refused up to (N−1) × (block − 1)
// hits early, under (N−1) % of its limit. A caller with one request a window costs one round trip
// and strands nothing; limits under 200 are counted one hit at a time, exactly.
// docs/decisions/0033-rate-limits.md has the bounds and the alternatives.
import type { Clock } from '../../core/clock.ts';
import type { Queryable } from '../../db/db.ts';
import { addRateLimitHits, takeBackRateLimitHit } from '../../db/rate-limits.ts';
import { type Counters, throttledWarning, type WarningLog, type WindowCount } from './counters.ts';

const MAX_BLOCK = 1000;
/** One lease takes at most this share of a limit: a limit of 600 is leased up to 6 at a time. */
const BLOCK_SHARE = 100;
/** Blocks this large are leased ahead of time; smaller ones (a caller's first requests) when needed. */
const AHEAD_FROM = 4;
/** How long a process takes a spent window's word before asking the database again. */
const SPENT_RECHECK_MS = 1000;
/** How often windows that have ended are dropped from memory. */
const SWEEP_EVERY_MS = 10_000;

/** The largest block of hits one lease takes for a limit. */
export function largestBlock(limit: number): number {
  return Math.max(1, Math.min(MAX_BLOCK, Math.floor(limit / BLOCK_SHARE)));
}

/** One key's window, as this process sees it. */
interface Window {
  start: number;
  end: number;
  /** The window's hits in the database after this process's last lease, capped at the limit. */
  counted: number;
  /** Leased by this process and not handed out yet. */
  unused: number;
  /** The next lease's size. */
  block: number;
  /** Until then the window counts as spent here, without asking the database. */
  spentUntil: number;
  /** The lease under way, if any: concurrent requests wait for it rather than each starting one. */
  leasing: Promise<void> | undefined;
}

export function createPostgresCounters(db: Queryable, { now, log }: { now: Clock; log: WarningLog }): Counters {
  const windows = new Map<string, Window>();
  const warn = throttledWarning(log, 'rate limits: a lease ahead of time failed (PostgreSQL)');
  let lastSweep = 0;

  function windowOf(key: string, windowMs: number, at: number): Window {
    const start = Math.floor(at / windowMs) * windowMs;
    let window = windows.get(key);
    if (window?.start === start) return window;
    window = { start, end: start + windowMs, counted: 0, unused: 0, block: 1, spentUntil: 0, leasing: undefined };
    windows.set(key, window);
    if (at - lastSweep > SWEEP_EVERY_MS) {
      lastSweep = at;
      for (const [other, w] of windows) if (w.end <= at) windows.delete(other);
    }
    return window;
  }

  /** One lease of window's next block; the hits granted are those that fit under the limit. */
  function lease(key: string, window: Window, limit: number): Promise<void> {
    const wanted = Math.min(window.block, largestBlock(limit));
    const leasing = addRateLimitHits(db, key, new Date(window.start), wanted).then((hits) => {
      const granted = Math.max(0, Math.min(wanted, limit - (hits - wanted)));
      window.unused += granted;
      window.counted = Math.min(hits, limit);
      window.block = Math.min(window.block * 2, MAX_BLOCK);
      if (granted === 0) window.spentUntil = Math.min(now().getTime() + SPENT_RECHECK_MS, window.end);
    });
    window.leasing = leasing;
    const done = () => {
      if (window.leasing === leasing) window.leasing = undefined;
    };
    leasing.then(done, done);
    return leasing;
  }

  /** The hit from what this process holds of key's window: a leased hit, or the word that it is spent; undefined when a lease is needed. */
  function hitHeld(key: string, window: Window, limit: number): WindowCount | undefined {
    const at = now().getTime();
    if (window.unused > 0) {
      window.unused--;
      // A busy caller's next block is leased while this one lasts, so it never waits for one.
      const next = Math.min(window.block, largestBlock(limit));
      if (next >= AHEAD_FROM && window.unused * 2 < next && !window.leasing && window.counted < limit)
        lease(key, window, limit).catch(warn);
      return { current: window.counted - window.unused, ttl: window.end - at };
    }
    if (window.spentUntil > at) return { current: limit + 1, ttl: window.end - at };
    return undefined;
  }

  async function hit(key: string, windowMs: number, limit: number): Promise<WindowCount> {
    const window = windowOf(key, windowMs, now().getTime());
    for (;;) {
      const held = hitHeld(key, window, limit);
      if (held) return held;
      await (window.leasing ?? lease(key, window, limit));
    }
  }

  function hitNow(key: string, windowMs: number, limit: number): WindowCount | undefined {
    return hitHeld(key, windowOf(key, windowMs, now().getTime()), limit);
  }

  async function giveBack(key: string, windowMs: number): Promise<void> {
    const at = now().getTime();
    const start = Math.floor(at / windowMs) * windowMs;
    await takeBackRateLimitHit(db, key, new Date(start));
    // The hit may have been the one that spent the window: ask the database next time.
    const window = windows.get(key);
    if (window?.start === start) window.spentUntil = 0;
  }

  return { kind: 'postgres', hit, hitNow, giveBack, close: async () => windows.clear() };
}
