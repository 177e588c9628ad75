// The delivery backlog in SQL, counted when it is read (docs/webhooks.md, "Endpoint health"): an
// endpoint's deliveries still pending, and when the oldest of those due now came due. Due: pending
// and its time come, in flight or not. It reads the partial index webhook_deliveries_due_idx
// (endpoint_id, next_attempt_at, id) WHERE state = 'pending', one endpoint at a time: no scan of
// delivered or failed rows, nor of another endpoint's.
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
