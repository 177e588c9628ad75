// Seeds the benchmark database with set-based SQL: customers, products, then orders and their
// items in batches of INSERT … SELECT generate_series. The statement-level triggers of migration
// 0001 keep the counter tables right, exactly as for the API's own writes.
import type { Db, Queryable } from '../src/db/db.ts';

export const BENCH_STAFF_EMAIL = 'bench-staff@example.com';
/**
 * Customers of a seed: 10,000 up to 1M orders, then one per 100 orders, so that a customer's
 * orders (what (b)'s filter selects and counts) are as many at 10M as at 1M: the Scale section
 * compares the same request on a bigger table, not a request matching ten times the rows.
 */
export function customersFor(orders: number): number {
  return Math.max(10_000, Math.round(orders / 100));
}
const PRODUCTS = 200;
const BATCH = 100_000;

export interface SeedOptions {
  orders: number;
  reseed: boolean;
  onProgress(done: number, total: number): void;
  /** Names a step that has no progress of its own. */
  onStep(step: string): void;
}

/** Orders visible in the database, from the counter tables (cheap even at 1M rows). */
async function countSeededOrders(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT coalesce(sum(n), 0)::bigint AS n FROM order_status_counts');
  return rows[0]?.n ?? 0;
}

async function hasBenchUsers(db: Db, customers: number): Promise<boolean> {
  const { rows } = await db.query<{ staff: boolean; customers: number }>(
    `SELECT EXISTS (SELECT 1 FROM users WHERE email = $1) AS staff, (SELECT count(*) FROM users WHERE role = 'customer') AS customers`,
    [BENCH_STAFF_EMAIL],
  );
  return rows[0]!.staff && rows[0]!.customers === customers;
}

async function emptyTables(db: Queryable): Promise<void> {
  // TRUNCATE fires no row or statement DELETE triggers: the counters are emptied with the rows.
  await db.exec(`TRUNCATE order_items, orders, products, users, customer_order_counts, order_status_counts RESTART IDENTITY CASCADE`);
}

async function insertUsersAndProducts(db: Queryable, customers: number): Promise<void> {
  await db.query(`INSERT INTO users (email, name, role) VALUES ($1, 'Bench Staff', 'staff')`, [BENCH_STAFF_EMAIL]);
  await db.query(
    `INSERT INTO users (email, name, role, created_at)
     SELECT 'customer' || g || '@example.com', 'Customer ' || g, 'customer', now() - interval '400 days'
       FROM generate_series(1, $1::int) g`,
    [customers],
  );
  // Prices spread geometrically from 2.00 to 200.00 (many cheap products, few dear ones); one
  // product in ten is sold in USD, the rest in EUR.
  await db.query(
    `INSERT INTO products (name, price, currency)
     SELECT 'Product ' || g, round(200 * power(100, (g - 1)::numeric / ($1::int - 1)))::bigint,
            CASE WHEN g % 10 = 0 THEN 'USD' ELSE 'EUR' END
       FROM generate_series(1, $1::int) g`,
    [PRODUCTS],
  );
}

/**
 * Orders lo..hi (explicit ids, so each order's items are written by the same statement) with
 * status mix pending 20%, paid 25%, shipped 20%, delivered 30%, cancelled 5%, created over the
 * last year, customers uniform, one item of 1–5 units per order.
 */
async function insertOrderBatch(db: Queryable, lo: number, hi: number, customers: number): Promise<void> {
  await db.query(
    `WITH draw AS MATERIALIZED (
       SELECT g AS id, 1 + floor(random() * $3::int)::bigint AS product_id, 1 + floor(random() * 5)::int AS qty,
              random() AS s, now() - random() * interval '365 days' AS created_at,
              (SELECT min(id) FROM users WHERE role = 'customer') + floor(random() * $4::int)::bigint AS customer_id
         FROM generate_series($1::bigint, $2::bigint) g
     ), priced AS (
       SELECT d.*, p.price, p.currency,
              CASE WHEN s < 0.20 THEN 'pending' WHEN s < 0.45 THEN 'paid' WHEN s < 0.65 THEN 'shipped'
                   WHEN s < 0.95 THEN 'delivered' ELSE 'cancelled' END AS status
         FROM draw d JOIN products p ON p.id = d.product_id
     ), new_orders AS (
       INSERT INTO orders (id, status, customer_id, total, currency, created_at, updated_at, version)
       OVERRIDING SYSTEM VALUE
       SELECT id, status, customer_id, price * qty, currency, created_at,
              CASE WHEN status = 'pending' THEN created_at ELSE created_at + s * interval '10 days' END,
              CASE status WHEN 'pending' THEN 1 WHEN 'paid' THEN 2 WHEN 'shipped' THEN 3 WHEN 'delivered' THEN 4 ELSE 2 END
         FROM priced
     )
     INSERT INTO order_items (order_id, product_id, qty, unit_price, line_total)
     SELECT id, product_id, qty, price, price * qty FROM priced`,
    [lo, hi, PRODUCTS, customers],
  );
}

/**
 * Drops the secondary indexes of the bulk-loaded tables and returns their definitions: building
 * an index once after the load is several times faster than maintaining it row by row.
 */
async function dropSecondaryIndexes(tx: Queryable): Promise<string[]> {
  const { rows } = await tx.query<{ name: string; definition: string }>(
    `SELECT indexrelid::regclass::text AS name, pg_get_indexdef(indexrelid) AS definition
       FROM pg_index WHERE indrelid IN ('orders'::regclass, 'order_items'::regclass) AND NOT indisprimary AND NOT indisunique`,
  );
  for (const index of rows) await tx.exec(`DROP INDEX ${index.name}`);
  return rows.map((index) => index.definition);
}

/** Seeds `orders` orders unless the database already holds exactly that many (or reseed is asked). */
export async function seedBenchData(db: Db, options: SeedOptions): Promise<{ seeded: boolean }> {
  const customers = customersFor(options.orders);
  if (!options.reseed && (await hasBenchUsers(db, customers)) && (await countSeededOrders(db)) === options.orders) {
    return { seeded: false };
  }
  // One transaction: a seed that fails half-way leaves the previous data and every index in place.
  await db.transaction(async (tx) => {
    await tx.exec(`SET LOCAL synchronous_commit = off; SET LOCAL maintenance_work_mem = '256MB'`);
    await emptyTables(tx);
    await insertUsersAndProducts(tx, customers);
    const indexes = await dropSecondaryIndexes(tx);
    options.onProgress(0, options.orders);
    for (let lo = 1; lo <= options.orders; lo += BATCH) {
      const hi = Math.min(lo + BATCH - 1, options.orders);
      await insertOrderBatch(tx, lo, hi, customers);
      options.onProgress(hi, options.orders);
    }
    options.onStep(`building ${indexes.length} indexes`);
    for (const definition of indexes) await tx.exec(definition);
    // Explicit ids bypassed the identity sequences: move them past the seeded rows for later inserts.
    await tx.exec(`SELECT setval(pg_get_serial_sequence('orders', 'id'), (SELECT max(id) FROM orders))`);
    await tx.exec(`SELECT setval(pg_get_serial_sequence('order_items', 'id'), (SELECT max(id) FROM order_items))`);
  });
  options.onStep('VACUUM (ANALYZE)');
  // Vacuum sets the visibility map (index-only scans), as autovacuum would on a live table.
  await db.exec('VACUUM (ANALYZE) users, products, orders, order_items, customer_order_counts, order_status_counts');
  if ((await countSeededOrders(db)) !== options.orders) throw new Error('the order counters disagree with the seeded rows');
  return { seeded: true };
}
