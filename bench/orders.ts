// The orders scenarios (a)–(c), (av), (bv), (f), (fr) and (ap): request paths sampled from the data, so
// every id exists and every filter matches real rows, and the check that both columns answer alike.
// At 10M orders the id sample (ORDER BY random() over the table) takes a few seconds, once.
import type { Db } from '../src/db/db.ts';
import { conditionalWorkloads, type ConditionalWorkload } from './conditional.ts';
import { dpopWorkload, type DpopWorkload } from './dpop.ts';
import type { PathRequests } from './load.ts';
import type { Side, Target } from './processes.ts';
import type { Scenario } from './report.ts';

const SAMPLE_SIZE = 5_000;
const MIN_TOTALS = [2_000, 5_000, 10_000, 20_000];

export interface OrdersWorkload {
  scenario: Scenario;
  requests: PathRequests;
  /**
   * Set for the version scenarios: both columns are orderpay, the first under /v1 (rendered from
   * v2 through the version changes), the second under /v2; the paths are prefixed with each.
   */
  sides?: readonly [Side, Side];
}

/**
 * (a)–(c), (av), (bv), and (f), (fr) and (ap) on (a)'s ids. Paths sampled from the data, so every id
 * exists and every filter matches real rows.
 */
export async function sampleOrdersWorkloads(db: Db): Promise<(OrdersWorkload | ConditionalWorkload | DpopWorkload)[]> {
  const ids = await db.query<{ id: number }>('SELECT id FROM orders WHERE deleted_at IS NULL ORDER BY random() LIMIT $1', [SAMPLE_SIZE]);
  const pairs = await db.query<{ customerId: number; status: string }>(
    'SELECT customer_id AS "customerId", status FROM customer_order_counts WHERE n > 0 ORDER BY random() LIMIT $1',
    [SAMPLE_SIZE],
  );
  const filtered = pairs.rows.map(
    (p, i) => `/orders?status=${p.status}&customerId=${p.customerId}&minTotal=${MIN_TOTALS[i % MIN_TOTALS.length]}&sort=-createdAt,status`,
  );
  const byId = ids.rows.map((r) => `/orders/${r.id}`);
  const versionSides = [
    { server: 'orderpay', prefix: '/v1' },
    { server: 'orderpay', prefix: '/v2' },
  ] as const;
  return [
    {
      scenario: {
        key: 'a',
        title: 'GET /orders/{id}',
        orderpayRequest: 'GET /orders/{id} + bearer token',
        baselineRequest: 'GET /orders/{id}',
      },
      requests: { method: 'GET', paths: byId },
    },
    {
      scenario: {
        key: 'b',
        title: 'filtered list',
        orderpayRequest: 'GET /orders?status=…&customerId=…&minTotal=…&sort=-createdAt,status (page + exact meta.total)',
        baselineRequest: 'same page query + count(*)',
      },
      requests: { method: 'GET', paths: filtered },
    },
    {
      scenario: {
        key: 'c',
        title: 'broad status=pending',
        orderpayRequest: 'GET /orders?status=pending (page 1 + exact meta.total)',
        baselineRequest: 'same page query, no count',
      },
      requests: { method: 'GET', paths: ['/orders?status=pending'] },
    },
    {
      scenario: {
        key: 'av',
        title: 'v1 vs v2: GET /orders/{id}',
        orderpayRequest: 'GET /v1/orders/{id} (v2 rendered back through the version changes)',
        baselineRequest: 'GET /v2/orders/{id} on the same server (the latest, its items embedded)',
      },
      requests: { method: 'GET', paths: byId },
      sides: versionSides,
    },
    {
      scenario: {
        key: 'bv',
        title: 'v1 vs v2: filtered list',
        orderpayRequest: 'GET /v1/orders?status=…&customerId=…&minTotal=…&sort=-createdAt,status',
        baselineRequest: 'the same under /v2 on the same server (items of the page loaded and embedded)',
      },
      requests: { method: 'GET', paths: filtered },
      sides: versionSides,
    },
    ...conditionalWorkloads(byId),
    dpopWorkload(byId),
  ];
}

async function getJson(
  url: string,
  headers: Record<string, string>,
): Promise<{ data?: { id: number }[]; meta?: { total?: number }; id?: number }> {
  const response = await fetch(url, { headers });
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as never;
}

/** Both sides answer the first path of each scenario alike, and orderpay's totals are exact. */
export async function verifyOrdersResponses(
  db: Db,
  workloads: OrdersWorkload[],
  targetsOf: (workload: OrdersWorkload) => Target[],
): Promise<void> {
  for (const workload of workloads) {
    const {
      scenario,
      requests: { paths },
    } = workload;
    const [ours, theirs] = await Promise.all(
      targetsOf(workload).map((target) => getJson(target.server.url + (target.prefix ?? '') + paths[0], target.headers)),
    );
    if (!ours || !theirs) throw new Error(`(${scenario.key}) needs two sides`);
    const ids = (body: typeof ours) => JSON.stringify(body.data?.map((o) => o.id) ?? body.id);
    if (ids(ours) !== ids(theirs)) throw new Error(`(${scenario.key}) orderpay and the baseline disagree on ${paths[0]}`);
    if (scenario.key === 'b' && ours.meta?.total !== theirs.meta?.total)
      throw new Error(`(b) meta.total ${ours.meta?.total} ≠ baseline's ${theirs.meta?.total}`);
    if (scenario.key === 'c') {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*) AS n FROM orders WHERE status = 'pending' AND deleted_at IS NULL`);
      if (ours.meta?.total !== rows[0]!.n) throw new Error(`(c) meta.total ${ours.meta?.total} is not the exact count ${rows[0]!.n}`);
    }
  }
}
