// The bench's webhook endpoints. (dw)'s receives nothing: subscribed to every event, so that each
// event the baseline writes fans out to a delivery, as in production, but never delivered. And the
// delivery throughput: a local receiver, N pending deliveries to it, and the time orderpay's
// dispatcher takes to deliver them all.
// Usage: node bench/webhooks.ts (BENCH_DATABASE_URL; BENCH_DELIVERIES for the one-endpoint figure
// alone, else (j)'s scenarios, or those BENCH_WEBHOOK_SCENARIOS lists, e.g. j1,j2): starts an orderpay that may deliver to loopback, measures it and
// prints deliveries/s.
import http from 'node:http';
import { LATEST_API_VERSION } from '../src/core/api-versions.ts';
import type { Db, Queryable } from '../src/db/db.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { ALL_EVENTS, EVENT_TYPES } from '../src/events/events.rules.ts';
import { newEventId } from '../src/events/events.store.ts';
import type { PaymentRecord } from '../src/payments/payments.store.ts';
import { createSecretBox, generateSigningSecret } from '../src/webhooks/secrets.ts';
import { DELIVERIES_CHANNEL } from '../src/webhooks/wake-ups.ts';
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

/** node:http on loopback answering 204 to every request (or, hanging, never): it counts them and verifies nothing. */
function startReceiver(hanging = false): Promise<Receiver> {
  const ids = new Set<string>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') ids.add(id);
    req.resume();
    if (!hanging) req.on('end', () => res.writeHead(204).end());
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
    requestedBy: { type: 'client', clientId: 'bench' },
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

/** Attempts the dispatcher has in flight to one healthy endpoint (src/webhooks/dispatcher.ts). */
const HANGING_SLOTS = 16;

/** What an orderpay process does after committing events: wakes every dispatcher listening (src/webhooks/wake-ups.ts). */
async function notifyDispatchers(db: Queryable): Promise<void> {
  await db.query("SELECT pg_notify($1, '')", [DELIVERIES_CHANNEL]);
}

/**
 * Waits until every delivery of the endpoints succeeded; returns that moment (performance.now()).
 * Progress is read off the receivers (received(): distinct deliveries seen), so the database is
 * asked only once they have seen them all: counting a large backlog every few milliseconds would
 * load the database the dispatcher is measured on.
 */
async function waitForDeliveries(
  db: Queryable,
  endpointIds: number[],
  n: number,
  received: () => number,
  timeoutMs: number,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    const seen = received();
    if (seen >= n) {
      const { rows } = await db.query<{ succeeded: number; failed: number }>(
        `SELECT count(*) FILTER (WHERE state = 'succeeded') AS succeeded, count(*) FILTER (WHERE state = 'failed') AS failed
           FROM webhook_deliveries WHERE endpoint_id = ANY($1::bigint[])`,
        [endpointIds],
      );
      const { succeeded, failed } = rows[0]!;
      if (succeeded === n) return performance.now();
      if (failed > 0) throw new Error(`webhooks: ${failed} deliveries to the bench receiver failed`);
    }
    const waited = performance.now() - started;
    if (waited > timeoutMs || (seen === 0 && waited > 30_000)) {
      throw new Error(
        `webhooks: the receivers saw ${seen} of ${n} deliveries after ${Math.round(waited / 1000)} s: does the orderpay under test deliver webhooks to loopback (NODE_ENV other than production, ORDERPAY_WEBHOOKS_ALLOW_PRIVATE=true)?`,
      );
    }
    await sleep(seen >= n ? 5 : 20);
  }
}

/** What one delivery scenario asks: deliveries spread over fast endpoints, beside endpoints that never answer. */
interface DeliveryLoad {
  deliveries: number;
  endpoints: number;
  /** Endpoints that accept the connection and never answer, each with as many deliveries as a fast one, committed first. */
  hanging?: number;
}

/**
 * Delivery throughput of the orderpay at orderpayUrl, whose process delivers webhooks from db
 * (see startDeliveringOrderpay): empties the delivery tables (the bench database is the bench's
 * own), points the endpoints at local receivers, commits the pending deliveries at once (the hanging
 * endpoints' first) and times the fast endpoints' until all are succeeded.
 */
async function measureDeliveries(db: Db, orderpayUrl: string, load: DeliveryLoad, timeoutMs: number): Promise<WebhookThroughput> {
  const ready = await fetch(`${orderpayUrl}/readyz`);
  if (ready.status !== 200) throw new Error(`webhooks: ${orderpayUrl}/readyz answered ${ready.status}`);
  const fast = await Promise.all(Array.from({ length: load.endpoints }, () => startReceiver()));
  const hanging = await Promise.all(Array.from({ length: load.hanging ?? 0 }, () => startReceiver(true)));
  const endpointIds: number[] = [];
  try {
    await db.exec('TRUNCATE webhook_attempts, webhook_deliveries');
    const perEndpoint = Math.ceil(load.deliveries / load.endpoints);
    for (const receiver of hanging) {
      const id = await insertEndpoint(db, receiver.url, false);
      endpointIds.push(id);
      await insertPendingDeliveries(db, id, perEndpoint);
    }
    if (hanging.length > 0) {
      await notifyDispatchers(db);
      // The hanging endpoints hold all the slots they can get before the healthy one has work.
      while (hanging.some((receiver) => receiver.counts().requests < HANGING_SLOTS)) await sleep(10);
    }
    const fastIds: number[] = [];
    for (const receiver of fast) fastIds.push(await insertEndpoint(db, receiver.url, false));
    endpointIds.push(...fastIds);
    const started = performance.now();
    await db.transaction(async (tx) => {
      for (const [i, id] of fastIds.entries())
        await insertPendingDeliveries(tx, id, Math.min(perEndpoint, load.deliveries - i * perEndpoint));
    });
    await notifyDispatchers(db);
    const received = () => fast.reduce((sum, receiver) => sum + receiver.counts().deliveries, 0);
    const seconds = ((await waitForDeliveries(db, fastIds, load.deliveries, received, timeoutMs)) - started) / 1000;
    const counts = fast.map((receiver) => receiver.counts());
    const deliveries = counts.reduce((sum, c) => sum + c.deliveries, 0);
    const requests = counts.reduce((sum, c) => sum + c.requests, 0);
    if (deliveries !== load.deliveries)
      throw new Error(`webhooks: ${load.deliveries} deliveries succeeded, the receivers saw ${deliveries}`);
    return { deliveries, seconds, deliveriesPerSecond: deliveries / seconds, duplicates: requests - deliveries };
  } finally {
    await Promise.all([...fast, ...hanging].map((receiver) => receiver.close()));
    // Their deliveries go with them (ON DELETE CASCADE).
    if (endpointIds.length > 0) await db.query('DELETE FROM webhook_endpoints WHERE id = ANY($1::bigint[])', [endpointIds]);
  }
}

/** The single-endpoint figure the bench has always printed. */
export function measureWebhookThroughput(db: Db, orderpayUrl: string, n: number, timeoutMs = 600_000): Promise<WebhookThroughput> {
  return measureDeliveries(db, orderpayUrl, { deliveries: n, endpoints: 1 }, timeoutMs);
}

/** (j)'s rows: what was delivered, how, and how fast. */
export interface WebhookScenario {
  key: string;
  label: string;
  result: WebhookThroughput;
}

/**
 * (j): one fast endpoint; 50 fast endpoints; one healthy endpoint alone and beside 4 that hang
 * (the two timed alike: the healthy one's deliveries committed after the hanging ones'); a backlog
 * of 40,000 to one endpoint.
 */
export async function measureWebhookScenarios(
  db: Db,
  orderpayUrl: string,
  log: (line: string) => void = () => undefined,
  only?: readonly string[],
): Promise<WebhookScenario[]> {
  const loads: Array<[string, string, DeliveryLoad]> = [
    ['j1', '1 endpoint, 10,000 deliveries', { deliveries: 10_000, endpoints: 1 }],
    ['j2', '50 endpoints, 20,000 deliveries', { deliveries: 20_000, endpoints: 50 }],
    ['j3', '1 endpoint alone, 1,000 deliveries', { deliveries: 1_000, endpoints: 1 }],
    [
      'j4',
      '1 endpoint beside 4 that hang, 1,000 deliveries (and 1,000 to each hanging one, first)',
      { deliveries: 1_000, endpoints: 1, hanging: 4 },
    ],
    ['j5', 'a backlog of 40,000 to 1 endpoint', { deliveries: 40_000, endpoints: 1 }],
  ];
  const scenarios: WebhookScenario[] = [];
  for (const [key, label, load] of loads) {
    if (only && !only.includes(key)) continue;
    const result = await measureDeliveries(db, orderpayUrl, load, 900_000);
    log(
      `webhooks (${key}) ${label}: ${result.seconds.toFixed(2)} s, ${Math.round(result.deliveriesPerSecond)}/s, ${result.duplicates} duplicates`,
    );
    scenarios.push({ key, label, result });
  }
  return scenarios;
}

/** orderpay serving from databaseUrl with its dispatcher allowed to deliver to loopback, woken by NOTIFY and polling every second (the defaults). */
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
    if (process.env.BENCH_DELIVERIES) {
      const result = await measureWebhookThroughput(db, orderpay.url, n);
      console.log(
        `${result.deliveries.toLocaleString('en-US')} deliveries in ${result.seconds.toFixed(2)} s: ${Math.round(result.deliveriesPerSecond).toLocaleString('en-US')} deliveries/s (${result.duplicates} duplicates)`,
      );
    } else {
      const only = process.env.BENCH_WEBHOOK_SCENARIOS?.split(',');
      await measureWebhookScenarios(db, orderpay.url, (line) => console.log(line), only);
    }
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
