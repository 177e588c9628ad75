// Fixed-window rate-limit counters in PostgreSQL (rate_limit_hits), so every process of a
// deployment counts together without another service. The SQL only: how the API spends them is
// src/http/rate-limit/postgres-counters.ts.
import type { Queryable } from './db.ts';

/**
 * Adds n hits to key's window and returns the window's hits afterwards, every process's included.
 * The hits before were that less n, so the caller knows exactly how many of its n fit under a limit.
 */
export async function addRateLimitHits(db: Queryable, key: string, windowStart: Date, n: number): Promise<number> {
  const { rows } = await db.query<{ hits: number }>(
    `INSERT INTO rate_limit_hits (key, window_start, hits) VALUES ($1, $2, $3)
     ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_hits.hits + excluded.hits RETURNING hits`,
    [key, windowStart.toISOString(), n],
  );
  return rows[0]!.hits;
}

/** Takes one hit of key's window back (a sign-in attempt that succeeded); never below zero. */
export async function takeBackRateLimitHit(db: Queryable, key: string, windowStart: Date): Promise<void> {
  await db.query('UPDATE rate_limit_hits SET hits = hits - 1 WHERE key = $1 AND window_start = $2 AND hits > 0', [
    key,
    windowStart.toISOString(),
  ]);
}

/** Deletes every window of key (a counter named after an email that is being erased). */
export async function deleteRateLimitKey(db: Queryable, key: string): Promise<void> {
  await db.query('DELETE FROM rate_limit_hits WHERE key = $1', [key]);
}

export async function purgeRateLimitWindows(db: Queryable, olderThanSeconds = 24 * 3600): Promise<void> {
  await db.query(`DELETE FROM rate_limit_hits WHERE window_start < now() - make_interval(secs => $1)`, [olderThanSeconds]);
}
