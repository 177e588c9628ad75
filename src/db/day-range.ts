// The SQL of daily reports: a row's UTC day, and a range of UTC days as a range of created_at that
// its index reads (from the first day's midnight to the midnight after the last).
import type { DayRange } from '../core/day-range.ts';

export const dayOfCreatedAt = `to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD')`;

export function inDayRange(range: DayRange, params: unknown[]): string {
  const from = `$${params.push(range.from)}::date::timestamp AT TIME ZONE 'UTC'`;
  const to = `($${params.push(range.to)}::date + 1)::timestamp AT TIME ZONE 'UTC'`;
  return `created_at >= ${from} AND created_at < ${to}`;
}
