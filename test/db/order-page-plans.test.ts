// Index support for every documented filter and sort of GET /orders, checked on PostgreSQL's own
// plans: on a realistic table (80 000 orders, ANALYZEd), the statement the store generates for page
// 1, a deep page by number and the pages after and before a cursor taken there is explained
// (EXPLAIN ANALYZE, JSON) and walked, with its values and as the generic plan a prepared statement
// reuses. No plan may scan orders sequentially, page 1 must read few rows of orders, and a page by
// cursor about as few as page 1, however deep it lies; and the plan cache must reuse the generic
// plan of page 1 and of a page by cursor (record 0123). The SQL is the store's own, captured on its
// way to the database through listOrders.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createCursorCodec } from '../../src/core/cursor.ts';
import { pageOf, type Collection } from '../../src/core/paging.ts';
import type { Principal } from '../../src/core/principal.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { OrderStatus } from '../../src/orders/orders.rules.ts';
import { listOrders, type ListOrdersCommand } from '../../src/orders/orders.service.ts';
import type { ListedOrder } from '../../src/orders/orders.store.ts';
import { createTestDatabase, serverUrl, type TestDatabase } from '../helpers/db.ts';

const ORDERS = 80_000;
const CUSTOMERS = 200;
const PAGE_SIZE = 10;
// Orders of 100.00 and more: about a third of them (the prices below), as a "large orders" filter would.
const MIN_TOTAL = 10_000;
// Page 1 and a page by cursor read at most what 100 pages hold (1.25% of the table): the rows they
// show and those an index scan filters out on the way (a filter its index does not lead with).
// Under customerId (one customer's orders: 1 in 200 here) the planner reads the customer's rows and
// sorts them, or walks the sort's index until it has a page of them: PostgreSQL estimates a row
// comparison by its first column alone, so a cursor at the end of a status can look as if nothing
// followed it. Either reads a bounded number of rows at any depth; only the sequential scan is
// refused there.
const MAX_ROWS_READ = 100 * PAGE_SIZE;
const SORTS = ['createdAt', '-createdAt', 'status', '-status', 'total', '-total', 'id', '-id', '-createdAt,status'];

const staff: Principal = {
  kind: 'user',
  userId: 1,
  role: 'staff',
  clientId: 'plans',
  subject: '1',
  scopes: new Set(['orders:read']),
  apiVersion: 2,
};

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

function walk(node: PlanNode, visit: (node: PlanNode, inAggregate: boolean) => void, inAggregate = false): void {
  visit(node, inAggregate);
  for (const child of node.Plans ?? []) walk(child, visit, inAggregate || node['Node Type'] === 'Aggregate');
}

/** The plan's nodes that read orders, one line each: how a failure shows what the planner chose. */
function ordersScans(plan: PlanNode): string[] {
  const scans: string[] = [];
  walk(plan, (node) => {
    if (node['Relation Name'] === 'orders') scans.push(`${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : ''}`);
  });
  return scans;
}

/** Rows of orders the page itself read (not the count beside it): those returned and those filtered out. */
function pageRowsRead(plan: PlanNode): number {
  let read = 0;
  walk(plan, (node, inAggregate) => {
    if (node['Relation Name'] !== 'orders' || inAggregate) return;
    read += (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1);
    read += (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0);
  });
  return read;
}

/** 80 000 orders over a year, customers uniform, statuses and prices mixed as a shop's are. */
async function seedOrders(db: TestDatabase['db']): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT setseed(0.42)');
    await tx.query(
      `INSERT INTO users (email, name) SELECT 'plans' || g || '@example.test', 'Customer ' || g FROM generate_series(1, $1::int) g`,
      [CUSTOMERS],
    );
    await tx.query(
      `INSERT INTO orders (status, customer_id, total, currency, created_at, updated_at)
       SELECT CASE WHEN s < 0.20 THEN 'pending' WHEN s < 0.45 THEN 'paid' WHEN s < 0.65 THEN 'shipped'
                   WHEN s < 0.95 THEN 'delivered' ELSE 'cancelled' END,
              (SELECT min(id) FROM users) + floor(random() * $2::int)::bigint,
              round(200 * power(100, random()))::bigint * (1 + floor(random() * 5))::bigint, 'EUR', at, at
         FROM (SELECT random() AS s, now() - random() * interval '365 days' AS at FROM generate_series(1, $1::int)) draw`,
      [ORDERS, CUSTOMERS],
    );
  });
  // As autovacuum would have: statistics for the planner, and the visibility map for index-only scans.
  await db.exec('VACUUM (ANALYZE) orders, users, customer_order_counts, order_status_counts');
}

describe('GET /orders plans on PostgreSQL: every filter and sort served by an index, cursors as cheap as page 1', () => {
  let database: TestDatabase | undefined;
  const codec = createCursorCodec(randomBytes(32));

  before(async () => {
    if (!serverUrl) return;
    database = await createTestDatabase();
    await seedOrders(database.db);
  });
  after(() => database?.drop());

  /** Runs listOrders as GET /orders would: the page, and the one statement it sent. */
  async function pageStatement(
    command: ListOrdersCommand,
  ): Promise<{ page: Collection<ListedOrder>; sql: string; params: readonly unknown[] }> {
    const db = database!.db;
    const sent: { sql: string; params: readonly unknown[] }[] = [];
    const recording: Queryable = {
      query(sql, params) {
        sent.push({ sql, params: params ?? [] });
        return db.query(sql, params);
      },
      exec: (sql) => db.exec(sql),
    };
    const page = await listOrders(recording, staff, command);
    assert.equal(sent.length, 1, 'one statement per page');
    return { page, ...sent[0]! };
  }

  /** A page and the plans of its statement: as explained with its values, and generic. */
  async function explainPage(command: ListOrdersCommand): Promise<{ page: Collection<ListedOrder>; plan: PlanNode; generic: PlanNode }> {
    const { page, sql, params } = await pageStatement(command);
    const { rows } = await database!.db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
    return { page, plan: rows[0]!['QUERY PLAN'][0].Plan, generic: await explainGeneric(sql, params) };
  }

  /**
   * The plan PostgreSQL reuses for the statement once it is prepared (plan_cache_mode auto picks
   * it when it costs about what a custom plan does): planned without the parameters' values, run
   * with them.
   */
  async function explainGeneric(sql: string, params: readonly unknown[]): Promise<PlanNode> {
    return database!.db.transaction(async (tx) => {
      await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await tx.query(`PREPARE page_plan AS ${sql}`);
      // EXECUTE inside EXPLAIN takes no bound parameters: the values go in as literals of unknown
      // type, which take the types PREPARE inferred.
      const values = params.map((value) => (value === null ? 'NULL' : pg.escapeLiteral(String(value))));
      const { rows } = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE page_plan${values.length > 0 ? `(${values.join(', ')})` : ''}`,
      );
      await tx.query('DEALLOCATE page_plan');
      return rows[0]!['QUERY PLAN'][0].Plan;
    });
  }

  test('each filter combination × each sort: page 1, a deep page by number, and after and before a cursor taken there', async (context) => {
    if (!database) {
      context.diagnostic(
        "plans are PostgreSQL's: checked with TEST_DATABASE_URL (the embedded database plans for its own in-memory costs)",
      );
      return;
    }
    const { rows } = await database.db.query<{ id: number }>('SELECT min(id) AS id FROM users');
    const customerId = rows[0]!.id + 7;
    const status: OrderStatus = 'pending';
    const filterSets: Record<string, Pick<ListOrdersCommand, 'status' | 'customerId' | 'minTotal'>> = {
      none: {},
      status: { status },
      customerId: { customerId },
      minTotal: { minTotal: MIN_TOTAL },
      'status, customerId': { status, customerId },
      'status, minTotal': { status, minTotal: MIN_TOTAL },
      'customerId, minTotal': { customerId, minTotal: MIN_TOTAL },
      'status, customerId, minTotal': { status, customerId, minTotal: MIN_TOTAL },
    };
    const failures: string[] = [];
    for (const [name, filters] of Object.entries(filterSets)) {
      for (const sort of SORTS) {
        const at = (page: object) => ({ ...filters, sort, page: pageOf({ ...page, pageSize: PAGE_SIZE }, codec) });
        const first = await explainPage(at({}));
        const { total } = first.page.meta;
        // A quarter of the way in. Past about half of a broad filter's rows (minTotal), reading the
        // table once and sorting it costs the planner about what reading that half through an index
        // does, and it may choose either: offset paging's cost, which cursors avoid.
        const deep = await explainPage(at({ page: Math.max(2, Math.ceil(total / PAGE_SIZE / 4)) }));
        const { nextCursor, prevCursor } = deep.page.meta;
        assert.ok(
          nextCursor && prevCursor,
          `${name}, sort=${sort}: ${total} orders leave no page after and before page ${deep.page.meta.page}`,
        );
        const afterCursor = await explainPage(at({ after: nextCursor }));
        const beforeCursor = await explainPage(at({ before: prevCursor }));
        const pages: [string, PlanNode][] = [
          ['page 1', first.plan],
          ['a deep page', deep.plan],
          ['after a cursor', afterCursor.plan],
          ['before a cursor', beforeCursor.plan],
          ['page 1 (generic plan)', first.generic],
          ['a deep page (generic plan)', deep.generic],
          ['after a cursor (generic plan)', afterCursor.generic],
          ['before a cursor (generic plan)', beforeCursor.generic],
        ];
        const firstRead = pageRowsRead(first.plan);
        for (const [which, plan] of pages) {
          const scans = ordersScans(plan);
          if (scans.includes('Seq Scan')) failures.push(`${name}, sort=${sort}, ${which}: ${scans.join(' + ')}`);
          const read = pageRowsRead(plan);
          if (which.startsWith('a deep page') || filters.customerId !== undefined) continue;
          if (read > MAX_ROWS_READ) failures.push(`${name}, sort=${sort}, ${which}: read ${read} rows of orders (${scans.join(' + ')})`);
          if (which.includes('cursor') && read > 3 * firstRead + PAGE_SIZE) {
            failures.push(`${name}, sort=${sort}, ${which}: read ${read} rows of orders, page 1 read ${firstRead}`);
          }
        }
      }
    }
    assert.deepEqual(failures, []);
  });

  test("a page's statement is planned once per connection: PostgreSQL reuses its generic plan", async (context) => {
    if (!database) {
      context.diagnostic("plan reuse is PostgreSQL's plan cache: checked with TEST_DATABASE_URL (the embedded database prepares nothing)");
      return;
    }
    const broad = (page: object) => ({ status: 'pending' as const, page: pageOf({ ...page, pageSize: PAGE_SIZE }, codec) });
    const first = await pageStatement(broad({}));
    const afterCursor = await pageStatement(broad({ after: first.page.meta.nextCursor }));
    // Each runs ten times on one connection, as a busy pool does: five custom plans, then the cache's choice.
    const plans = await database.db.transaction(async (tx) => {
      for (const { sql, params } of [first, afterCursor]) for (let i = 0; i < 10; i++) await tx.query(sql, params);
      const { rows } = await tx.query<{ statement: string; generic: number }>(
        'SELECT statement, generic_plans::int AS generic FROM pg_prepared_statements WHERE statement = ANY($1::text[])',
        [[first.sql, afterCursor.sql]],
      );
      return new Map(rows.map((row) => [row.statement, row.generic]));
    });
    assert.ok((plans.get(first.sql) ?? 0) > 0, `page 1 was planned afresh on every call: ${first.sql}`);
    assert.ok((plans.get(afterCursor.sql) ?? 0) > 0, `the page after a cursor was planned afresh on every call: ${afterCursor.sql}`);
  });
});
