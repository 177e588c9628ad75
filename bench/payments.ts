// The payment scenarios: (d) POST /payments under a new Idempotency-Key per request, (e) the same
// POST under one key already used, which replays, and (dw) the baseline's (d) with and without the
// payment.succeeded event orderpay writes. Each bench run starts from empty payment and event
// tables, and every measurement is checked afterwards against the payments and events it created.
import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../src/db/db.ts';
import type { RequestMix } from './load.ts';
import type { Side, Target } from './processes.ts';
import type { Scenario } from './report.ts';
import { clearBenchDeliveries, createBenchEndpoint, subscribeBenchEndpoint } from './webhooks.ts';

export const PAYMENT_BODY = JSON.stringify({ amount: 1250, currency: 'EUR' });

/** The baseline writes orderpay's payment.succeeded event for the payments posted under this prefix. */
export const WITH_EVENT_PREFIX = '/with-event';
/** The baseline's paths with their statements prepared: (d)'s transaction in (dw) and (dx), (a)'s lookup and its revalidation in (fr). */
export const PREPARED_PREFIX = '/prepared';

export interface PaymentWorkload {
  scenario: Scenario;
  requests: RequestMix & { method: 'POST' };
  /** Payments each answered request adds: 1 for a new key, 0 for a replay. */
  paymentsPerRequest: 0 | 1;
  /** Whether the bench's webhook endpoint (subscribed to every event) is enabled during its runs. */
  subscribedEndpoint: boolean;
  /** Set when both columns are the baseline: with the event, then without. */
  sides?: readonly [Side, Side];
}

export function paymentWorkloads(): PaymentWorkload[] {
  const newKey = { method: 'POST', path: '/payments', body: PAYMENT_BODY, idempotencyKey: 'unique' } as const;
  return [
    {
      scenario: {
        key: 'd',
        title: 'POST /payments, new key',
        orderpayRequest: `POST /payments ${PAYMENT_BODY} + bearer token + a new Idempotency-Key per request (201; the payment.succeeded event written with it)`,
        baselineRequest:
          "same POST in orderpay's phases: INSERT key ON CONFLICT DO NOTHING; BEGIN, the claim held, INSERT payment (processing), the key's recovery point, COMMIT; the charge's id; BEGIN, UPDATE payment (succeeded), UPDATE key with the response, COMMIT (no event)",
      },
      requests: newKey,
      paymentsPerRequest: 1,
      subscribedEndpoint: false,
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
      subscribedEndpoint: false,
    },
    {
      scenario: {
        key: 'dw',
        title: 'POST /payments: event written vs not',
        labels: ['with the event', 'without'],
        orderpayRequest: `baseline POST ${WITH_EVENT_PREFIX}/payments: (d)'s phases, prepared, + orderpay's payment.succeeded event, written as orderpay writes it (by the statement that stores the response); no webhook endpoint subscribed`,
        baselineRequest: `baseline POST ${PREPARED_PREFIX}/payments: (d)'s phases, prepared`,
      },
      requests: newKey,
      paymentsPerRequest: 1,
      subscribedEndpoint: false,
      sides: [
        { server: 'baseline', prefix: WITH_EVENT_PREFIX, writesEvents: true },
        { server: 'baseline', prefix: PREPARED_PREFIX },
      ],
    },
    {
      scenario: {
        key: 'dx',
        title: 'POST /payments: event + 1 delivery vs not',
        labels: ['with event and delivery', 'without'],
        orderpayRequest: `baseline POST ${WITH_EVENT_PREFIX}/payments as (dw), with one webhook endpoint subscribed to *: the event and one delivery row per payment`,
        baselineRequest: `baseline POST ${PREPARED_PREFIX}/payments: (d)'s phases, prepared, the same webhook endpoint present`,
      },
      requests: newKey,
      paymentsPerRequest: 1,
      subscribedEndpoint: true,
      sides: [
        { server: 'baseline', prefix: WITH_EVENT_PREFIX, writesEvents: true },
        { server: 'baseline', prefix: PREPARED_PREFIX },
      ],
    },
  ];
}

/**
 * Empties the payment and event tables, so every bench run measures inserts into tables of the
 * same size (the benchmark database is the benchmark's own: the seed truncates its orders as
 * well), and creates the webhook endpoint (dx) fans out to, disabled.
 */
export async function resetPaymentTables(db: Db): Promise<void> {
  await db.exec(
    'TRUNCATE refunds, payments, idempotency_keys, webhook_attempts, webhook_deliveries, events, webhook_endpoints RESTART IDENTITY',
  );
  await createBenchEndpoint(db);
}

/** What a run is checked against: rows counted in one snapshot. */
export interface PaymentTally {
  payments: number;
  events: number;
  deliveries: number;
  /** Delivery attempts, and those that got a response: a delivery made. */
  attempts: number;
  delivered: number;
}

async function countRows(db: Queryable): Promise<PaymentTally> {
  const { rows } = await db.query<PaymentTally>(
    `SELECT (SELECT count(*) FROM payments) AS payments, (SELECT count(*) FROM events) AS events,
            (SELECT count(*) FROM webhook_deliveries) AS deliveries, (SELECT count(*) FROM webhook_attempts) AS attempts,
            (SELECT count(*) FROM webhook_attempts WHERE status_code IS NOT NULL) AS delivered`,
  );
  return rows[0]!;
}

/**
 * The rows once the previous run's last requests have committed: wrk stops counting with up to
 * one request per connection still in the server. Waits until the payments hold for 250 ms (an
 * event commits with its payment).
 */
async function countSettledRows(db: Queryable): Promise<PaymentTally> {
  let tally = await countRows(db);
  for (let attempt = 0; attempt < 40; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const again = await countRows(db);
    if (again.payments === tally.payments) return again;
    tally = again;
  }
  throw new Error('payments are still being created 10 s after the last run');
}

/** Before a run: the bench's endpoint subscribed as the workload wants, and the rows to compare with afterwards. */
export async function startPaymentRun(db: Db, workload: PaymentWorkload): Promise<PaymentTally> {
  await subscribeBenchEndpoint(db, workload.subscribedEndpoint);
  return countSettledRows(db);
}

/**
 * After a run: one payment per answered request (d, dw, dx), or none at all (e); one payment.succeeded
 * event per payment where the side writes it and none where it does not; one delivery per event
 * while the endpoint is subscribed, none otherwise; and no delivery made. Then the endpoint's
 * deliveries are removed. Returns a warning when something attempted one of them.
 */
export async function finishPaymentRun(
  db: Db,
  workload: PaymentWorkload,
  side: Pick<Target, 'server' | 'writesEvents'>,
  before: PaymentTally,
  answered: number,
): Promise<string | undefined> {
  const after = await countSettledRows(db);
  const created = (name: keyof PaymentTally) => after[name] - before[name];
  const fail = (what: string) => new Error(`(${workload.scenario.key}) ${side.server.name}: ${answered} requests answered, ${what}`);
  // Requests wrk cut off at its end are not counted but may still commit: at least, not exactly.
  const paymentsOk = workload.paymentsPerRequest === 0 ? created('payments') === 0 : created('payments') >= answered;
  if (!paymentsOk) throw fail(`${created('payments')} payments created`);
  const events = side.writesEvents ? created('payments') : 0;
  if (created('events') !== events)
    throw fail(`${created('payments')} payments and ${created('events')} events created (${events} expected)`);
  const deliveries = workload.subscribedEndpoint ? events : 0;
  if (created('deliveries') !== deliveries) throw fail(`${created('deliveries')} webhook deliveries created for ${events} events`);
  if (after.delivered > 0)
    throw fail(`a bench webhook delivery got a response from ${after.delivered} receivers: nothing may deliver them`);
  if (workload.subscribedEndpoint) await clearBenchDeliveries(db);
  return created('attempts') > 0
    ? `(${workload.scenario.key}) ${side.server.name}: ${created('attempts')} attempts to deliver the bench's webhooks during the run (refused: the endpoint is on loopback); the run includes their cost`
    : undefined;
}

interface PostResult {
  status: number;
  replayed: string | null;
  location: string | null;
  body: Record<string, unknown>;
}

async function postPayment(target: Target, path: string, key: string): Promise<PostResult> {
  const { server, headers } = target;
  const response = await fetch(`${server.url}${target.prefix ?? ''}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': key },
    body: PAYMENT_BODY,
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`${server.name}: POST ${target.prefix ?? ''}${path} answered ${response.status}: ${text}`);
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    location: response.headers.get('location'),
    body: JSON.parse(text) as never,
  };
}

/** The events recorded for a payment, with the deliveries of each. */
async function findPaymentEvents(db: Queryable, paymentId: unknown): Promise<{ type: string; object: object; deliveries: number }[]> {
  const { rows } = await db.query<{ type: string; object: object; deliveries: number }>(
    `SELECT e.type, e.object, (SELECT count(*) FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries
       FROM events e WHERE e.object_type = 'payment' AND e.object->>'id' = $1::text`,
    [String(paymentId)],
  );
  return rows;
}

/**
 * Each side creates a payment of the same shape for a new key, and replays it byte for byte for
 * a used one; where it writes events, the payment has one payment.succeeded event whose object
 * has the keys of orderpay's, delivered to the endpoint when subscribed; elsewhere none. This also
 * uses each server's replay key once, before (e) is measured.
 */
export async function verifyPaymentResponses(
  db: Db,
  workloads: { workload: PaymentWorkload; sides: Target[] }[],
  orderpay: Target,
): Promise<void> {
  const shapes = new Set<string>();
  const reference = await postPayment(orderpay, '/payments', `bench-check-${randomUUID()}`);
  const [orderpayEvent, ...more] = await findPaymentEvents(db, reference.body.id);
  if (orderpayEvent?.type !== 'payment.succeeded' || more.length)
    throw new Error(`orderpay: payment ${reference.body.id} does not have one payment.succeeded event`);
  const eventShape = Object.keys(orderpayEvent.object).join(',');
  for (const { workload, sides } of workloads) {
    const { scenario, requests } = workload;
    await subscribeBenchEndpoint(db, workload.subscribedEndpoint);
    for (const side of sides) {
      const key = requests.idempotencyKey === 'unique' ? `bench-check-${randomUUID()}` : requests.idempotencyKey.fixed;
      const first = await postPayment(side, requests.path, key);
      const again = await postPayment(side, requests.path, key);
      const fail = (what: string) => new Error(`(${scenario.key}) ${side.server.name}${side.prefix ?? ''}: ${what}`);
      if (first.replayed !== null || first.body.status !== 'succeeded' || first.body.amount !== 1250 || first.body.currency !== 'EUR') {
        throw fail(`the first POST did not create a payment: ${JSON.stringify(first)}`);
      }
      if (!first.location?.endsWith(`/payments/${first.body.id}`))
        throw fail(`Location ${first.location} does not name payment ${first.body.id}`);
      if (again.replayed !== 'true' || JSON.stringify(again.body) !== JSON.stringify(first.body))
        throw fail(`the retry was not a replay: ${JSON.stringify(again)}`);
      shapes.add(Object.keys(first.body).join(','));
      const events = await findPaymentEvents(db, first.body.id);
      const expected = side.writesEvents ? ['payment.succeeded'] : [];
      if (JSON.stringify(events.map((e) => e.type)) !== JSON.stringify(expected))
        throw fail(`payment ${first.body.id} has the events ${JSON.stringify(events.map((e) => e.type))}, not ${JSON.stringify(expected)}`);
      for (const event of events) {
        const shape = Object.keys(event.object).join(',');
        if (shape !== eventShape) throw fail(`its event's object has the keys ${shape}, orderpay's ${eventShape}`);
        if (event.deliveries !== (workload.subscribedEndpoint ? 1 : 0)) throw fail(`its event has ${event.deliveries} webhook deliveries`);
      }
    }
    if (workload.subscribedEndpoint) await clearBenchDeliveries(db);
  }
  if (shapes.size !== 1) throw new Error(`orderpay and the baseline answer payments of different shapes: ${[...shapes].join(' | ')}`);
}
