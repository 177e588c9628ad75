// Idempotency keys, pure: reading the header, the request fingerprint, and what a request finds
// when its key is already taken. draft-ietf-httpapi-idempotency-key-header; Stripe's semantics.
import { hash } from 'node:crypto';
import { DomainError } from '../core/errors.ts';

export const MAX_KEY_LENGTH = 255;

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
// RFC 8941 §3.3.3 sf-string: printable ASCII, with \" and \\ as the only escapes.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/**
 * What parseIdempotencyKey accepts, as one pattern for the OpenAPI documents: 1–255 visible ASCII
 * characters, or a structured-field string of 1–255 characters (an escape counts as one) — `""`,
 * the empty one, alone excluded (test/unit/idempotency.rules.test.ts holds the two to agreement).
 */
export const IDEMPOTENCY_KEY_PATTERN = String.raw`^(?!""$)(?:[\x21-\x7e]{1,${MAX_KEY_LENGTH}}|"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\]){1,${MAX_KEY_LENGTH}}")$`;

function invalidKey(detail: string): DomainError {
  return new DomainError('IDEMPOTENCY_KEY_INVALID', `Idempotency-Key ${detail}.`, {
    errors: [{ parameter: 'idempotency-key', detail: `Idempotency-Key ${detail}` }],
  });
}

/**
 * The key named by an Idempotency-Key header: 1–255 visible ASCII characters, sent bare (as most
 * clients do) or as the structured-field string the draft specifies (`"…"`), which names the
 * same key as its unquoted content.
 */
export function parseIdempotencyKey(header: string): string {
  const quoted = SF_STRING.exec(header);
  const key = quoted ? quoted[1]!.replace(/\\(["\\])/g, '$1') : header;
  if (key.length === 0) throw invalidKey('is empty');
  if (key.length > MAX_KEY_LENGTH) throw invalidKey(`is longer than ${MAX_KEY_LENGTH} characters`);
  if (!quoted && !VISIBLE_ASCII.test(key)) throw invalidKey('must be visible ASCII characters (or a quoted string)');
  return key;
}

/** JSON with object keys sorted at every level (RFC 8785's ordering); arrays keep their order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What the key is bound to besides the caller: the operation, and the payload sent to it. */
export interface RequestBinding {
  method: string;
  path: string;
  fingerprint: string;
}

/** SHA-256 over the API version and the canonical body: reordered keys are the same request. */
export function fingerprintRequest(apiVersion: number, body: unknown): string {
  // The one-shot digest: no Hash object per request.
  return hash('sha256', `v${apiVersion}\n${canonicalJson(body ?? null)}`, 'base64url');
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface KeyRecord extends RequestBinding {
  id: number;
  state: 'in_flight' | 'completed';
  /** Past its retention: the key is free again. */
  expired: boolean;
  /** An in-flight claim whose holder let its lock lapse (a process that died). */
  lockExpired: boolean;
  response: StoredResponse | undefined;
}

export type KeyDecision = { kind: 'replay'; response: StoredResponse } | { kind: 'take-over' } | { kind: 'refuse'; problem: DomainError };

/** What a request does when its key is already in the table (and not past its retention). */
export function decideOnTakenKey(record: KeyRecord, request: RequestBinding): KeyDecision {
  if (record.method !== request.method || record.path !== request.path) {
    return {
      kind: 'refuse',
      problem: new DomainError(
        'IDEMPOTENCY_KEY_REUSED',
        `This Idempotency-Key was used for ${record.method} ${record.path}; a key belongs to one operation. Use a new key for this request.`,
      ),
    };
  }
  if (record.fingerprint !== request.fingerprint) {
    return {
      kind: 'refuse',
      problem: new DomainError(
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was used with a different request body; a retry must repeat the original request exactly. Use a new key for a new request.',
      ),
    };
  }
  if (record.state === 'completed' && record.response) return { kind: 'replay', response: record.response };
  if (record.lockExpired) return { kind: 'take-over' };
  return { kind: 'refuse', problem: keyInUse() };
}

/**
 * 409 while the first request with this key is still being processed (draft §2.7). Most finish
 * within a second; a claim whose process died is taken over once its lock lapses.
 */
export function keyInUse(): DomainError {
  return new DomainError(
    'IDEMPOTENCY_KEY_IN_USE',
    'A request with this Idempotency-Key is still being processed; retry after the Retry-After delay to receive its result.',
  );
}
