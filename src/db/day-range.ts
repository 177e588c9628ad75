// The SQL of daily reports: a row's UTC day, and a range of UTC days as a range of created_at that
// its index reads (from the first day's midnight to the midnight after the last).
import type { DayRange, ReportFilter } from '../core/day-range.ts';
import type { OwnerScope } from '../core/principal.ts';

export const dayOfCreatedAt = `to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD')`;

export function inDayRange(range: DayRange, params: unknown[]): string {
  const from = `$${params.push(range.from)}::date::timestamp AT TIME ZONE 'UTC'`;
  const to = `($${params.push(range.to)}::date + 1)::timestamp AT TIME ZONE 'UTC'`;
  return `created_at >= ${from} AND created_at < ${to}`;
}

/** The range, then the caller's scope (a customer's own rows) and the currency where the filter names one. */
export function reportConditions(filter: ReportFilter, scope: OwnerScope, params: unknown[]): string {
  let where = inDayRange(filter.range, params);
  if (scope) where += ` AND customer_id = $${params.push(scope.customerId)}`;
  if (filter.currency) where += ` AND currency = $${params.push(filter.currency)}`;
  return where;
}
