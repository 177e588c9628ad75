// The payment scenarios: (d) POST /payments under a new Idempotency-Key per request, (e) the same
// POST under one key already used, which replays. Each run starts from empty payment tables, and
// every measurement is checked afterwards against the payments it created.
import { randomUUID } from 'node:crypto';
import type { Db } from '../src/db/db.ts';
import type { RequestMix } from './load.ts';
import type { ServerProcess } from './processes.ts';
import type { Scenario } from './report.ts';

export const PAYMENT_BODY = JSON.stringify({ amount: 1250, currency: 'EUR' });

export interface PaymentWorkload {
  scenario: Scenario;
  requests: RequestMix & { method: 'POST' };
  /** Payments each answered request adds: 1 for a new key, 0 for a replay. */
  paymentsPerRequest: 0 | 1;
}

export function paymentWorkloads(): PaymentWorkload[] {
  return [
    {
      scenario: {
        key: 'd',
        title: 'POST /payments, new key',
        targetRatio: 0.5,
        orderpayRequest: `POST /payments ${PAYMENT_BODY} + bearer token + a new Idempotency-Key per request (201)`,
        baselineRequest: 'same POST: BEGIN; INSERT key ON CONFLICT DO NOTHING; INSERT payment; UPDATE key with the response; COMMIT',
      },
      requests: { method: 'POST', path: '/payments', body: PAYMENT_BODY, idempotencyKey: 'unique' },
      paymentsPerRequest: 1,
    },
    {
      scenario: {
        key: 'e',
        title: 'POST /payments, replay',
        orderpayRequest: 'the same POST under one key already used (201 replayed, Idempotent-Replayed: true)',
        baselineRequest: 'same POST: SELECT the stored response by key',
      },
      requests: { method: 'POST', path: '/payments', body: PAYMENT_BODY, idempotencyKey: { fixed: `bench-replay-${randomUUID()}` } },
      paymentsPerRequest: 0,
    },
  ];
}

/**
 * Empties the payment tables, so every run measures inserts into tables of the same size (the
 * benchmark database is the benchmark's own: the seed truncates its orders as well).
 */
export async function resetPaymentTables(db: Db): Promise<void> {
  await db.exec('TRUNCATE refunds, payments, idempotency_keys RESTART IDENTITY');
}

async function countPayments(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*) AS n FROM payments');
  return rows[0]!.n;
}

/**
 * The payments once the previous run's last requests have committed: wrk stops counting with up
 * to one request per connection still in the server. Waits until the count holds for 250 ms.
 */
export async function countSettledPayments(db: Db): Promise<number> {
  let count = await countPayments(db);
  for (let attempt = 0; attempt < 40; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const again = await countPayments(db);
    if (again === count) return count;
    count = again;
  }
  throw new Error('payments are still being created 10 s after the last run');
}

/** After a run: one payment per answered request (d), or none at all (e). */
export async function checkPaymentsCreated(
  db: Db,
  workload: PaymentWorkload,
  serverName: string,
  before: number,
  answered: number,
): Promise<void> {
  const created = (await countSettledPayments(db)) - before;
  // Requests wrk cut off at its end are not counted but may still commit: at least, not exactly.
  const ok = workload.paymentsPerRequest === 0 ? created === 0 : created >= answered;
  if (!ok) throw new Error(`(${workload.scenario.key}) ${serverName}: ${answered} requests answered, ${created} payments created`);
}

interface PostResult {
  status: number;
  replayed: string | null;
  location: string | null;
  body: Record<string, unknown>;
}

async function postPayment(server: ServerProcess, headers: Record<string, string>, key: string): Promise<PostResult> {
  const response = await fetch(`${server.url}/payments`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': key },
    body: PAYMENT_BODY,
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`${server.name}: POST /payments answered ${response.status}: ${text}`);
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    location: response.headers.get('location'),
    body: JSON.parse(text) as never,
  };
}

/**
 * Both servers create a payment of the same shape for a new key, and replay it byte for byte for a
 * used one. This also uses each server's replay key once, before (e) is measured.
 */
export async function verifyPaymentResponses(
  workloads: PaymentWorkload[],
  targets: { server: ServerProcess; headers: Record<string, string> }[],
): Promise<void> {
  const shapes: string[] = [];
  for (const { server, headers } of targets) {
    for (const { scenario, requests } of workloads) {
      const key = requests.idempotencyKey === 'unique' ? `bench-check-${randomUUID()}` : requests.idempotencyKey.fixed;
      const first = await postPayment(server, headers, key);
      const again = await postPayment(server, headers, key);
      const fail = (what: string) => new Error(`(${scenario.key}) ${server.name}: ${what}`);
      if (first.replayed !== null || first.body.status !== 'succeeded' || first.body.amount !== 1250 || first.body.currency !== 'EUR') {
        throw fail(`the first POST did not create a payment: ${JSON.stringify(first)}`);
      }
      if (!first.location?.endsWith(`/payments/${first.body.id}`))
        throw fail(`Location ${first.location} does not name payment ${first.body.id}`);
      if (again.replayed !== 'true' || JSON.stringify(again.body) !== JSON.stringify(first.body))
        throw fail(`the retry was not a replay: ${JSON.stringify(again)}`);
      shapes.push(Object.keys(first.body).join(','));
    }
  }
  if (new Set(shapes).size !== 1)
    throw new Error(`orderpay and the baseline answer payments of different shapes: ${[...new Set(shapes)].join(' | ')}`);
}
