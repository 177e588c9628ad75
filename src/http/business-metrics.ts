// What the business did, for Prometheus: payments by status and declines, refunds, idempotent
// replays, failed sign-ins, webhook attempts by outcome; and, as each scrape finds them, the
// webhook backlog and the database connections in use. Each count is taken once its transaction
// has committed (a rolled-back payment never happened; a replay is not a payment); a payment or
// refund by the process that committed the processor's decision (src/flows/settle-payment.ts).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/db.ts';

/** How a refund came about: POST …/refunds, or cancelling a paid order. */
export type RefundCause = 'refund' | 'cancellation';

/** Why a sign-in did not sign in: wrong credentials, the attempt limits, or the limits not countable. */
type SignInFailure = 'refused' | 'blocked' | 'unavailable';

/** What a webhook attempt made of its delivery: delivered, to be tried again, or failed for good. */
type WebhookAttemptOutcome = 'succeeded' | 'retrying' | 'failed';
/** How the endpoint stood when the attempt was claimed (src/webhooks/deliveries.rules.ts endpointState). */
type WebhookEndpointState = 'healthy' | 'failing' | 'probing';

export interface BusinessMetrics {
  /** A payment the processor decided, once the decision has committed. */
  countPayment(payment: { status: string; declineCode: string | null }): void;
  /** A refund made, once its decision has committed. */
  countRefund(cause: RefundCause): void;
  countSignInFailure(reason: SignInFailure): void;
  /** A request answered with a stored response (Idempotent-Replayed) instead of being performed again. */
  countReplay(labels: { method: string; route: string }): void;
  /** A webhook attempt, once recorded. */
  countWebhookAttempt(outcome: WebhookAttemptOutcome, endpointState: WebhookEndpointState): void;
}

export function createBusinessMetrics(registry: Registry): BusinessMetrics {
  const payments = new Counter({
    name: 'orderpay_payments_total',
    help: 'Payments decided (committed), by their status when decided: succeeded, declined or canceled (nothing charged: the customer did not act, or the processor never answered). Counted by the process that committed the decision; idempotent replays are not counted.',
    labelNames: ['status'],
    registers: [registry],
  });
  const declines = new Counter({
    name: 'orderpay_payment_declines_total',
    help: "Declined payments by the processor's decline code.",
    labelNames: ['code'],
    registers: [registry],
  });
  const refunds = new Counter({
    name: 'orderpay_refunds_total',
    help: 'Refunds made (committed), by cause: refund (POST /payments/{id}/refunds) or cancellation (a paid order cancelled).',
    labelNames: ['cause'],
    registers: [registry],
  });
  const replays = new Counter({
    name: 'orderpay_idempotent_replays_total',
    help: 'Requests answered with the stored response of their Idempotency-Key (Idempotent-Replayed: true), by method and route.',
    labelNames: ['method', 'route'],
    registers: [registry],
  });
  const signInFailures = new Counter({
    name: 'orderpay_sign_in_failures_total',
    help: 'Sign-in attempts that did not sign in, by reason: refused (wrong email or password), blocked (too many failures), unavailable (the limits could not be counted).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const webhookAttempts = new Counter({
    name: 'orderpay_webhook_attempts_total',
    help: 'Webhook delivery attempts recorded, by what each made of its delivery: succeeded (a 2xx), retrying (failed, to be tried again on the schedule) or failed (failed, the schedule used up); and by how its endpoint stood when it was sent: healthy (its last attempt succeeded), failing (its last attempts failed: one attempt at a time) or probing (its circuit was open: the attempt after the pause).',
    labelNames: ['outcome', 'endpoint_state'],
    registers: [registry],
  });
  // Known label values start at 0, so that rate() and alerts see a series before the first event.
  for (const status of ['succeeded', 'declined', 'canceled']) payments.inc({ status }, 0);
  for (const cause of ['refund', 'cancellation']) refunds.inc({ cause }, 0);
  for (const reason of ['refused', 'blocked', 'unavailable']) signInFailures.inc({ reason }, 0);
  for (const outcome of ['succeeded', 'retrying', 'failed']) {
    for (const endpoint_state of ['healthy', 'failing', 'probing']) webhookAttempts.inc({ outcome, endpoint_state }, 0);
  }
  return {
    countPayment({ status, declineCode }) {
      payments.inc({ status });
      if (declineCode) declines.inc({ code: declineCode });
    },
    countRefund: (cause) => refunds.inc({ cause }),
    countSignInFailure: (reason) => signInFailures.inc({ reason }),
    countReplay: (labels) => replays.inc(labels),
    countWebhookAttempt: (outcome, endpointState) => webhookAttempts.inc({ outcome, endpoint_state: endpointState }),
  };
}

/**
 * The database pool as each scrape finds it. node-postgres: its connections open, in use and the
 * callers waiting for one. The embedded database is one connection that serves one query or
 * transaction at a time: in use while any runs, the rest waiting.
 */
export function registerPoolGauges(registry: Registry, db: Db): void {
  new Gauge({
    name: 'orderpay_db_pool_connections',
    help: 'Open database connections, by state: in_use (running a query or transaction) or idle.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { open, inUse } = db.poolStats();
      this.set({ state: 'in_use' }, inUse);
      this.set({ state: 'idle' }, open - inUse);
    },
  });
  new Gauge({
    name: 'orderpay_db_pool_waiting',
    help: 'Queries and transactions waiting for a database connection.',
    registers: [registry],
    collect() {
      this.set(db.poolStats().waiting);
    },
  });
  new Gauge({
    name: 'orderpay_db_pool_max',
    help: 'Database connections the pool may open (ORDERPAY_DB_POOL_MAX; 1 on the embedded database).',
    registers: [registry],
    collect() {
      this.set(db.poolStats().max);
    },
  });
}

/** The webhook deliveries due now across enabled endpoints (src/webhooks/backlog.store.ts). */
export interface WebhookBacklogFigures {
  due: number;
  oldestDueAgeSeconds: number;
}

/** How long a scrape waits for the backlog: a scrape must answer while the pool is exhausted, when it matters most. */
const BACKLOG_READ_TIMEOUT_MS = 2000;

/**
 * The webhook backlog as the database has it at each scrape: one statement for both gauges (the
 * registry collects them together; the second shares the first's read). The figure is the
 * database's, the same in every process: aggregate with max, not sum. Unread (the database failed
 * or took longer than timeoutMs, a pool held by transactions), both are NaN and the scrape answers.
 */
export function registerWebhookBacklogGauges(
  registry: Registry,
  readBacklog: () => Promise<WebhookBacklogFigures>,
  log: { warn(object: object, message: string): void },
  timeoutMs = BACKLOG_READ_TIMEOUT_MS,
): void {
  let reading: Promise<WebhookBacklogFigures | undefined> | undefined;
  const read = () => {
    reading ??= withTimeout(readBacklog(), timeoutMs)
      .catch((error: unknown) => {
        log.warn({ err: error }, 'the webhook backlog could not be read for /metrics');
        return undefined;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  new Gauge({
    name: 'orderpay_webhook_deliveries_due',
    help: 'Webhook deliveries due now (pending, their time come, being sent or not) to enabled endpoints, as the database has them at the scrape: the same in every process.',
    registers: [registry],
    async collect() {
      this.set((await read())?.due ?? Number.NaN);
    },
  });
  new Gauge({
    name: 'orderpay_webhook_oldest_due_age_seconds',
    help: 'Seconds since the oldest webhook delivery due now to an enabled endpoint came due (0 when none is): how far delivery lags.',
    registers: [registry],
    async collect() {
      this.set((await read())?.oldestDueAgeSeconds ?? Number.NaN);
    },
  });
}

/** The promise's value, or a rejection once timeoutMs have passed (the work itself goes on). */
function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`not read within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
