// Keyset paging cursors: opaque to clients, tamper-evident. A cursor is base64url(JSON payload) "."
// base64url(HMAC-SHA256, truncated to 16 bytes), the MAC over the payload and the scope the cursor
// was given for (the collection, its effective filters and its sort): a cursor altered, or given to
// another collection, other filters or another sort, does not verify.
import { hash, timingSafeEqual } from 'node:crypto';

/** A sort key's value as a cursor carries it: JSON, so timestamps travel as their RFC 3339 text. */
export type CursorValue = string | number;

/** Where a page starts or ends: a row by its sort-key values, and how many rows came before that row. */
export interface CursorPosition {
  values: CursorValue[];
  /** The number of rows before this row when the cursor was made (meta.page of the pages beside it). */
  n: number;
}

export interface CursorCodec {
  sign(scope: string, position: CursorPosition): string;
  /** The position, or undefined when the token is not a cursor this codec signed for this scope. */
  verify(scope: string, token: string): CursorPosition | undefined;
}

// 128 bits: a forgery is a 2^-128 guess per request (NIST SP 800-107 §5.3.4 allows truncation).
const MAC_BYTES = 16;
const MAX_VALUES = 16;
const MAX_TEXT = 512;

/** SHA-256's block size: HMAC pads its key to it (RFC 2104 §2). */
const BLOCK_BYTES = 64;

/**
 * HMAC-SHA256 (RFC 2104) of key, as two one-shot digests over the key's pads, made once: the same
 * bytes as createHmac's (a unit test holds them to it), without an Hmac object per cursor, which
 * cost a list page some 14 µs of CPU per signature under load (bench/results/profile-*.json).
 */
export function hmacSha256(key: Uint8Array): (message: string) => Buffer {
  const block = Buffer.alloc(BLOCK_BYTES);
  (key.length > BLOCK_BYTES ? hash('sha256', key, 'buffer') : Buffer.from(key)).copy(block);
  const inner = Buffer.from(block.map((byte) => byte ^ 0x36));
  const outer = Buffer.from(block.map((byte) => byte ^ 0x5c));
  return (message) =>
    hash('sha256', Buffer.concat([outer, hash('sha256', Buffer.concat([inner, Buffer.from(message)]), 'buffer')]), 'buffer');
}

function mac(sign: (message: string) => Buffer, scope: string, payload: string): Buffer {
  // The payload (base64url) has no '.', so payload and scope cannot be shifted into each other.
  return sign(`${payload}.${scope}`).subarray(0, MAC_BYTES);
}

const isCursorValue = (v: unknown): v is CursorValue =>
  (typeof v === 'string' && v.length <= MAX_TEXT) || (typeof v === 'number' && Number.isSafeInteger(v));

/** The payload's shape, checked even after the MAC verified: nothing unchecked reaches a query. */
function parsePosition(json: string): CursorPosition | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  const { v, n } = (parsed ?? {}) as { v?: unknown; n?: unknown };
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_VALUES || !v.every(isCursorValue)) return undefined;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return undefined;
  return { values: v, n };
}

/** Signs and verifies cursors with one key: the same in every process of a deployment (src/db/cursor-key.ts). */
export function createCursorCodec(rawKey: Uint8Array): CursorCodec {
  // Every page signs up to two cursors: the key's pads are made once.
  const key = hmacSha256(rawKey);
  return {
    sign(scope, { values, n }) {
      const payload = Buffer.from(JSON.stringify({ v: values, n })).toString('base64url');
      return `${payload}.${mac(key, scope, payload).toString('base64url')}`;
    },
    verify(scope, token) {
      const [payload, signature, ...rest] = token.split('.');
      if (!payload || !signature || rest.length > 0) return undefined;
      const given = Buffer.from(signature, 'base64url');
      // base64url decoding skips what is not base64url: the signature must be exactly what signing writes.
      if (given.length !== MAC_BYTES || given.toString('base64url') !== signature) return undefined;
      if (!timingSafeEqual(given, mac(key, scope, payload))) return undefined;
      return parsePosition(Buffer.from(payload, 'base64url').toString('utf8'));
    },
  };
}

/** The SQL type a sort column compares as, which a cursor's value for it must fit. */
export type SortValueType = 'integer' | 'text' | 'timestamp';

// What the database layer writes for a timestamptz(3) (src/db/db.ts parseTimestamptz).
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3,6}Z$/;

export function fitsSortType(type: SortValueType, value: CursorValue): boolean {
  switch (type) {
    case 'integer':
      return typeof value === 'number';
    case 'text':
      return typeof value === 'string';
    case 'timestamp':
      return typeof value === 'string' && TIMESTAMP.test(value) && Number.isFinite(Date.parse(value));
  }
}
