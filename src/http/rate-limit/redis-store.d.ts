// Types of @fastify/rate-limit's Redis store, which the package ships without declarations.
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { Redis } from 'ioredis';

  /** Fixed windows in Redis: INCR, and PEXPIRE on a window's first hit, in one Lua script. */
  export default class RedisStore {
    constructor(continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key?: string);
    incr(
      key: string,
      callback: (error: Error | null, result: { current: number; ttl: number } | null) => void,
      timeWindow: number,
      max: number,
    ): void;
  }
}
