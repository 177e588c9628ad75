// What must hold after every fault (docs/reliability.md): each 201 a client saw is in the database
// exactly once; nothing is there that no request of the clients accounts for; collection totals
// equal count(*); every answer during the fault was a 503 with Retry-After, never a 500.
import type { Db } from '../../src/db/db.ts';
import { createSimulatedProcessor } from '../../src/payments/simulator.ts';
import { withTargetDatabase } from '../cli/orderpay-process.ts';
import type { Ledger } from './clients.ts';
import type { World } from './orderpay-fleet.ts';

interface KeyRow {
  key: string;
  path: string;
  state: string;
  responseStatus: number | null;
  storedId: number | null;
  operationId: string;
}

interface PaymentRow {
  id: number;
  orderId: number | null;
  status: string;
  processorReference: string;
}

interface OrderRow {
  id: number;
  status: string;
}

interface Rows {
  keys: KeyRow[];
  payments: PaymentRow[];
  orders: OrderRow[];
  orderItems: Map<number, number>;
}

async function readRows(db: Db, customerId: number): Promise<Rows> {
  const keys = await db.query<KeyRow>(
    `SELECT key, path, state, response_status AS "responseStatus", operation_id::text AS "operationId",
            CASE WHEN response_status = 201 THEN (response_body::jsonb ->> 'id')::bigint END AS "storedId"
       FROM idempotency_keys WHERE subject = $1`,
    [String(customerId)],
  );
  const payments = await db.query<PaymentRow>(
    'SELECT id, order_id AS "orderId", status, processor_reference AS "processorReference" FROM payments ORDER BY id',
  );
  const orders = await db.query<OrderRow>('SELECT id, status FROM orders WHERE deleted_at IS NULL ORDER BY id');
  const items = await db.query<{ orderId: number; n: number }>(
    'SELECT order_id AS "orderId", count(*)::int AS n FROM order_items GROUP BY order_id',
  );
  return { keys: keys.rows, payments: payments.rows, orders: orders.rows, orderItems: new Map(items.rows.map((r) => [r.orderId, r.n])) };
}

/** The reference the simulated processor gives the charge of an operation (src/idempotency/). */
async function chargeReference(operationId: string): Promise<string> {
  const charge = { reference: `op_${operationId}`, amount: 100, currency: 'EUR', paymentMethod: null, returnUrl: null };
  return (await createSimulatedProcessor().createCharge(charge)).processorReference;
}

/** Every 201 seen is in the database, once, as the response stored under its key. */
async function findLostOrDoubled(ledger: Ledger, rows: Rows): Promise<string[]> {
  const problems: string[] = [];
  const keyByName = new Map(rows.keys.map((k) => [k.key, k]));
  const paymentsById = new Map(rows.payments.map((p) => [p.id, p]));
  const ordersById = new Map(rows.orders.map((o) => [o.id, o]));
  for (const [key, seen] of ledger.created) {
    const stored = keyByName.get(key);
    if (stored?.state !== 'completed' || stored.storedId !== seen.id) {
      problems.push(`201 for key ${key} (id ${seen.id}) is not the response stored under it: ${JSON.stringify(stored)}`);
      continue;
    }
    if (seen.kind === 'create-order') {
      if (!ordersById.has(seen.id)) problems.push(`order ${seen.id} (201 for key ${key}) is not in the database`);
      else if (rows.orderItems.get(seen.id) !== 1) problems.push(`order ${seen.id} has ${rows.orderItems.get(seen.id)} items, not 1`);
      continue;
    }
    const payment = paymentsById.get(seen.id);
    if (!payment) {
      problems.push(`payment ${seen.id} (201 for key ${key}) is not in the database`);
      continue;
    }
    // Charged once: exactly one payment row carries the charge of this key's operation.
    const reference = await chargeReference(stored.operationId);
    const charges = rows.payments.filter((p) => p.processorReference === reference);
    if (charges.length !== 1) problems.push(`key ${key}'s operation was charged ${charges.length} times: ${JSON.stringify(charges)}`);
    if (seen.kind === 'pay-order' && payment.status === 'succeeded' && ordersById.get(payment.orderId!)?.status !== 'paid') {
      problems.push(
        `order ${payment.orderId} was paid by payment ${payment.id} (key ${key}) but is ${ordersById.get(payment.orderId!)?.status}`,
      );
    }
  }
  return problems;
}

/** Nothing in the database that no request of the clients accounts for. */
async function findUnaccounted(world: World, ledger: Ledger, rows: Rows): Promise<string[]> {
  const problems: string[] = [];
  for (const key of rows.keys) {
    const op = ledger.sentKeys.get(key.key);
    if (!op) problems.push(`idempotency key ${key.key} in the database was never sent`);
    else if (op.path !== key.path) problems.push(`key ${key.key} was sent to ${op.path} but recorded for ${key.path}`);
  }
  const storedBy = (path: string) =>
    new Map(rows.keys.filter((k) => k.path === path && k.storedId !== null).map((k) => [k.storedId!, k] as const));
  const paymentKeys = storedBy('/v2/payments');
  for (const payment of rows.payments) {
    const key = paymentKeys.get(payment.id);
    if (!key) {
      problems.push(`payment ${payment.id} is not the stored 201 of any key the clients sent`);
      continue;
    }
    if (payment.processorReference !== (await chargeReference(key.operationId)))
      problems.push(`payment ${payment.id} carries another operation's charge than key ${key.key}'s`);
  }
  const preexisting = new Set(world.pendingOrders.map((o) => o.id));
  const orderKeys = storedBy('/v2/orders');
  for (const order of rows.orders) {
    if (!preexisting.has(order.id) && !orderKeys.has(order.id))
      problems.push(`order ${order.id} is not the stored 201 of any key the clients sent`);
  }
  // An order is paid exactly when one succeeded payment of it exists.
  for (const order of rows.orders) {
    const settled = rows.payments.filter((p) => p.orderId === order.id && p.status !== 'declined');
    if (settled.length > 1) problems.push(`order ${order.id} has ${settled.length} settled payments`);
    if ((order.status === 'paid') !== (settled.length === 1))
      problems.push(`order ${order.id} is ${order.status} with ${settled.length} settled payments`);
  }
  return problems;
}

/** Totals the API reports (and the counters they come from) equal count(*). */
async function findWrongTotals(world: World, db: Db, serverUrl: string): Promise<string[]> {
  const problems: string[] = [];
  // A 503 with Retry-After is the API's documented "retry shortly": right after a scenario the
  // cluster's connections may still be taken (a pool larger than max_connections), so the reader
  // retries as a client would. Whether the service recovered in time is each scenario's own check.
  const total = async (path: string): Promise<number> => {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${serverUrl}${path}`, { headers: { authorization: `Bearer ${world.token}` } });
      if (response.status === 503 && attempt < 5) {
        await response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, Math.min(Number(response.headers.get('retry-after') ?? 1), 2) * 1000));
        continue;
      }
      if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { meta: { total: number } }).meta.total;
    }
  };
  const count = async (sql: string, params: unknown[] = []) => (await db.query<{ n: number }>(sql, params)).rows[0]!.n;
  const expectEqual = (what: string, reported: number, counted: number) => {
    if (reported !== counted) problems.push(`${what}: reported ${reported}, count(*) ${counted}`);
  };
  const ordersOf = 'SELECT count(*)::int AS n FROM orders WHERE deleted_at IS NULL AND customer_id = $1';
  expectEqual('GET /v2/orders meta.total', await total('/v2/orders?pageSize=1'), await count(ordersOf, [world.customerId]));
  for (const status of ['pending', 'paid']) {
    expectEqual(
      `GET /v2/orders?status=${status} meta.total`,
      await total(`/v2/orders?status=${status}&pageSize=1`),
      await count(`${ordersOf} AND status = $2`, [world.customerId, status]),
    );
  }
  expectEqual(
    'GET /v2/payments meta.total',
    await total('/v2/payments?pageSize=1'),
    await count('SELECT count(*)::int AS n FROM payments WHERE customer_id = $1', [world.customerId]),
  );
  // The trigger-kept counters behind the order totals, for every status at once.
  const mismatches = await db.query<{ status: string; counted: number; byCustomer: number; byStatus: number }>(
    `SELECT s.status, coalesce(o.n, 0)::int AS counted, coalesce(c.n, 0)::int AS "byCustomer", coalesce(t.n, 0)::int AS "byStatus"
       FROM (SELECT unnest(ARRAY['pending','paid','shipped','delivered','cancelled']) AS status) s
       LEFT JOIN (SELECT status, count(*) AS n FROM orders WHERE deleted_at IS NULL GROUP BY status) o USING (status)
       LEFT JOIN (SELECT status, sum(n) AS n FROM customer_order_counts GROUP BY status) c USING (status)
       LEFT JOIN (SELECT status, sum(n) AS n FROM order_status_counts GROUP BY status) t USING (status)
      WHERE coalesce(o.n, 0) <> coalesce(c.n, 0) OR coalesce(o.n, 0) <> coalesce(t.n, 0)`,
  );
  for (const m of mismatches.rows)
    problems.push(`order counters for ${m.status}: count(*) ${m.counted}, per customer ${m.byCustomer}, per status ${m.byStatus}`);
  return problems;
}

export interface DatabaseFigures {
  orders: number;
  payments: number;
  keys: number;
  keysInFlight: number;
}

/**
 * Checks every invariant; returns what is wrong (empty when all hold) and the figures. serverUrl
 * is a running process the API totals are read from.
 */
export async function checkInvariants(
  world: World,
  ledger: Ledger,
  serverUrl: string,
): Promise<{ problems: string[]; figures: DatabaseFigures }> {
  return withTargetDatabase(world.inspection, async (db) => {
    const rows = await readRows(db, world.customerId);
    const problems = [
      ...ledger.violations,
      ...ledger.unanswered.map((op) => `never answered: ${op.method} ${op.path} (key ${op.key ?? '-'})`),
      ...(await findLostOrDoubled(ledger, rows)),
      ...(await findUnaccounted(world, ledger, rows)),
      ...(await findWrongTotals(world, db, serverUrl)),
    ];
    const figures = {
      orders: rows.orders.length,
      payments: rows.payments.length,
      keys: rows.keys.length,
      keysInFlight: rows.keys.filter((k) => k.state === 'in_flight').length,
    };
    return { problems, figures };
  });
}
