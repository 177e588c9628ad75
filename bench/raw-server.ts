// The baseline: node:http + a pg Pool, no framework, no authentication, no validation beyond what
// the SQL needs. It runs the SQL orderpay runs for the same requests, with the same type parsing
// (int8 → number, timestamptz → RFC 3339 string), so the ratio measures what the API adds.
//   GET /orders/{id}                      the id lookup
//   GET /prepared/orders/{id}             the same prepared; with If-None-Match, the version alone
//                                         first, and 304 when the tag (as orderpay's v1 spells it)
//                                         matches (scenario fr)
//   GET /orders?…&customerId=…            the filtered page and its count(*), as orderpay with minTotal
//   GET /orders?status=…                  the page only, WITHOUT any count
//   POST /payments + Idempotency-Key      in orderpay's phases: claim the key (ON CONFLICT DO
//                                         NOTHING); one transaction that holds the claim, records the
//                                         payment processing and the key's recovery point; the
//                                         charge's id recorded; one transaction that moves the payment
//                                         to succeeded and stores the response on the key
//   … with a key already completed        the stored response, by one SELECT
//   POST /prepared/payments               the same with its statements prepared, as orderpay's are
//   POST /with-event/payments             that, with orderpay's payment.succeeded event in the
//                                         transaction as orderpay writes it: recordEvent into the
//                                         outbox, written with its fan-out to webhook deliveries by
//                                         the statement that stores the response (scenarios dw, dx)
// Usage: node bench/raw-server.ts (DATABASE_URL, PORT, PAYER_USER_ID); prints "listening <url>" when ready.
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { OID, parseInt8, parseTimestamptz, type Queryable } from '../src/db/db.ts';
import { openOutbox, outboxCte, takeOutbox } from '../src/db/outbox.ts';
import { recordEvent } from '../src/events/events.store.ts';
import { entityTag } from '../src/http/etag.ts';
import { PREPARED_PREFIX, WITH_EVENT_PREFIX } from './payments.ts';

const COLUMNS = `id, status, customer_id AS "customerId", total, currency, created_at AS "createdAt", updated_at AS "updatedAt"`;
const SORT_COLUMNS: Record<string, string> = { createdAt: 'created_at', status: 'status', total: 'total', id: 'id' };

// Behind a transaction-mode pooler (BENCH_POOLER=pgbouncer), as orderpay is there: no named
// statements, no startup options (docs/deploy.md, "Connection poolers").
const POOLED = process.env.POOLER === 'transaction';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_MAX ?? 10),
  idleTimeoutMillis: 30_000, // as orderpay's pool
  ...(POOLED ? {} : { options: '-c TimeZone=UTC' }),
  types: {
    getTypeParser: (oid: number, format?: string) =>
      oid === OID.INT8 ? parseInt8 : oid === OID.TIMESTAMPTZ ? parseTimestamptz : pg.types.getTypeParser(oid, format as 'text'),
  } as pg.CustomTypesConfig,
});
pool.on('error', () => undefined);

function orderBy(sort: string | null): string {
  const keys = (sort ?? 'createdAt').split(',').map((k) => ({ column: SORT_COLUMNS[k.replace(/^-/, '')], desc: k.startsWith('-') }));
  if (keys.some((k) => !k.column)) throw new Error('bad sort');
  if (!keys.some((k) => k.column === 'id')) keys.push({ column: 'id', desc: keys[0]!.desc });
  return keys.map((k) => `${k.column} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
}

async function findOrder(id: number, prepared = false): Promise<unknown> {
  const text = `SELECT ${COLUMNS} FROM orders WHERE id = $1 AND deleted_at IS NULL`;
  const { rows } = await pool.query(prepared && !POOLED ? { name: 'find-order', text, values: [id] } : { text, values: [id] });
  return rows[0];
}

/** The order's entity tag as orderpay spells it in v1, from its version alone. */
async function findOrderTag(id: number): Promise<string | undefined> {
  const { rows } = await pool.query<{ version: number }>({
    ...(POOLED ? {} : { name: 'find-order-version' }),
    text: 'SELECT version FROM orders WHERE id = $1 AND deleted_at IS NULL',
    values: [id],
  });
  return rows[0] && entityTag('order', id, rows[0].version, 1);
}

async function listOrders(query: URLSearchParams): Promise<unknown> {
  const params: unknown[] = [];
  const where = ['deleted_at IS NULL'];
  const customerId = query.get('customerId');
  const status = query.get('status');
  const minTotal = query.get('minTotal');
  if (customerId !== null) where.push(`customer_id = $${params.push(Number(customerId))}`);
  if (status !== null) where.push(`status = $${params.push(status)}`);
  if (minTotal !== null) where.push(`total >= $${params.push(Number(minTotal))}`);
  const page = { page: Number(query.get('page') ?? 1), pageSize: Number(query.get('pageSize') ?? 20) };
  const pageParams = [...params, page.pageSize, (page.page - 1) * page.pageSize];
  const selectPage = pool.query(
    `SELECT ${COLUMNS} FROM orders WHERE ${where.join(' AND ')} ORDER BY ${orderBy(query.get('sort'))} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    pageParams,
  );
  // Only the selective filter is counted; the broad one is the page alone (the baseline).
  const count =
    customerId !== null ? pool.query<{ n: number }>(`SELECT count(*) AS n FROM orders WHERE ${where.join(' AND ')}`, params) : undefined;
  const [{ rows }, counted] = await Promise.all([selectPage, count]);
  const meta: Record<string, number> = { page: page.page, pageSize: page.pageSize };
  if (counted) meta.total = counted.rows[0]!.n;
  return { data: rows, meta };
}

// The payer orderpay records for the bench's staff token, and keys in a namespace of their own
// (orderpay's are under the token's client, orderpay-cli), with orderpay's default lifetimes.
const PAYER_USER_ID = Number(process.env.PAYER_USER_ID);
const KEY_OWNER = { clientId: 'bench-baseline', subject: String(PAYER_USER_ID) };
const LOCK_SECONDS = 30;
const RETENTION_SECONDS = 86_400;
// The payment's record as orderpay's store returns it (src/payments/payments.store.ts): its event
// carries all of it, the response what v1 shows of it (src/payments/payments.representation.ts).
const PAYMENT_COLUMNS = `id, status, amount, currency, amount_refunded AS "amountRefunded", order_id AS "orderId",
  customer_id AS "customerId", decline_code AS "declineCode", cancellation_reason AS "cancellationReason",
  next_action AS "nextAction", action_expires_at AS "actionExpiresAt", payment_method AS "paymentMethod",
  return_url AS "returnUrl", livemode, created_at AS "createdAt", updated_at AS "updatedAt", version, reference, processor,
  processor_reference AS "processorReference", attempts, needs_attention_since AS "needsAttentionSince",
  attention_reason AS "attentionReason"`;

interface PaymentRow {
  id: number;
  status: string;
  amount: number;
  currency: string;
  amountRefunded: number;
  orderId: number | null;
  customerId: number | null;
  declineCode: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The payment as v1's response shows it. */
function representation(row: PaymentRow): PaymentRow {
  const { id, status, amount, currency, amountRefunded, orderId, customerId, declineCode, createdAt, updatedAt } = row;
  return { id, status, amount, currency, amountRefunded, orderId, customerId, declineCode, createdAt, updatedAt };
}

/** The transaction's client as orderpay's Queryable, for recordEvent and its outbox. */
function asQueryable(client: pg.PoolClient): Queryable {
  return {
    async query<T>(sql: string, params?: readonly unknown[]) {
      const result = await client.query(sql, params as unknown[] | undefined);
      return { rows: result.rows as T[], rowCount: result.rowCount ?? 0 };
    },
    async exec(sql: string) {
      await client.query(sql);
    },
  };
}

interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

async function findStoredResponse(key: string): Promise<StoredResponse | undefined> {
  const { rows } = await pool.query<StoredResponse>(
    `SELECT response_status AS status, response_headers AS headers, response_body AS body FROM idempotency_keys
      WHERE client_id = $1 AND subject = $2 AND key = $3 AND state = 'completed'`,
    [KEY_OWNER.clientId, KEY_OWNER.subject, key],
  );
  return rows[0];
}

type Run = <R extends pg.QueryResultRow>(name: string, sql: string, values: unknown[]) => Promise<pg.QueryResult<R>>;

/** Prepared (named, planned once per connection, as orderpay's statements are) or sent as text. */
function runner(client: pg.Pool | pg.PoolClient, prepared: boolean): Run {
  return <R extends pg.QueryResultRow>(name: string, sql: string, values: unknown[]) =>
    client.query<R>(prepared && !POOLED ? { name, text: sql, values } : { text: sql, values });
}

/** fn in one transaction of a pooled connection. */
async function inTransaction<T>(prepared: boolean, fn: (run: Run, client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(runner(client, prepared), client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * The payment in orderpay's phases (docs/payments.md, "How a payment is made"), its processor
 * answering at once: the key's claim; phase 1 (the claim held, the payment recorded processing,
 * the recovery point); the charge's id recorded; phase 3 (the payment succeeded, with its event
 * when withEvent, and the stored response). Undefined when the key was taken.
 */
async function createPayment(key: string, text: string, variant: PaymentVariant): Promise<StoredResponse | undefined> {
  const { withEvent, prepared } = variant;
  const body = JSON.parse(text) as { amount: number; currency: string };
  const lockToken = randomUUID();
  const claim = await runner(pool, prepared)<{ id: number }>(
    'bench-claim',
    `INSERT INTO idempotency_keys (client_id, subject, key, method, path, fingerprint, state, operation_id, lock_token, locked_until, expires_at)
     VALUES ($1, $2, $3, 'POST', '/payments', $4, 'in_flight', gen_random_uuid(), $5, now() + make_interval(secs => $6), now() + make_interval(secs => $7))
     ON CONFLICT ON CONSTRAINT idempotency_keys_caller_key DO NOTHING RETURNING id`,
    [KEY_OWNER.clientId, KEY_OWNER.subject, key, sha256(text), lockToken, LOCK_SECONDS, RETENTION_SECONDS],
  );
  const claimId = claim.rows[0]?.id;
  if (claimId === undefined) return undefined;
  const reference = `op_${randomUUID()}`;
  const recorded = await inTransaction(prepared, async (run) => {
    await run('bench-hold', "SELECT 1 FROM idempotency_keys WHERE id = $1 AND lock_token = $2 AND state = 'in_flight' FOR UPDATE", [
      claimId,
      lockToken,
    ]);
    const { rows } = await run<PaymentRow>(
      'bench-payment',
      `INSERT INTO payments (customer_id, client_id, order_id, amount, currency, status, reference, processor, livemode, next_attempt_at, version)
       VALUES ($1, $2, NULL, $3, $4, 'processing', $5, 'simulator', false, now() + make_interval(secs => $6), 0) RETURNING ${PAYMENT_COLUMNS}`,
      [PAYER_USER_ID, KEY_OWNER.clientId, body.amount, body.currency, reference, LOCK_SECONDS],
    );
    await run(
      'bench-recovery-point',
      "UPDATE idempotency_keys SET recovery_point = $3 WHERE id = $1 AND lock_token = $2 AND state = 'in_flight'",
      [claimId, lockToken, rows[0]!.id],
    );
    return rows[0]!;
  });
  await runner(pool, prepared)(
    'bench-charge',
    'UPDATE payments SET processor_reference = $2 WHERE id = $1 AND processor_reference IS NULL',
    [recorded.id, `sim_ch_${sha256(reference).slice(0, 24)}`],
  );
  return inTransaction(prepared, async (run, client) => {
    const { rows } = await run<PaymentRow>(
      'bench-settle',
      `UPDATE payments SET status = 'succeeded', next_attempt_at = NULL, attempts = 0, version = version + 1, updated_at = now()
        WHERE id = $1 AND status = 'processing' RETURNING ${PAYMENT_COLUMNS}`,
      [recorded.id],
    );
    const payment = rows[0]!;
    // As orderpay: recordEvent puts the event in the transaction's outbox, and the statement that
    // stores the response writes it, with its fan-out (src/db/outbox.ts).
    const tx = asQueryable(client);
    if (withEvent) {
      openOutbox(tx);
      await recordEvent(tx, 'payment.succeeded', payment, { type: 'user', userId: PAYER_USER_ID, clientId: KEY_OWNER.clientId });
    }
    const outbox = outboxCte(takeOutbox(tx), 6);
    const response: StoredResponse = {
      status: 201,
      headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', location: `/payments/${payment.id}` },
      body: JSON.stringify(representation(payment)),
    };
    await run(
      outbox.sql ? 'bench-complete-with-event' : 'bench-complete',
      `${outbox.sql}UPDATE idempotency_keys SET state = 'completed', response_status = $3, response_headers = $4::jsonb, response_body = $5, locked_until = now()
        WHERE id = $1 AND lock_token = $2 AND state = 'in_flight'`,
      [claimId, lockToken, response.status, JSON.stringify(response.headers), response.body, ...outbox.params],
    );
    return response;
  });
}

// Keys this process completed. They let each scenario cost the baseline only its minimal SQL: a
// new key the transaction, a used one the SELECT. A used key it does not know (after a restart)
// still replays: its claim conflicts, and the SELECT follows.
const completedKeys = new Set<string>();

/** A completed key replays its response; a new one does the work. */
/** What a payment path runs: (d)'s baseline sends its statements as text; (dw) and (dx) prepare both sides. */
interface PaymentVariant {
  withEvent: boolean;
  prepared: boolean;
}

const PAYMENT_PATHS: Record<string, PaymentVariant> = {
  '/payments': { withEvent: false, prepared: false },
  [`${PREPARED_PREFIX}/payments`]: { withEvent: false, prepared: true },
  [`${WITH_EVENT_PREFIX}/payments`]: { withEvent: true, prepared: true },
};

async function postPayment(req: http.IncomingMessage, res: http.ServerResponse, variant: PaymentVariant): Promise<void> {
  const key = req.headers['idempotency-key'];
  const text = await readBody(req);
  if (typeof key !== 'string' || !key) return send(res, 400, { error: 'Idempotency-Key required' });
  const created = completedKeys.has(key) ? undefined : await createPayment(key, text, variant);
  if (created) {
    completedKeys.add(key);
    return sendStored(res, created, false);
  }
  const stored = await findStoredResponse(key);
  if (stored) return sendStored(res, stored, true);
  send(res, 409, { error: 'key in use' });
}

function sendStored(res: http.ServerResponse, response: StoredResponse, replayed: boolean): void {
  const headers: Record<string, string | number> = { ...response.headers, 'content-length': Buffer.byteLength(response.body) };
  if (replayed) headers['idempotent-replayed'] = 'true';
  res.writeHead(response.status, headers);
  res.end(response.body);
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  if (status === 304) return void res.writeHead(304, { etag: String(body) }).end();
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

const ORDER_PATH = new RegExp(`^(${PREPARED_PREFIX})?/orders/(\\d+)$`);

/** [status, body]; a 304's "body" is the ETag it carries. */
async function route(req: http.IncomingMessage): Promise<[number, unknown]> {
  const url = new URL(req.url ?? '/', 'http://raw');
  const byId = ORDER_PATH.exec(url.pathname);
  if (req.method === 'GET' && byId) {
    const [, prepared, id] = byId;
    const ifNoneMatch = req.headers['if-none-match'];
    if (prepared && ifNoneMatch !== undefined && ifNoneMatch === (await findOrderTag(Number(id)))) return [304, ifNoneMatch];
    const order = await findOrder(Number(id), prepared !== undefined);
    return order ? [200, order] : [404, { error: 'not found' }];
  }
  if (req.method === 'GET' && url.pathname === '/orders') return [200, await listOrders(url.searchParams)];
  return [404, { error: 'not found' }];
}

const server = http.createServer((req, res) => {
  const failed = (error: unknown) => send(res, 500, { error: String(error) });
  const payment = req.method === 'POST' ? PAYMENT_PATHS[req.url ?? ''] : undefined;
  if (payment) return void postPayment(req, res, payment).catch(failed);
  route(req).then(([status, body]) => send(res, status, body), failed);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening http://127.0.0.1:${typeof address === 'object' && address ? address.port : ''}`);
});
process.once('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
