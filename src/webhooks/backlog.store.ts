// The delivery backlog in SQL, counted when it is read (docs/webhooks.md, "Endpoint health"): an
// endpoint's deliveries still pending, and across enabled endpoints the deliveries due now and how
// long the oldest has waited (/metrics). Due: pending and its time come, in flight or not. Both
// read the partial index webhook_deliveries_due_idx (endpoint_id, next_attempt_at, id) WHERE
// state = 'pending', one endpoint at a time: no scan of delivered or failed rows, nor of another
// endpoint's.
import type { Queryable } from '../db/db.ts';

/** An endpoint's deliveries not yet succeeded or failed. */
export interface EndpointBacklog {
  /** Pending deliveries: due, in flight or waiting for a retry. */
  pending: number;
  /** When the longest-waiting of those due now came due; null when none is (all wait for a retry later). */
  oldestDueAt: string | null;
}

/** A new endpoint's backlog, known without asking. */
export const NO_BACKLOG: EndpointBacklog = Object.freeze({ pending: 0, oldestDueAt: null });

/** The backlog of each endpoint named (NO_BACKLOG for one with nothing pending). */
export async function selectEndpointBacklogs(db: Queryable, endpointIds: readonly number[]): Promise<Map<number, EndpointBacklog>> {
  const backlogs = new Map<number, EndpointBacklog>(endpointIds.map((id) => [id, NO_BACKLOG]));
  if (endpointIds.length === 0) return backlogs;
  const { rows } = await db.query<EndpointBacklog & { endpointId: number }>(
    `SELECT endpoint_id AS "endpointId", count(*)::int AS pending,
            min(next_attempt_at) FILTER (WHERE next_attempt_at <= now()) AS "oldestDueAt"
       FROM webhook_deliveries
      WHERE endpoint_id = ANY($1::bigint[]) AND state = 'pending'
      GROUP BY endpoint_id`,
    [endpointIds],
  );
  for (const { endpointId, pending, oldestDueAt } of rows) backlogs.set(endpointId, { pending, oldestDueAt });
  return backlogs;
}

/** What the dispatchers have to do now, across every enabled endpoint. */
export interface DueDeliveries {
  due: number;
  /** Seconds since the oldest due delivery came due; 0 when none is. */
  oldestDueAgeSeconds: number;
}

/**
 * Deliveries due now to enabled endpoints (a disabled one's are sent nothing, so they would only
 * age), and the age of the oldest: one statement, each endpoint's due range read from the index.
 */
export async function selectDueDeliveries(db: Queryable): Promise<DueDeliveries> {
  const { rows } = await db.query<{ due: number; age: number | null }>(
    `SELECT coalesce(sum(due.n), 0)::int AS due, extract(epoch FROM now() - min(due.oldest))::float8 AS age
       FROM webhook_endpoints w
      CROSS JOIN LATERAL (
        SELECT count(*) AS n, min(d.next_attempt_at) AS oldest FROM webhook_deliveries d
         WHERE d.endpoint_id = w.id AND d.state = 'pending' AND d.next_attempt_at <= now()
      ) due
      WHERE NOT w.disabled`,
  );
  const row = rows[0];
  return { due: row?.due ?? 0, oldestDueAgeSeconds: Math.max(row?.age ?? 0, 0) };
}
