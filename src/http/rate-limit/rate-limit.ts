// The API's rate limits: three budgets per window (reads; writes; payments and refunds), each per
// caller (the access token's client and subject) or, without a valid token, per client IP.
// They are counted in ./counters.ts's store, straight (PostgreSQL's leased hits without waiting;
// @fastify/rate-limit counts only the authorization server's, src/auth/rate-limits.ts); the responses carry the current
// draft's RateLimit-Policy and RateLimit fields (./fields.ts) rather than the plugin's older ones,
// and a refusal is a problem: 429 RATE_LIMITED with Retry-After. A store that cannot be reached
// lets reads and writes through and refuses payments (503 RATE_LIMIT_UNAVAILABLE): see
// docs/decisions/0033-rate-limits.md.
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import type { RateLimitsConfig } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../db/db.ts';
import { ProblemError } from '../problem.ts';
import { type Counters, throttledWarning, type WarningLog, type WindowCount } from './counters.ts';
import { policyField, serviceLimitField } from './fields.ts';
import { createPostgresCounters } from './postgres-counters.ts';

export type Budget = 'reads' | 'writes' | 'payments';

const BUDGETS: readonly Budget[] = ['reads', 'writes', 'payments'];

/**
 * What a budget does while it cannot be counted. Payments move money and reach the processor:
 * none without its limit. Reads and writes are authenticated and move none: an outage of the
 * counters' store must not become an outage of the API.
 */
const REFUSED_WHEN_UNCOUNTED: Record<Budget, boolean> = { reads: false, writes: false, payments: true };

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The counters config chooses: Redis when REDIS_URL is set, else the database. */
export async function createCounters(config: RateLimitsConfig, db: Db, options: { now: Clock; log: WarningLog }): Promise<Counters> {
  if (config.redisUrl) {
    // ioredis is loaded only where Redis counts: a process without REDIS_URL never needs it.
    const { createRedisCounters } = await import('./redis-counters.ts');
    return createRedisCounters(config.redisUrl, config.redisKeyPrefix, options.log);
  }
  return createPostgresCounters(db, options);
}

/** @fastify/rate-limit's store interface over the counters. */
function storeOf(counters: Counters) {
  return class CountersStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number) {
      counters.hit(key, timeWindow, max).then(
        (result) => callback(null, result),
        (error: Error) => callback(error),
      );
    }

    /** One store for every limit: the keys name their budget. */
    child() {
      return this;
    }
  };
}

/** Whose budget a request spends: the caller's, or its IP's (IPv6 by /64) without a valid token. */
function partitionOf(request: FastifyRequest): string {
  const caller = request.principal;
  // The client id's length first, so that no pair of client and subject can spell another's key.
  return caller ? `caller:${caller.clientId.length}:${caller.clientId}:${caller.subject}` : `ip:${normalizeIP(request.ip)}`;
}

async function rateLimits(app: FastifyInstance, { counters, config }: { counters: Counters; config: RateLimitsConfig }): Promise<void> {
  await app.register(fastifyRateLimit, { global: false, store: storeOf(counters), skipOnError: false });
  // The API's budgets are counted straight in the counters (one call, none of the plugin's
  // promises per request); the plugin still counts the authorization server's (src/auth/rate-limits.ts).
  const windowMs = config.windowSeconds * 1000;
  const limits = Object.fromEntries(
    BUDGETS.map((budget) => [
      budget,
      { quota: config[budget], policy: policyField({ name: budget, quota: config[budget], windowSeconds: config.windowSeconds }) },
    ]),
  ) as Record<Budget, { quota: number; policy: string }>;
  const warn = throttledWarning(
    app.log,
    `rate limits cannot be counted (${counters.kind}): reads and writes pass unlimited, payments are refused`,
  );

  app.decorate('countRequest', async function countRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const budget = request.routeOptions.config.rateLimitBudget ?? 'reads';
    const { quota, policy } = limits[budget];
    reply.header('ratelimit-policy', policy);
    const key = `${budget}:${partitionOf(request)}`;
    let counted: WindowCount;
    try {
      counted = counters.hitNow?.(key, windowMs, quota) ?? (await counters.hit(key, windowMs, quota));
    } catch (error) {
      warn(error);
      if (!REFUSED_WHEN_UNCOUNTED[budget]) return;
      throw new ProblemError('RATE_LIMIT_UNAVAILABLE', `The ${budget} limit cannot be counted just now; nothing was done. Retry shortly.`);
    }
    const ttlInSeconds = Math.ceil(counted.ttl / 1000);
    reply.header('ratelimit', serviceLimitField(budget, Math.max(0, quota - counted.current), ttlInSeconds));
    if (counted.current <= quota) return;
    const retryAfter = Math.max(1, ttlInSeconds);
    throw new ProblemError(
      'RATE_LIMITED',
      `The ${budget} budget of ${quota} per ${config.windowSeconds} s is used up; retry in ${retryAfter} s.`,
      { headers: { 'retry-after': String(retryAfter) }, extensions: { violatedPolicies: [budget] } },
    );
  });
  app.addHook('onClose', function closeCounters() {
    return counters.close();
  });
}

/** Registered before the routes; the resource routes then call limitRoutes. */
export const rateLimitPlugin = fp(rateLimits, {
  name: 'orderpay-rate-limits',
  fastify: '5.x',
  dependencies: ['orderpay-problems', 'orderpay-authenticate'],
});

/** onRoute: the route's budget (config.rateLimitBudget, else by method), and its 429 documented. */
function declareBudget(route: RouteOptions): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const budget: Budget = route.config?.rateLimitBudget ?? (methods.every((m) => READ_METHODS.has(m)) ? 'reads' : 'writes');
  route.config = { ...route.config, rateLimitBudget: budget };
  const schema = route.schema;
  if (schema?.response) schema.response = { ...(schema.response as object), 429: Type.Ref('Problem') };
}

/**
 * Limits one group of routes: the caller is authenticated, then counted, whatever the outcome of
 * authentication (a request without a valid token spends its IP's budget, and gets the fields too).
 * A refusal by the limit outranks the authentication's own.
 */
export function limitRoutes(scope: FastifyInstance): void {
  scope.addHook('onRoute', declareBudget);
  scope.addHook('onRequest', async function authenticateThenCount(request, reply) {
    try {
      await scope.authenticate(request, reply);
    } finally {
      await scope.countRequest(request, reply);
    }
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook: counts the request against its route's budget (429 when spent). */
    countRequest: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
  interface FastifyContextConfig {
    /** Which budget the route spends; by default reads for GET and HEAD, writes otherwise. */
    rateLimitBudget?: Budget;
  }
}
