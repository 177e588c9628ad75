// Orders placed per UTC day and currency (GET /daily-order-totals), read through the created_at
// index. A customer's read carries customer_id = $n, as every read of theirs does.
import type { ReportFilter } from '../core/day-range.ts';
import type { OwnerScope } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { dayOfCreatedAt, reportConditions } from '../db/day-range.ts';

export interface DailyOrderTotalRecord {
  day: string;
  currency: string;
  orders: number;
  total: number;
}

export async function selectDailyOrderTotals(db: Queryable, scope: OwnerScope, filter: ReportFilter): Promise<DailyOrderTotalRecord[]> {
  const params: unknown[] = [];
  const where = reportConditions(filter, scope, params);
  const { rows } = await db.query<DailyOrderTotalRecord>(
    `SELECT ${dayOfCreatedAt} AS day, currency, count(*) AS orders, sum(total)::bigint AS total
       FROM orders WHERE deleted_at IS NULL AND ${where}
      GROUP BY 1, 2 ORDER BY 1, 2 LIMIT $${params.push(filter.limit)}`,
    params,
  );
  return rows;
}
