// The store of used DPoP proofs the configuration names (./dpop-replay.ts): PostgreSQL's dpop_proofs
// by default, Redis when REDIS_URL is set.
import type { Clock } from '../core/clock.ts';
import type { Queryable } from '../db/db.ts';
import { dpopProofKey, type DpopProofRow, recordDpopProofs } from '../db/dpop-proofs.ts';
import { type DpopReplayStore, proofMemoryEnd } from './dpop-replay.ts';
import type { WarningLog } from './rate-limit/counters.ts';

/** Most proofs per statement. */
const MAX_BATCH = 100;

interface PendingProof extends DpopProofRow {
  resolve: (recorded: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * The proofs of one turn of the event loop go to PostgreSQL together, in one INSERT (as the point
 * reads of a turn share theirs, src/db/coalesce.ts): a request waits for its own proof's row, never
 * for a later one. The same proof twice in one turn is a replay the second time, answered here.
 */
function createPostgresReplayStore(db: Queryable, now: Clock): DpopReplayStore {
  let pending = new Map<string, PendingProof>();

  function recordChunk(proofs: PendingProof[]): void {
    recordDpopProofs(db, proofs, now()).then(
      (recorded) => {
        for (const proof of proofs) proof.resolve(recorded.has(dpopProofKey(proof.jkt, proof.jti)));
      },
      (error: unknown) => {
        for (const proof of proofs) proof.reject(error);
      },
    );
  }

  function flushTurn(): void {
    const proofs = [...pending.values()];
    pending = new Map();
    for (let start = 0; start < proofs.length; start += MAX_BATCH) recordChunk(proofs.slice(start, start + MAX_BATCH));
  }

  return {
    kind: 'postgres',
    recordFirstUse(jkt, jti, iat) {
      const key = dpopProofKey(jkt, jti);
      if (pending.has(key)) return Promise.resolve(false);
      if (pending.size === 0) setImmediate(flushTurn);
      return new Promise((resolve, reject) => {
        pending.set(key, { jkt, jti, expiresAt: new Date(proofMemoryEnd(iat)), resolve, reject });
      });
    },
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
