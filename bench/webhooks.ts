// The bench's webhook endpoints. (dw)'s receives nothing: subscribed to every event, so that each
// event the baseline writes fans out to a delivery, as in production, but never delivered. And the
// delivery throughput: a local receiver, N pending deliveries to it, and the time orderpay's
// dispatcher takes to deliver them all.
// Usage: node bench/webhooks.ts (BENCH_DATABASE_URL, BENCH_DELIVERIES): starts an orderpay that may
// deliver to loopback, measures it and prints deliveries/s.
import http from 'node:http';
import { LATEST_API_VERSION } from '../src/core/api-versions.ts';
import type { Db, Queryable } from '../src/db/db.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { ALL_EVENTS, EVENT_TYPES } from '../src/events/events.rules.ts';
import { newEventId } from '../src/events/events.store.ts';
import type { PaymentRecord } from '../src/payments/payments.store.ts';
import { createSecretBox, generateSigningSecret } from '../src/webhooks/secrets.ts';
import { findFreePort, ORDERPAY_SERVE_COMMAND, startServerProcess, type ServerProcess } from './processes.ts';

/**
 * (dw)'s endpoint. Nothing listens on port 1 of loopback (a privileged port), so a connection to it
 * is refused; and the orderpay under test (NODE_ENV=production) refuses a private address before
 * it connects at all.
 */
export const BENCH_ENDPOINT_URL = 'http://127.0.0.1:1/orderpay-bench';

/** An endpoint row subscribed to every event type, with a signing secret sealed as orderpay seals them. */
async function insertEndpoint(db: Queryable, url: string, disabled: boolean): Promise<number> {
  // The key orderpay keeps in the database: the bench starts it without ORDERPAY_WEBHOOKS_SECRET_KEY.
  const secret = await createSecretBox(db, undefined).seal(generateSigningSecret());
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO webhook_endpoints (url, enabled_events, api_version, description, disabled, secret)
     VALUES ($1, $2, $3, 'npm run bench', $4, $5) RETURNING id`,
    [url, [ALL_EVENTS], LATEST_API_VERSION, disabled, secret],
  );
  return rows[0]!.id;
}

/** After the tables are emptied: (dw)'s endpoint, disabled until a run subscribes it. */
export async function createBenchEndpoint(db: Queryable): Promise<void> {
  await insertEndpoint(db, BENCH_ENDPOINT_URL, true);
}

/**
 * Enabled, (dw)'s endpoint gets a delivery of every event written; disabled, none: orderpay's
 * own events in (d) then fan out to nothing, so its dispatcher has nothing to attempt.
 */
export async function subscribeBenchEndpoint(db: Queryable, subscribed: boolean): Promise<void> {
  await db.query('UPDATE webhook_endpoints SET disabled = $2 WHERE url = $1', [BENCH_ENDPOINT_URL, !subscribed]);
}

/** After a run that subscribed it: the endpoint disabled and its deliveries gone, so no backlog waits for a dispatcher. */
export async function clearBenchDeliveries(db: Queryable): Promise<void> {
  await subscribeBenchEndpoint(db, false);
  await db.exec('TRUNCATE webhook_attempts, webhook_deliveries');
}

export interface WebhookThroughput {
  deliveries: number;
  /** From the moment the deliveries were committed, pending, to the moment all were succeeded. */
  seconds: number;
  deliveriesPerSecond: number;
  /** Requests the receiver got beyond one per delivery (webhooks are delivered at least once). */
  duplicates: number;
}

interface Receiver {
  url: string;
  /** Distinct webhook-id headers seen, and requests. */
  counts(): { deliveries: number; requests: number };
  close(): Promise<void>;
}

/** node:http on loopback answering 204 to every request: it counts them and verifies nothing. */
function startReceiver(): Promise<Receiver> {
  const ids = new Set<string>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') ids.add(id);
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (typeof address !== 'object' || !address) return reject(new Error('receiver: no port'));
      resolve({
        url: `http://127.0.0.1:${address.port}/webhooks`,
        counts: () => ({ deliveries: ids.size, requests }),
        close: () => new Promise((done) => server.close(() => done()).closeAllConnections()),
      });
    });
  });
}

/** What every bench event carries: a payment's record, as orderpay's payment.succeeded does. */
function samplePaymentRecord(): PaymentRecord {
  const now = new Date().toISOString();
  return {
    id: 1,
    status: 'succeeded',
    amount: 1250,
    currency: 'EUR',
    amountRefunded: 0,
    orderId: null,
    customerId: null,
    declineCode: null,
    cancellationReason: null,
    nextAction: null,
    actionExpiresAt: null,
    paymentMethod: null,
    returnUrl: null,
    livemode: false,
    createdAt: now,
    updatedAt: now,
    version: 1,
    reference: 'op_bench',
    processor: 'simulator',
    processorReference: 'sim_ch_bench',
    attempts: 0,
    needsAttentionSince: null,
    attentionReason: null,
  };
}

/** n payment.succeeded events and a pending delivery of each to the endpoint, committed together. */
async function insertPendingDeliveries(db: Queryable, endpointId: number, n: number): Promise<void> {
  await db.query(
    `WITH event AS (
       INSERT INTO events (id, type, object_type, object)
       SELECT id, 'payment.succeeded', $3, $4::jsonb FROM unnest($1::text[]) AS id RETURNING id
     )
     INSERT INTO webhook_deliveries (endpoint_id, event_id) SELECT $2, id FROM event`,
    [Array.from({ length: n }, newEventId), endpointId, EVENT_TYPES['payment.succeeded'], JSON.stringify(samplePaymentRecord())],
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until every delivery of the endpoint succeeded; returns that moment (performance.now()). */
async function waitForDeliveries(db: Queryable, endpointId: number, n: number, timeoutMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { rows } = await db.query<{ succeeded: number; failed: number }>(
      `SELECT count(*) FILTER (WHERE state = 'succeeded') AS succeeded, count(*) FILTER (WHERE state = 'failed') AS failed
         FROM webhook_deliveries WHERE endpoint_id = $1`,
      [endpointId],
    );
    const { succeeded, failed } = rows[0]!;
    if (succeeded === n) return performance.now();
    if (failed > 0) throw new Error(`webhooks: ${failed} deliveries to the bench receiver failed`);
    const waited = performance.now() - started;
    if (waited > timeoutMs || (succeeded === 0 && waited > 30_000)) {
      throw new Error(
        `webhooks: ${succeeded} of ${n} deliveries succeeded after ${Math.round(waited / 1000)} s: does the orderpay under test deliver webhooks to loopback (NODE_ENV other than production, ORDERPAY_WEBHOOKS_ALLOW_PRIVATE=true)?`,
      );
    }
    await sleep(100);
  }
}

/**
 * Delivery throughput of the orderpay at orderpayUrl, whose process delivers webhooks from db
 * (see startDeliveringOrderpay): empties the delivery tables (the bench database is the bench's
 * own), points one endpoint at a local receiver, commits n pending deliveries to it at once and
 * times them until all are succeeded.
 */
export async function measureWebhookThroughput(db: Db, orderpayUrl: string, n: number, timeoutMs = 600_000): Promise<WebhookThroughput> {
  const ready = await fetch(`${orderpayUrl}/readyz`);
  if (ready.status !== 200) throw new Error(`webhooks: ${orderpayUrl}/readyz answered ${ready.status}`);
  const receiver = await startReceiver();
  let endpointId: number | undefined;
  try {
    await db.exec('TRUNCATE webhook_attempts, webhook_deliveries');
    endpointId = await insertEndpoint(db, receiver.url, false);
    await insertPendingDeliveries(db, endpointId, n);
    const started = performance.now();
    const seconds = ((await waitForDeliveries(db, endpointId, n, timeoutMs)) - started) / 1000;
    const { deliveries, requests } = receiver.counts();
    if (deliveries !== n) throw new Error(`webhooks: ${n} deliveries succeeded, the receiver saw ${deliveries}`);
    return { deliveries: n, seconds, deliveriesPerSecond: n / seconds, duplicates: requests - deliveries };
  } finally {
    await receiver.close();
    // Its deliveries go with it (ON DELETE CASCADE).
    if (endpointId !== undefined) await db.query('DELETE FROM webhook_endpoints WHERE id = $1', [endpointId]);
  }
}

/** orderpay serving from databaseUrl with its dispatcher allowed to deliver to loopback, polling often. */
export async function startDeliveringOrderpay(databaseUrl: string): Promise<ServerProcess> {
  return startServerProcess(
    'orderpay-webhooks',
    ORDERPAY_SERVE_COMMAND,
    {
      DATABASE_URL: databaseUrl,
      PORT: String(await findFreePort()),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      // Production refuses private addresses, and the receiver is on loopback.
      NODE_ENV: 'development',
      ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
      ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '10',
    },
    /"event":"listening","url":"([^"]+)"/,
  );
}

async function main(): Promise<void> {
  const databaseUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/orderpay_bench';
  const n = Number(process.env.BENCH_DELIVERIES || 10_000);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new Error('BENCH_DELIVERIES must be a whole number 1–1,000,000');
  const db = await openPostgres(databaseUrl, {
    pooler: 'none',
    poolMax: 1,
    connectTimeoutMs: 10_000,
    statementTimeoutMs: 600_000,
    idleInTransactionTimeoutMs: 60_000,
  });
  let orderpay: ServerProcess | undefined;
  try {
    await migrate(db);
    orderpay = await startDeliveringOrderpay(databaseUrl);
    const result = await measureWebhookThroughput(db, orderpay.url, n);
    console.log(
      `${result.deliveries.toLocaleString('en-US')} deliveries in ${result.seconds.toFixed(2)} s: ${Math.round(result.deliveriesPerSecond).toLocaleString('en-US')} deliveries/s (${result.duplicates} duplicates)`,
    );
  } finally {
    await orderpay?.stop();
    await db.close();
  }
}

if (import.meta.main) {
  await main().catch((error: unknown) => {
    console.error('bench:', error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
