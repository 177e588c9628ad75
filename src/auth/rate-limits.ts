// The authorization server's limits: every /oauth request (preflights aside) per client IP, and failed sign-ins per
// account and per IP (brute force). Counted where the API's limits are (src/http/rate-limit/:
// PostgreSQL, or Redis), so all processes share them. These are the login surface: while they
// cannot be counted, /oauth answers 503 rather than let guessing go unlimited.
import { createHash } from 'node:crypto';
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { emailKey } from '../core/email.ts';
import { isPreflight } from '../http/cors.ts';
import type { Counters, WindowCount } from '../http/rate-limit/counters.ts';
import { policyField, serviceLimitField } from '../http/rate-limit/fields.ts';
import { isAuthorizationServerPath } from './oauth-paths.ts';

export interface RateLimitRule {
  /** Distinguishes rules sharing a key space, e.g. "login-account". */
  name: string;
  limit: number;
  windowSeconds: number;
}

export const OAUTH_REQUESTS_PER_IP: RateLimitRule = { name: 'oauth-ip', limit: 300, windowSeconds: 60 };
export const LOGIN_FAILURES_PER_ACCOUNT: RateLimitRule = { name: 'login-account', limit: 5, windowSeconds: 15 * 60 };
export const LOGIN_FAILURES_PER_IP: RateLimitRule = { name: 'login-ip', limit: 20, windowSeconds: 15 * 60 };

/**
 * The onRequest hook counting every /oauth request but CORS preflights against its IP's budget with
 * @fastify/rate-limit. Fields go on the raw response, since the provider writes it. Over the limit:
 * 429 with RFC 6749's error body (§5.2) and Retry-After; counters unreachable: 503
 * temporarily_unavailable.
 */
export function oauthRequestLimit(app: FastifyInstance, counters: Counters) {
  const count = app.createRateLimit({
    max: OAUTH_REQUESTS_PER_IP.limit,
    timeWindow: OAUTH_REQUESTS_PER_IP.windowSeconds * 1000,
    keyGenerator: (request) => `${OAUTH_REQUESTS_PER_IP.name}:${normalizeIP(request.ip)}`,
  });
  const policy = policyField({ name: 'oauth', quota: OAUTH_REQUESTS_PER_IP.limit, windowSeconds: OAUTH_REQUESTS_PER_IP.windowSeconds });
  const unreachable =
    counters.kind === 'postgres'
      ? 'The authorization server cannot reach its database; retry shortly.'
      : 'The authorization server cannot reach its rate-limit store; retry shortly.';

  async function limit(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    reply.raw.setHeader('ratelimit-policy', policy);
    let counted: Awaited<ReturnType<typeof count>>;
    try {
      counted = await count(request);
    } catch (error) {
      request.log.warn({ err: error }, 'the /oauth rate limit cannot be counted');
      return sendOAuthError(reply, 503, 1, { error: 'temporarily_unavailable', error_description: unreachable });
    }
    if (counted.isAllowed) return;
    reply.raw.setHeader('ratelimit', serviceLimitField('oauth', counted.remaining, counted.ttlInSeconds));
    if (!counted.isExceeded) return;
    const retryAfter = Math.max(1, counted.ttlInSeconds);
    return sendOAuthError(reply, 429, retryAfter, {
      error: 'temporarily_unavailable',
      error_description: `Too many requests; retry in ${retryAfter} seconds.`,
    });
  }

  // On the authorization server's routes (src/app.ts gives it a scope of its own); what is not
  // counted goes on at once, without the promise and the turn of the microtask queue an async hook costs.
  return function limitOAuthRequests(request: FastifyRequest, reply: FastifyReply, done: () => void): Promise<unknown> | undefined {
    // A preflight is the browser asking leave to call, not a call: counted neither here nor by the API.
    if (!isAuthorizationServerPath(request.url) || isPreflight(request.method, request.headers)) return void done();
    // The hook runner goes on when this settles (Fastify's hooks may answer by a promise instead of done).
    return limit(request, reply);
  };
}

function sendOAuthError(reply: FastifyReply, status: number, retryAfter: number, body: { error: string; error_description: string }) {
  return reply
    .code(status)
    .header('retry-after', String(retryAfter))
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(body));
}

export interface SignInAttempt {
  /** Set when the account or the IP is over its limit: how long until the window ends. */
  blocked?: { retryAfterSeconds: number };
  /** Gives the attempt back: only failures use up the budget. */
  succeeded(): Promise<void>;
}

/**
 * The counter of failed sign-ins for an email: the account's key, as the lookup uses it; an
 * address no account can have keeps its own, as a digest: what was typed may hold characters no
 * store keeps (a NUL in PostgreSQL's text).
 */
export function signInAccountKey(email: string): string {
  return `${LOGIN_FAILURES_PER_ACCOUNT.name}:${emailKey(email) ?? `sha256:${createHash('sha256').update(email).digest('hex')}`}`;
}

/**
 * Counts one sign-in attempt for the email as typed (known or not, so nothing is revealed) and for
 * the IP, before the password is checked. Rejects when the counters cannot be reached.
 */
export async function countSignInAttempt(counters: Counters, email: string, ip: string): Promise<SignInAttempt> {
  const account = signInAccountKey(email);
  const address = `${LOGIN_FAILURES_PER_IP.name}:${normalizeIP(ip)}`;
  const byAccount = await countHit(counters, LOGIN_FAILURES_PER_ACCOUNT, account);
  const byIp = await countHit(counters, LOGIN_FAILURES_PER_IP, address);
  const over = [byAccount, byIp].find((count) => count.current > count.limit);
  return {
    blocked: over && { retryAfterSeconds: Math.max(1, Math.ceil(over.ttl / 1000)) },
    async succeeded() {
      await counters.giveBack(account, LOGIN_FAILURES_PER_ACCOUNT.windowSeconds * 1000);
      await counters.giveBack(address, LOGIN_FAILURES_PER_IP.windowSeconds * 1000);
    },
  };
}

async function countHit(counters: Counters, rule: RateLimitRule, key: string): Promise<WindowCount & { limit: number }> {
  return { ...(await counters.hit(key, rule.windowSeconds * 1000, rule.limit)), limit: rule.limit };
}
