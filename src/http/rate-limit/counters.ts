// Where rate limits are counted, as one small interface: PostgreSQL by default, Redis when
// REDIS_URL is set. The API's limits reach it through @fastify/rate-limit (./rate-limit.ts); the
// sign-in limits (src/auth/rate-limits.ts) use it directly, since they also give attempts back.
import type { FastifyBaseLogger } from 'fastify';

/** A window's count after one more hit, as @fastify/rate-limit's stores report it. */
export interface WindowCount {
  /** Hits of the window so far, this one included: over the limit means refused. */
  current: number;
  /** Milliseconds until the window ends. */
  ttl: number;
}

export interface Counters {
  /** Names the store in logs and in what a failure tells clients. */
  readonly kind: 'postgres' | 'redis';
  /**
   * Counts one hit of key in its window of windowMs (limit lets a store hand out hits ahead of
   * time, never past it). Rejects when the store cannot be reached: the caller decides whether
   * that opens or closes its door.
   */
  hit(key: string, windowMs: number, limit: number): Promise<WindowCount>;
  /**
   * The same hit without waiting, where the store holds it in this process (PostgreSQL's leased
   * hits); undefined when hit must be asked.
   */
  hitNow?(key: string, windowMs: number, limit: number): WindowCount | undefined;
  /** Takes back one hit of key's current window. */
  giveBack(key: string, windowMs: number): Promise<void>;
  close(): Promise<void>;
}

/** All the counters log: a store they cannot reach. */
export type WarningLog = Pick<FastifyBaseLogger, 'warn'>;

/** Logs a failing store at most once per interval: an outage must not become a log flood. */
export function throttledWarning(log: WarningLog, message: string, intervalMs = 10_000): (error: unknown) => void {
  let last = Number.NEGATIVE_INFINITY;
  return function warnAboutStore(error: unknown) {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    log.warn({ err: error }, message);
  };
}
