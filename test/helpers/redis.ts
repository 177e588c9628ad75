// The Redis the rate-limit tests count in (TEST_REDIS_URL, else the local one), a key prefix of
// their own per use so that parallel runs never share a counter, and an address nothing listens on.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** A closed port on loopback: connecting is refused at once. */
export const UNREACHABLE_REDIS_URL = 'redis://127.0.0.1:6290';

export function uniqueRedisPrefix(): string {
  return `orderpay-test:${randomUUID()}:`;
}

/** Deletes the keys under prefix (a test's own), once it is done. */
export async function dropRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

/** A log that keeps the warnings it is given, so a test can see that a failure was reported. */
export function recordingLog(): { warn: (...args: unknown[]) => void; warnings: unknown[][] } {
  const warnings: unknown[][] = [];
  return { warn: (...args: unknown[]) => void warnings.push(args), warnings };
}
