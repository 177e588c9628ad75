// Webhook deliveries per UTC day of their event and endpoint (GET /daily-webhook-deliveries):
// read per endpoint, so that each reads its own through (endpoint_id, created_at).
import type { ReportFilter } from '../core/day-range.ts';
import type { Queryable } from '../db/db.ts';
import { dayOfCreatedAt, inDayRange } from '../db/day-range.ts';

export interface DailyWebhookDeliveryRecord {
  day: string;
  endpointId: number;
  deliveries: number;
  succeeded: number;
  failed: number;
  pending: number;
  attempts: number;
}

export async function selectDailyWebhookDeliveries(db: Queryable, filter: ReportFilter): Promise<DailyWebhookDeliveryRecord[]> {
  const params: unknown[] = [];
  const where = inDayRange(filter.range, params);
  const { rows } = await db.query<DailyWebhookDeliveryRecord>(
    `SELECT d.day, e.id AS "endpointId", d.deliveries, d.succeeded, d.failed, d.pending, d.attempts
       FROM webhook_endpoints e
       CROSS JOIN LATERAL (
         SELECT ${dayOfCreatedAt} AS day, count(*) AS deliveries,
                count(*) FILTER (WHERE state = 'succeeded') AS succeeded,
                count(*) FILTER (WHERE state = 'failed') AS failed,
                count(*) FILTER (WHERE state = 'pending') AS pending,
                sum(attempts)::bigint AS attempts
           FROM webhook_deliveries WHERE endpoint_id = e.id AND ${where}
          GROUP BY 1
       ) d
      ORDER BY 1, 2 LIMIT $${params.push(filter.limit)}`,
    params,
  );
  return rows;
}
