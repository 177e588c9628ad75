// Fixed-window rate limits kept in the database, so every process of a deployment counts
// together without another service. One upsert per counted event.
import type { Queryable } from './db.ts';

export interface RateLimitRule {
  /** Distinguishes rules sharing a key space, e.g. "login-account". */
  name: string;
  limit: number;
  windowSeconds: number;
}

export interface RateLimitState {
  limited: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

function windowOf(rule: RateLimitRule, now: Date): { start: Date; resetSeconds: number } {
  const windowMs = rule.windowSeconds * 1000;
  const start = Math.floor(now.getTime() / windowMs) * windowMs;
  return { start: new Date(start), resetSeconds: Math.max(1, Math.ceil((start + windowMs - now.getTime()) / 1000)) };
}

function stateOf(rule: RateLimitRule, hits: number, resetSeconds: number): RateLimitState {
  return { limited: hits > rule.limit, limit: rule.limit, remaining: Math.max(0, rule.limit - hits), resetSeconds };
}

/** Counts one event for key under rule; limited once the window holds more than the limit. */
export async function hitRateLimit(db: Queryable, rule: RateLimitRule, key: string, now = new Date()): Promise<RateLimitState> {
  const { start, resetSeconds } = windowOf(rule, now);
  const { rows } = await db.query<{ hits: number }>(
    `INSERT INTO rate_limit_hits (key, window_start, hits) VALUES ($1, $2, 1)
     ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_hits.hits + 1 RETURNING hits`,
    [`${rule.name}:${key}`, start.toISOString()],
  );
  return stateOf(rule, rows[0]!.hits, resetSeconds);
}

/** Takes one counted event back (e.g. a sign-in attempt that succeeded). */
export async function releaseRateLimitHit(db: Queryable, rule: RateLimitRule, key: string, now = new Date()): Promise<void> {
  const { start } = windowOf(rule, now);
  await db.query('UPDATE rate_limit_hits SET hits = hits - 1 WHERE key = $1 AND window_start = $2 AND hits > 0', [
    `${rule.name}:${key}`,
    start.toISOString(),
  ]);
}

export async function purgeRateLimitWindows(db: Queryable, olderThanSeconds = 24 * 3600): Promise<void> {
  await db.query(`DELETE FROM rate_limit_hits WHERE window_start < now() - make_interval(secs => $1)`, [olderThanSeconds]);
}
