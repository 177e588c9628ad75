// What the rate-limit tests share: small budgets over either store, the fields parsed, and the
// 429 a spent budget answers.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { RateLimitsConfig } from '../../../src/config.ts';
import { serverUrl } from '../../helpers/db.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { TEST_REDIS_URL, uniqueRedisPrefix } from '../../helpers/redis.ts';

export const WINDOW_SECONDS = 60;

/** The database's windows follow the clock: frozen mid-window, no window ends during a test. */
const WINDOW_MS = WINDOW_SECONDS * 1000;
export const FROZEN = new Date(Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS + WINDOW_MS / 2);
export const frozenClock = () => FROZEN;

export interface Store {
  name: string;
  /** Budgets of reads, writes and payments, counted in this store. */
  limits(budgets: { reads: number; writes: number; payments: number }, redisKeyPrefix?: string): RateLimitsConfig;
}

export const STORES: Store[] = [
  {
    name: serverUrl ? 'PostgreSQL' : 'PGlite',
    limits: (budgets) => ({ windowSeconds: WINDOW_SECONDS, ...budgets, redisUrl: undefined, redisKeyPrefix: 'unused:' }),
  },
  {
    name: 'Redis',
    limits: (budgets, prefix = uniqueRedisPrefix()) => ({
      windowSeconds: WINDOW_SECONDS,
      ...budgets,
      redisUrl: TEST_REDIS_URL,
      redisKeyPrefix: prefix,
    }),
  },
];

/** A RateLimit field's parameters: `"reads";r=2;t=41` → { policy: 'reads', r: 2, t: 41 }. */
export function serviceLimit(res: LightMyRequestResponse): { policy: string; r: number; t: number } {
  const field = String(res.headers.ratelimit);
  const match = /^"([a-z]+)";r=(\d+);t=(\d+)$/.exec(field);
  assert.ok(match, `RateLimit: ${field}`);
  return { policy: match[1]!, r: Number(match[2]), t: Number(match[3]) };
}

/** Both fields as a response of policy should carry them, with r requests left. */
export function expectFields(res: LightMyRequestResponse, policy: string, quota: number, r: number): void {
  assert.equal(res.headers['ratelimit-policy'], `"${policy}";q=${quota};w=${WINDOW_SECONDS}`, `${res.statusCode} ${res.body}`);
  const limit = serviceLimit(res);
  assert.equal(limit.policy, policy);
  assert.equal(limit.r, r, `RateLimit: ${String(res.headers.ratelimit)}`);
  assert.ok(limit.t >= 1 && limit.t <= WINDOW_SECONDS, `t=${limit.t}`);
}

/** 429 RATE_LIMITED for policy: Retry-After is the window's end, as t says. */
export function expectRateLimited(res: LightMyRequestResponse, policy: string, quota: number, instance: string): void {
  expectProblem(
    res,
    429,
    'RATE_LIMITED',
    instance,
    `The ${policy} budget of ${quota} per ${WINDOW_SECONDS} s is used up; retry in ${res.headers['retry-after']} s.`,
    { violatedPolicies: [policy] },
  );
  expectFields(res, policy, quota, 0);
  assert.equal(Number(res.headers['retry-after']), Math.max(1, serviceLimit(res).t));
}
