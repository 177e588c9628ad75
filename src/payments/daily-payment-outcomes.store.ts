// Payments per UTC day of their creation, by status, decline code and currency (GET
// /daily-payment-outcomes), read through the created_at index. A customer's read carries
// customer_id = $n, as every read of theirs does.
import type { ReportFilter } from '../core/day-range.ts';
import type { OwnerScope } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { dayOfCreatedAt, reportConditions } from '../db/day-range.ts';
import type { PaymentStatus } from './payments.rules.ts';

export interface DailyPaymentOutcomeRecord {
  day: string;
  status: PaymentStatus;
  declineCode: string | null;
  currency: string;
  payments: number;
  amount: number;
  amountRefunded: number;
}

export async function selectDailyPaymentOutcomes(
  db: Queryable,
  scope: OwnerScope,
  filter: ReportFilter,
): Promise<DailyPaymentOutcomeRecord[]> {
  const params: unknown[] = [];
  const where = reportConditions(filter, scope, params);
  const { rows } = await db.query<DailyPaymentOutcomeRecord>(
    `SELECT ${dayOfCreatedAt} AS day, status, decline_code AS "declineCode", currency, count(*) AS payments,
            sum(amount)::bigint AS amount, sum(amount_refunded)::bigint AS "amountRefunded"
       FROM payments WHERE ${where}
      GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3 NULLS FIRST, 4 LIMIT $${params.push(filter.limit)}`,
    params,
  );
  return rows;
}
