// The jti of accepted DPoP proofs in Redis (REDIS_URL): one SET NX PX a proof, under the
// deployment's key prefix, expiring when no process could accept the proof any more. Like the
// rate-limit counters' client, it never queues a command while Redis is away: the request is refused.
import { Redis } from 'ioredis';
import type { Clock } from '../core/clock.ts';
import { type DpopReplayStore, proofMemoryEnd } from './dpop-replay.ts';
import { REDIS_CLIENT_OPTIONS } from './rate-limit/redis-counters.ts';
import { throttledWarning, type WarningLog } from './rate-limit/counters.ts';

/** Connected before it resolves; an unreachable Redis is logged and retried in the background. */
export async function createRedisReplayStore(
  url: string,
  keyPrefix: string,
  { now, log }: { now: Clock; log: WarningLog },
): Promise<DpopReplayStore> {
  const redis = new Redis(url, REDIS_CLIENT_OPTIONS);
  redis.on('error', throttledWarning(log, 'DPoP proofs: Redis is unreachable'));
  await redis.connect().catch(() => {});
  return {
    kind: 'redis',
    async recordFirstUse(jkt, jti, iat) {
      const ttlMs = Math.max(1, Math.ceil(proofMemoryEnd(iat) - now().getTime()));
      // The jkt is a fixed-length thumbprint: no pair of key and jti spells another's key.
      const set = await redis.set(`${keyPrefix}dpop:${jkt}:${jti}`, '1', 'PX', ttlMs, 'NX');
      return set === 'OK';
    },
    close: async () => redis.disconnect(),
  };
}
