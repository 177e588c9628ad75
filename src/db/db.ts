// The one storage interface: PGlite (embedded) and node-postgres implement it identically.

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/** How the connections are used at this moment (the metrics read it on each scrape). */
export interface PoolStats {
  /** Connections the pool may open. */
  max: number;
  /** Connections open now. */
  open: number;
  /** Open connections running a query or a transaction. */
  inUse: number;
  /** Queries and transactions waiting for a connection. */
  waiting: number;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  poolStats(): PoolStats;
  /** Runs fn in one transaction: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A database error with its SQLSTATE, whichever driver raised it. */
export interface DatabaseError extends Error {
  code: string;
  constraint?: string;
}

export function isDatabaseError(error: unknown): error is DatabaseError {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

// Both drivers parse values the same way (OIDs from pg_type):
// int8 → number (ids, money in minor units and counts stay far below 2^53),
// timestamptz → RFC 3339 string in UTC, at the column's precision and never less than
// milliseconds (no Date round trip, which costs time and drops microseconds). Sessions run with
// TimeZone=UTC where they can, so the text form ends in "+00"; behind a transaction-mode pooler
// the session's time zone is whatever the server's is, and other offsets are converted.
export const OID = { INT8: 20, TIMESTAMPTZ: 1184, TEXT_ARRAY: 1009, INT8_ARRAY: 1016, TIMESTAMPTZ_ARRAY: 1185 } as const;

export function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${value} exceeds the safe integer range`);
  return n;
}

// PostgreSQL's ISO output: "2026-11-22 13:25:04.12+05:30"; the offset has hours, and minutes and
// seconds only when they are not zero (historical zones have offsets in seconds).
const DIGITS = /^\d{0,6}$/;
const TIMESTAMPTZ_ISO = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?$/;

/**
 * "2026-11-22 13:25:04.12+00" → "2026-11-22T13:25:04.120Z". The server drops trailing zeros of
 * the fraction (and a zero fraction altogether); they are written back, so a timestamptz(3)
 * column (migration 0007) always reads as exactly milliseconds, on PGlite and PostgreSQL alike.
 * An offset other than +00 is applied to the whole seconds; the fraction is kept as written.
 */
export function parseTimestamptz(value: string): string {
  // The common form first, without the pattern: "2026-11-22 13:25:04[.fraction]+00" (a page of
  // orders has some sixty of these; the pattern's twelve groups made a tenth of a list's CPU).
  if (value.length <= 29 && value.charCodeAt(10) === 32 && value.endsWith('+00')) {
    const fraction = value.charCodeAt(19) === 46 ? value.slice(20, -3) : '';
    if (value.length === 22 + (fraction ? fraction.length + 1 : 0) && DIGITS.test(fraction)) {
      return `${value.slice(0, 10)}T${value.slice(11, 19)}.${fraction.padEnd(3, '0')}Z`;
    }
  }
  const parts = TIMESTAMPTZ_ISO.exec(value);
  // infinity and BC dates: never written by this application, passed on as the server wrote them.
  if (!parts) return value;
  const [, year, month, day, hour, minute, second, fraction = '', sign, offsetHours, offsetMinutes = '00', offsetSeconds = '00'] = parts;
  const millis = fraction.padEnd(3, '0');
  if (offsetHours === '00' && offsetMinutes === '00' && offsetSeconds === '00') {
    return `${year}-${month}-${day}T${hour}:${minute}:${second}.${millis}Z`;
  }
  const offset = (Number(offsetHours) * 3600 + Number(offsetMinutes) * 60 + Number(offsetSeconds)) * (sign === '-' ? -1 : 1);
  const local = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  const utc = new Date(local - offset * 1000);
  // Date.UTC would read years 0–99 as 1900–1999: never written by this application.
  return `${utc.toISOString().slice(0, 19)}.${millis}Z`;
}
