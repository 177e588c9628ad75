// Which DPoP proofs were used already, across every process (RFC 9449 §11.1): in PostgreSQL by
// default, in Redis when REDIS_URL is set, like the rate-limit counters (./rate-limit/counters.ts).
// A proof's jti is kept, scoped by the key that signed it, until no process could accept the proof
// any more: DPOP_PROOF_MAX_AGE_SECONDS after its iat, and a minute more for the clocks of the
// processes. A store that cannot be reached rejects: the caller refuses the request (fail closed).
// The stores themselves: ./dpop-replay-stores.ts, ./dpop-replay-redis.ts.
import { DPOP_PROOF_MAX_AGE_SECONDS } from './dpop.ts';

/** Clocks of the processes may differ by this much: a jti is kept that much longer. */
const CLOCK_MARGIN_SECONDS = 60;

export interface DpopReplayStore {
  /** Names the store in logs. */
  readonly kind: 'postgres' | 'redis';
  /**
   * Records that key jkt signed a proof with this jti, issued at iat (seconds); false when it was
   * recorded before (a replay). Rejects when the store cannot be reached.
   */
  recordFirstUse(jkt: string, jti: string, iat: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Until when a proof issued at iat must be remembered, in milliseconds since the epoch. */
export function proofMemoryEnd(iat: number): number {
  return (iat + DPOP_PROOF_MAX_AGE_SECONDS + CLOCK_MARGIN_SECONDS) * 1000;
}
