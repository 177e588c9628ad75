// The order counters of migration 0001 (customer_order_counts, order_status_counts), kept by
// statement-level triggers: after any mix of writes they equal COUNT(*) of the visible orders.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createCursorCodec } from '../../src/core/cursor.ts';
import { pageOf, planPage } from '../../src/core/paging.ts';
import type { Db } from '../../src/db/db.ts';
import { ORDER_STATUSES, type OrderStatus } from '../../src/orders/orders.rules.ts';
import { insertOrder, selectOrderPage, softDeleteOrder, updateOrderStatus } from '../../src/orders/orders.store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createRandom } from '../helpers/random.ts';

interface CountRow {
  customer_id?: number;
  status: string;
  shard?: number;
  n: number;
}

/** Asserts both counter tables against COUNT(*) over the visible orders, and the store's reads. */
async function assertCountersExact(db: Db, customers: number[], context: string): Promise<void> {
  const byCustomer = await db.query<CountRow>(
    'SELECT customer_id, status, n FROM customer_order_counts WHERE n <> 0 ORDER BY customer_id, status',
  );
  const countedByCustomer = await db.query<CountRow>(
    'SELECT customer_id, status, count(*) AS n FROM orders WHERE deleted_at IS NULL GROUP BY customer_id, status ORDER BY customer_id, status',
  );
  assert.deepEqual(byCustomer.rows, countedByCustomer.rows, `customer_order_counts after ${context}`);

  const byStatus = await db.query<CountRow>('SELECT status, shard, n FROM order_status_counts WHERE n <> 0 ORDER BY status, shard');
  const countedByStatus = await db.query<CountRow>(
    'SELECT status, (id % 16)::smallint AS shard, count(*) AS n FROM orders WHERE deleted_at IS NULL GROUP BY status, id % 16 ORDER BY status, shard',
  );
  assert.deepEqual(byStatus.rows, countedByStatus.rows, `order_status_counts after ${context}`);

  const negative = await db.query(
    'SELECT * FROM customer_order_counts WHERE n < 0 UNION ALL SELECT NULL, status, n FROM order_status_counts WHERE n < 0',
  );
  assert.deepEqual(negative.rows, [], `no counter below zero after ${context}`);

  // The collection totals read from the counters (selectOrderPage's meta total) match as well.
  const plan = planPage(pageOf({ pageSize: 1 }, createCursorCodec(randomBytes(32))), 'orders', {}, [{ field: 'id', descending: false }]);
  const countOrders = async (database: typeof db, filters: Parameters<typeof selectOrderPage>[1]) =>
    (await selectOrderPage(database, filters, plan)).total;
  for (const status of [undefined, ...ORDER_STATUSES]) {
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*) AS n FROM orders WHERE deleted_at IS NULL AND ($1::text IS NULL OR status = $1)',
      [status ?? null],
    );
    assert.equal(await countOrders(db, { status }), rows[0]!.n, `countOrders(status=${status}) after ${context}`);
    for (const customerId of customers) {
      const own = await db.query<{ n: number }>(
        'SELECT count(*) AS n FROM orders WHERE deleted_at IS NULL AND customer_id = $1 AND ($2::text IS NULL OR status = $2)',
        [customerId, status ?? null],
      );
      assert.equal(
        await countOrders(db, { customerId, status }),
        own.rows[0]!.n,
        `countOrders(customer ${customerId}, status=${status}) after ${context}`,
      );
    }
  }
}

describe('order counters (migration 0001) equal COUNT(*) of visible orders', () => {
  let database: TestDatabase;
  let db: Db;

  before(async () => {
    database = await createTestDatabase();
    db = database.db;
  });
  after(() => database.drop());

  test('after a seeded random sequence of inserts, status changes, soft and hard deletes and multi-row writes', async () => {
    const seed = Number(process.env.ORDER_COUNTS_SEED ?? 90_210);
    const random = createRandom(seed);
    const customers = await Promise.all(Array.from({ length: 4 }, async () => (await createUser(db)).id));
    const visible = async () =>
      (
        await db.query<{ id: number }>('SELECT id FROM orders WHERE deleted_at IS NULL AND customer_id = ANY($1) ORDER BY id', [customers])
      ).rows.map((r) => r.id);
    const any = async () =>
      (await db.query<{ id: number }>('SELECT id FROM orders WHERE customer_id = ANY($1) ORDER BY id', [customers])).rows.map((r) => r.id);
    const log: string[] = [];

    const operations: Record<string, () => Promise<void>> = {
      async insertOne() {
        const order = await insertOrder(db, { customerId: random.pick(customers), total: random.int(100_000), currency: 'EUR' });
        log.push(`insert ${order.id}`);
      },
      async insertWithStatus() {
        const status = random.pick(ORDER_STATUSES);
        await db.query("INSERT INTO orders (customer_id, status, total, currency) VALUES ($1, $2, $3, 'EUR')", [
          random.pick(customers),
          status,
          random.int(5000),
        ]);
        log.push(`insert ${status}`);
      },
      async insertMany() {
        // One statement, many rows of several customers and statuses, some born deleted.
        const n = 1 + random.int(12);
        const rows = Array.from({ length: n }, () => [
          random.pick(customers),
          random.pick(ORDER_STATUSES),
          random.int(10_000),
          random.next() < 0.2,
        ]);
        await db.query(
          `INSERT INTO orders (customer_id, status, total, currency, deleted_at)
           SELECT c, s, t, 'EUR', CASE WHEN d THEN now() END FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::boolean[]) AS r(c, s, t, d)`,
          [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3])],
        );
        log.push(`insert ${n} rows`);
      },
      async changeStatus() {
        const ids = await visible();
        if (ids.length === 0) return;
        const id = random.pick(ids);
        const status = random.pick(ORDER_STATUSES);
        await db.transaction((tx) => updateOrderStatus(tx, id, status as OrderStatus));
        log.push(`status ${id} → ${status}`);
      },
      async changeStatusOfMany() {
        // Several rows in one statement, deleted ones included (their change must not count).
        const customer = random.pick(customers);
        const status = random.pick(ORDER_STATUSES);
        const { rowCount } = await db.query('UPDATE orders SET status = $2, version = version + 1 WHERE customer_id = $1 AND id % 3 = $3', [
          customer,
          status,
          random.int(3),
        ]);
        log.push(`status of ${rowCount} rows of ${customer} → ${status}`);
      },
      async softDelete() {
        const ids = await visible();
        if (ids.length === 0) return;
        const id = random.pick(ids);
        await db.transaction((tx) => softDeleteOrder(tx, id));
        log.push(`soft delete ${id}`);
      },
      async softDeleteAgain() {
        // Deleting a deleted order again changes nothing.
        const { rows } = await db.query<{ id: number }>(
          'SELECT id FROM orders WHERE deleted_at IS NOT NULL AND customer_id = ANY($1) LIMIT 1',
          [customers],
        );
        if (rows[0]) await db.transaction((tx) => softDeleteOrder(tx, rows[0]!.id));
        log.push(`soft delete again ${rows[0]?.id}`);
      },
      async hardDelete() {
        const ids = await any();
        if (ids.length === 0) return;
        const picked = Array.from({ length: 1 + random.int(3) }, () => random.pick(ids));
        const { rowCount } = await db.query('DELETE FROM orders WHERE id = ANY($1)', [picked]);
        log.push(`hard delete ${rowCount} (${picked.join(',')})`);
      },
      async rolledBack() {
        await assert.rejects(
          db.transaction(async (tx) => {
            await insertOrder(tx, { customerId: random.pick(customers), total: 1, currency: 'EUR' });
            await tx.query("UPDATE orders SET status = 'cancelled' WHERE customer_id = $1", [random.pick(customers)]);
            throw new Error('rolled back');
          }),
          /rolled back/,
        );
        log.push('rolled back');
      },
    };
    const names = Object.keys(operations);

    for (let i = 1; i <= 150; i++) {
      await operations[random.pick(names)]!();
      if (i % 15 === 0) await assertCountersExact(db, customers, `seed ${seed}, step ${i}: ${log.slice(-3).join('; ')}`);
    }
    // The sequence did exercise every kind of write and left some of each visible status.
    for (const name of ['insert ', 'rows', 'status ', 'status of', 'soft delete ', 'hard delete', 'rolled back']) {
      assert.ok(
        log.some((entry) => entry.includes(name)),
        `the sequence includes "${name}"`,
      );
    }
    assert.ok((await visible()).length > 10, 'orders remain to be counted');
    await assertCountersExact(db, customers, `seed ${seed}, the whole sequence`);
  });

  test('concurrent single-write transactions (as the service makes them) keep overlapping counters exact', async () => {
    const customers = await Promise.all(Array.from({ length: 3 }, async () => (await createUser(db)).id));
    const random = createRandom(7);
    // Orders for the updates and deletes to act on, one per transaction so no two touch one row.
    const existing = await Promise.all(
      Array.from({ length: 20 }, () => insertOrder(db, { customerId: random.pick(customers), total: 100, currency: 'EUR' })),
    );
    const writes = existing.map((order, i) =>
      db.transaction(async (tx) => {
        if (i % 4 === 0) await softDeleteOrder(tx, order.id);
        else await updateOrderStatus(tx, order.id, random.pick(ORDER_STATUSES));
      }),
    );
    for (let i = 0; i < 20; i++) {
      writes.push(
        db.transaction(async (tx) => {
          if (i % 2 === 0) {
            await insertOrder(tx, { customerId: random.pick(customers), total: 100, currency: 'EUR' });
          } else {
            const rows = Array.from({ length: 2 + random.int(5) }, () => [random.pick(customers), random.pick(ORDER_STATUSES)]);
            await tx.query(
              "INSERT INTO orders (customer_id, status, total, currency) SELECT c, s, 1, 'EUR' FROM unnest($1::bigint[], $2::text[]) AS r(c, s)",
              [rows.map((r) => r[0]), rows.map((r) => r[1])],
            );
          }
        }),
      );
    }
    const settled = await Promise.allSettled(writes);
    assert.deepEqual(
      settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason)),
      [],
    );
    await assertCountersExact(db, customers, 'concurrent transactions');
  });
});
