// The authorization server's limits: every /oauth request per client IP, and failed sign-ins per
// account and per IP (brute force). Counted in the database, so all processes share them.
import type { ServerResponse } from 'node:http';
import { emailKey } from '../core/email.ts';
import type { Queryable } from '../db/db.ts';
import { hitRateLimit, releaseRateLimitHit, type RateLimitRule, type RateLimitState } from '../db/rate-limits.ts';
import { rateLimitHeaders } from '../http/rate-limit-headers.ts';

export const OAUTH_REQUESTS_PER_IP: RateLimitRule = { name: 'oauth-ip', limit: 300, windowSeconds: 60 };
export const LOGIN_FAILURES_PER_ACCOUNT: RateLimitRule = { name: 'login-account', limit: 5, windowSeconds: 15 * 60 };
export const LOGIN_FAILURES_PER_IP: RateLimitRule = { name: 'login-ip', limit: 20, windowSeconds: 15 * 60 };

/**
 * Counts one /oauth request; answers 429 itself when the IP is over its limit (RFC 6749 error
 * body, Retry-After) and returns true. Otherwise sets the RateLimit headers and returns false.
 */
export async function limitOAuthRequests(db: Queryable, ip: string, res: ServerResponse, now = new Date()): Promise<boolean> {
  const state = await hitRateLimit(db, OAUTH_REQUESTS_PER_IP, ip, now);
  for (const [name, value] of Object.entries(rateLimitHeaders(state))) res.setHeader(name, value);
  if (!state.limited) return false;
  res.statusCode = 429;
  res.setHeader('retry-after', String(state.resetSeconds));
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.end(
    JSON.stringify({ error: 'temporarily_unavailable', error_description: `Too many requests; retry in ${state.resetSeconds} seconds.` }),
  );
  return true;
}

/**
 * Counts one sign-in attempt for the email as typed (known or not, so nothing is revealed) and for
 * the IP, before the password is checked. blocked is set when either is over its limit;
 * succeeded() gives the attempt back, so only failures use up the budget.
 */
export async function countSignInAttempt(
  db: Queryable,
  email: string,
  ip: string,
  now = new Date(),
): Promise<{ blocked?: RateLimitState; succeeded(): Promise<void> }> {
  // The account's key, as the lookup uses it; an address no account can have keeps its own.
  const account = emailKey(email) ?? email;
  const [byAccount, byIp] = [
    await hitRateLimit(db, LOGIN_FAILURES_PER_ACCOUNT, account, now),
    await hitRateLimit(db, LOGIN_FAILURES_PER_IP, ip, now),
  ];
  return {
    blocked: byAccount.limited ? byAccount : byIp.limited ? byIp : undefined,
    async succeeded() {
      await releaseRateLimitHit(db, LOGIN_FAILURES_PER_ACCOUNT, account, now);
      await releaseRateLimitHit(db, LOGIN_FAILURES_PER_IP, ip, now);
    },
  };
}
