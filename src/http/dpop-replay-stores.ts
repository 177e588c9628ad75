// The store of used DPoP proofs the configuration names (./dpop-replay.ts): PostgreSQL's dpop_proofs
// by default, Redis when REDIS_URL is set.
import type { Clock } from '../core/clock.ts';
import type { Queryable } from '../db/db.ts';
import { recordDpopProof } from '../db/dpop-proofs.ts';
import { type DpopReplayStore, proofMemoryEnd } from './dpop-replay.ts';
import type { WarningLog } from './rate-limit/counters.ts';

function createPostgresReplayStore(db: Queryable, now: Clock): DpopReplayStore {
  return {
    kind: 'postgres',
    recordFirstUse: (jkt, jti, iat) => recordDpopProof(db, jkt, jti, new Date(proofMemoryEnd(iat)), now()),
    close: async () => {},
  };
}

export interface DpopReplayOptions {
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  now: Clock;
  log: WarningLog;
}

/** The store REDIS_URL names, else the database's. */
export async function createDpopReplayStore(db: Queryable, options: DpopReplayOptions): Promise<DpopReplayStore> {
  if (options.redisUrl) {
    // ioredis is loaded only where Redis is configured, as for the counters.
    const { createRedisReplayStore } = await import('./dpop-replay-redis.ts');
    return createRedisReplayStore(options.redisUrl, options.redisKeyPrefix, options);
  }
  return createPostgresReplayStore(db, options.now);
}
