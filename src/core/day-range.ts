// Daily reports (GET /daily-order-totals, /daily-payment-outcomes, /daily-webhook-deliveries),
// pure: which UTC days a request covers, and how many rows an answer may hold.
import { DomainError } from './errors.ts';
import { isSupportedCurrency } from './money.ts';

/** The first API version with daily reports: they show v3's payment statuses and money objects. */
export const DAILY_REPORTS_SINCE = 3;

/** The longest range one request reads: a quarter. Wider ranges are read in several requests. */
export const MAX_RANGE_DAYS = 92;
/** The days read when the request names none: the last 30, today (UTC) included. */
export const DEFAULT_RANGE_DAYS = 30;
/** Rows one answer holds at most; a range and filter that hold more are refused (narrow them). */
export const MAX_REPORT_ROWS = 10_000;

/** A report's query: its days (YYYY-MM-DD, UTC) and, where its rows have one, a currency. */
export interface ReportQuery {
  from?: string;
  to?: string;
  currency?: string;
}

/** What a report's store reads: its days, one currency or every one, and at most limit rows. */
export interface ReportFilter {
  range: DayRange;
  currency?: string;
  /** One more than an answer may hold, so that a larger one is seen and refused. */
  limit: number;
}

/** A report's rows and the days they cover. */
export interface Report<T> {
  range: DayRange;
  rows: T[];
}

/** Days as YYYY-MM-DD, inclusive at both ends, in UTC. */
export interface DayRange {
  from: string;
  to: string;
}

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** Milliseconds of a day's UTC midnight, or NaN when the string is no calendar day (2026-02-30). */
const midnightOf = (day: string) => {
  const ms = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(ms) || dayOf(ms) !== day ? Number.NaN : ms;
};

function invalid(parameter: string, detail: string): DomainError {
  return new DomainError('REQUEST_PARAMETER_INVALID', `${detail}.`, { errors: [{ parameter, detail }] });
}

/**
 * The range a request reads. Without to: today (UTC), or with only from, from's DEFAULT_RANGE_DAYS
 * days where they end before today. Without from: the DEFAULT_RANGE_DAYS days that end at to. A day
 * that is no calendar day, from after to, or more than MAX_RANGE_DAYS days is a 400.
 */
export function resolveDayRange(query: { from?: string; to?: string }, now: Date): DayRange {
  const today = midnightOf(dayOf(now.getTime()));
  const fromMs = query.from === undefined ? undefined : midnightOf(query.from);
  const toMs = query.to === undefined ? undefined : midnightOf(query.to);
  if (fromMs !== undefined && Number.isNaN(fromMs)) throw invalid('from', `from "${query.from}" is not a calendar day`);
  if (toMs !== undefined && Number.isNaN(toMs)) throw invalid('to', `to "${query.to}" is not a calendar day`);
  const to = toMs ?? (fromMs === undefined ? today : Math.min(fromMs + (DEFAULT_RANGE_DAYS - 1) * DAY_MS, Math.max(today, fromMs)));
  const from = fromMs ?? to - (DEFAULT_RANGE_DAYS - 1) * DAY_MS;
  if (from > to) throw invalid('from', 'from is later than to');
  const days = (to - from) / DAY_MS + 1;
  if (days > MAX_RANGE_DAYS) throw invalid('to', `the range holds ${days} days; at most ${MAX_RANGE_DAYS} are read at once`);
  return { from: dayOf(from), to: dayOf(to) };
}

/**
 * A report read: the query's range and filters handed to select, and its rows, unless there are
 * more than MAX_REPORT_ROWS (a 400 rather than an answer cut short).
 */
export async function readReport<T>(query: ReportQuery, now: Date, select: (filter: ReportFilter) => Promise<T[]>): Promise<Report<T>> {
  const range = resolveDayRange(query, now);
  if (query.currency !== undefined && !isSupportedCurrency(query.currency)) {
    throw invalid('currency', `"${query.currency}" is not an ISO 4217 currency code`);
  }
  const rows = await select({ range, currency: query.currency, limit: MAX_REPORT_ROWS + 1 });
  if (rows.length > MAX_REPORT_ROWS) {
    throw invalid('from', `the range holds more than ${MAX_REPORT_ROWS} rows; read a shorter range, or one currency`);
  }
  return { range, rows };
}
