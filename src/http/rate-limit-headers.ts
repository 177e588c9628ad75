// RateLimit-* response headers (draft-ietf-httpapi-ratelimit-headers, widely deployed form).
import type { RateLimitState } from '../db/rate-limits.ts';

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'ratelimit-limit': String(state.limit),
    'ratelimit-remaining': String(state.remaining),
    'ratelimit-reset': String(state.resetSeconds),
  };
}
