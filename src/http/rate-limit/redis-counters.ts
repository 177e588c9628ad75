// Rate-limit counters in Redis (REDIS_URL): @fastify/rate-limit's own Redis store over ioredis,
// one Lua call per hit, pipelined with the other requests of the same tick. A window starts at a
// key's first hit (PEXPIRE), not on the clock. The client never queues a command while Redis is
// away: it fails at once, and the caller opens or closes its door (./rate-limit.ts).
import RedisStore from '@fastify/rate-limit/store/RedisStore.js';
import { Redis } from 'ioredis';
import { type Counters, throttledWarning, type WarningLog, type WindowCount } from './counters.ts';

// Never below zero, and never on a key that has expired: DECR would create it without a TTL,
// and that window would then never end.
const GIVE_BACK = `
local hits = tonumber(redis.call('GET', KEYS[1]))
if hits and hits > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;

/**
 * How orderpay's Redis clients behave (the counters here, the write positions of
 * ../read-routing.ts): connected by the caller, never queueing a command while Redis is away, a
 * command not answered within 500 ms counting as Redis being unreachable.
 */
export const REDIS_CLIENT_OPTIONS = {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  enableAutoPipelining: true,
  connectTimeout: 1000,
  commandTimeout: 500,
} as const;

type RedisWithGiveBack = Redis & { rateLimitGiveBack(key: string): Promise<number> };

/** Connected before it resolves; an unreachable Redis is logged and retried in the background. */
export async function createRedisCounters(url: string, keyPrefix: string, log: WarningLog): Promise<Counters> {
  const redis = new Redis(url, REDIS_CLIENT_OPTIONS) as RedisWithGiveBack;
  redis.on('error', throttledWarning(log, 'rate limits: Redis is unreachable'));
  redis.defineCommand('rateLimitGiveBack', { numberOfKeys: 1, lua: GIVE_BACK });
  const store = new RedisStore(false, false, redis, keyPrefix);
  // The first connection fails like any later one: ioredis keeps retrying, the limits meanwhile
  // open or close their door.
  await redis.connect().catch(() => {});

  function hit(key: string, windowMs: number, limit: number): Promise<WindowCount> {
    return new Promise((resolve, reject) => {
      store.incr(key, (error, result) => (error || !result ? reject(error ?? new Error('no reply')) : resolve(result)), windowMs, limit);
    });
  }

  return {
    kind: 'redis',
    hit,
    giveBack: async (key) => {
      await redis.rateLimitGiveBack(`${keyPrefix}${key}`);
    },
    close: async () => redis.disconnect(),
  };
}
