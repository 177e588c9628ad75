// The RateLimit-Policy and RateLimit response fields of draft-ietf-httpapi-ratelimit-headers-10
// (§3, §4): Structured Field lists (RFC 9651) of items named by the policy, a String.
//   RateLimit-Policy: "reads";q=600;w=60     the quota q per window of w seconds
//   RateLimit: "reads";r=599;t=42            r units left, t seconds until the window ends

export interface Policy {
  /** A name of letters only, so it needs no escaping as an sf-string. */
  name: string;
  quota: number;
  windowSeconds: number;
}

/** §3.1: the policy item; it stays the same from response to response. */
export function policyField({ name, quota, windowSeconds }: Policy): string {
  return `"${name}";q=${quota};w=${windowSeconds}`;
}

/** §4.1: the service limit item: what is left of the policy's quota and when more comes. */
export function serviceLimitField(name: string, remaining: number, resetSeconds: number): string {
  return `"${name}";r=${Math.max(0, remaining)};t=${Math.max(0, resetSeconds)}`;
}

/** The fields as OpenAPI documents them (components.headers), on every response of every operation. */
export const RATE_LIMIT_HEADER_COMPONENTS = {
  'RateLimit-Policy': {
    description:
      'The quota policy this operation spends (draft-ietf-httpapi-ratelimit-headers-10 §3): `q` requests per window of `w` seconds, per caller (client and subject of the access token) or, without a valid token, per client IP. The policies are `reads`, `writes` and `payments` (payments and refunds).',
    schema: { type: 'string', maxLength: 100, pattern: '^"[a-z]+";q=[0-9]+;w=[0-9]+$', examples: ['"reads";q=600;w=60'] },
  },
  RateLimit: {
    description:
      'What is left of the policy (draft-ietf-httpapi-ratelimit-headers-10 §4): `r` requests in the current window, which ends in `t` seconds. Absent when the request could not be counted.',
    schema: { type: 'string', maxLength: 100, pattern: '^"[a-z]+";r=[0-9]+;t=[0-9]+$', examples: ['"reads";r=599;t=42'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again (RFC 9110 §10.2.3): until the window ends, after a 429.',
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86400 },
  },
} as const;
