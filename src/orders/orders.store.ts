// Orders and order items in SQL. Every read takes the caller's scope: a customer's queries carry
// customer_id = $n, so another customer's order is indistinguishable from a missing one.
import type { PagePlan, PageRows } from '../core/paging.ts';
import type { OwnerScope } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { selectPage, type SortColumn } from '../db/paging.ts';
import type { OrderFilters, OrderSortKey, OrderStatus } from './orders.rules.ts';

/** An order as stored: money in minor units of currency; version counts its changes. */
export interface OrderRecord {
  id: number;
  status: OrderStatus;
  customerId: number;
  total: number;
  currency: string;
  createdAt: string;
  updatedAt: string;
  version: number;
  deleted: boolean;
}

/**
 * An order as a page lists it: what its representation shows. A page reads neither the row
 * version (no entity tag per listed order) nor the deleted flag (it lists none): each field read
 * is parsed on every row of every page (issue 28).
 */
export type ListedOrder = Omit<OrderRecord, 'version' | 'deleted'>;

/** An order with its lines, as representations that embed them need it. */
export interface OrderWithItems extends OrderRecord {
  items: OrderItemRecord[];
}

export interface OrderItemRecord {
  id: number;
  orderId: number;
  productId: number;
  qty: number;
  unitPrice: number;
  lineTotal: number;
  currency: string;
}

const LISTED_COLUMNS = `id, status, customer_id AS "customerId", total, currency, created_at AS "createdAt", updated_at AS "updatedAt"`;
const ORDER_COLUMNS = `${LISTED_COLUMNS}, version, deleted_at IS NOT NULL AS deleted`;

const SORT_COLUMNS: Record<OrderSortKey, SortColumn> = {
  createdAt: { sql: 'created_at', type: 'timestamp' },
  status: { sql: 'status', type: 'text' },
  total: { sql: 'total', type: 'integer' },
  id: { sql: 'id', type: 'integer' },
};

/** The caller's scope as a condition: a customer's reads carry customer_id = $n. */
function ownerCondition(scope: OwnerScope, params: unknown[]): string {
  return scope ? ` AND customer_id = $${params.push(scope.customerId)}` : '';
}

/** The orders among ids that the scope sees (deleted ones are missing). */
export async function findOrders(db: Queryable, ids: readonly number[], scope: OwnerScope): Promise<Map<number, OrderRecord>> {
  const params: unknown[] = [ids];
  const owner = ownerCondition(scope, params);
  const { rows } = await db.query<OrderRecord>(
    `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ANY($1::bigint[]) AND deleted_at IS NULL${owner}`,
    params,
  );
  return new Map(rows.map((row) => [row.id, row]));
}

/** The versions of the orders among ids that the scope sees (deleted ones are missing). */
export async function findOrderVersions(db: Queryable, ids: readonly number[], scope: OwnerScope): Promise<Map<number, number>> {
  const params: unknown[] = [ids];
  const owner = ownerCondition(scope, params);
  const { rows } = await db.query<{ id: number; version: number }>(
    `SELECT id, version FROM orders WHERE id = ANY($1::bigint[]) AND deleted_at IS NULL${owner}`,
    params,
  );
  return new Map(rows.map((row) => [row.id, row.version]));
}

/** Locks the order row for a change, deleted or not, within the caller's scope. */
export async function lockOrder(tx: Queryable, id: number, scope: OwnerScope): Promise<OrderRecord | undefined> {
  const params: unknown[] = [id];
  const owner = ownerCondition(scope, params);
  const { rows } = await tx.query<OrderRecord>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1${owner} FOR UPDATE`, params);
  return rows[0];
}

function whereClause(filters: OrderFilters, params: unknown[]): string {
  const conditions = ['deleted_at IS NULL'];
  if (filters.customerId !== undefined) conditions.push(`customer_id = $${params.push(filters.customerId)}`);
  if (filters.status !== undefined) conditions.push(`status = $${params.push(filters.status)}`);
  if (filters.minTotal !== undefined) conditions.push(`total >= $${params.push(filters.minTotal)}`);
  return conditions.join(' AND ');
}

/** SQL of the exact number of visible orders matching the filters, as a subquery. */
function countQuery(filters: OrderFilters, params: unknown[]): string {
  // Without minTotal the total comes from the counters the triggers keep (migration 0001),
  // however broad the filter; with minTotal it is counted from the index.
  if (filters.minTotal !== undefined) return `SELECT count(*) AS collection_total FROM orders WHERE ${whereClause(filters, params)}`;
  if (filters.customerId !== undefined) {
    const status = filters.status !== undefined ? ` AND status = $${params.push(filters.status)}` : '';
    return `SELECT coalesce(sum(n), 0)::bigint AS collection_total FROM customer_order_counts WHERE customer_id = $${params.push(filters.customerId)}${status}`;
  }
  const status = filters.status !== undefined ? ` WHERE status = $${params.push(filters.status)}` : '';
  return `SELECT coalesce(sum(n), 0)::bigint AS collection_total FROM order_status_counts${status}`;
}

/** One page of orders and the exact total, in one statement (db/paging.ts). */
export function selectOrderPage(db: Queryable, filters: OrderFilters, plan: PagePlan<OrderSortKey>): Promise<PageRows<ListedOrder>> {
  const params: unknown[] = [];
  const countSql = countQuery(filters, params);
  const rowsSql = `SELECT ${LISTED_COLUMNS} FROM orders WHERE ${whereClause(filters, params)}`;
  return selectPage<ListedOrder, OrderSortKey>(db, { countSql, rowsSql, columns: SORT_COLUMNS, params }, plan);
}

export async function insertOrder(tx: Queryable, order: { customerId: number; total: number; currency: string }): Promise<OrderRecord> {
  const { rows } = await tx.query<OrderRecord>(
    `INSERT INTO orders (customer_id, total, currency) VALUES ($1, $2, $3) RETURNING ${ORDER_COLUMNS}`,
    [order.customerId, order.total, order.currency],
  );
  return rows[0]!;
}

/** The order's lines in one statement, in the order given; they take the order's currency. */
export async function insertOrderItems(
  tx: Queryable,
  order: Pick<OrderRecord, 'id' | 'currency'>,
  items: readonly { productId: number; qty: number; unitPrice: number; lineTotal: number }[],
): Promise<OrderItemRecord[]> {
  const params: unknown[] = [order.id];
  const values = items.map(
    (item) =>
      `($1, $${params.push(item.productId)}, $${params.push(item.qty)}, $${params.push(item.unitPrice)}, $${params.push(item.lineTotal)})`,
  );
  const { rows } = await tx.query<Omit<OrderItemRecord, 'currency'>>(
    `INSERT INTO order_items (order_id, product_id, qty, unit_price, line_total) VALUES ${values.join(', ')}
     RETURNING id, order_id AS "orderId", product_id AS "productId", qty, unit_price AS "unitPrice", line_total AS "lineTotal"`,
    params,
  );
  // RETURNING keeps the VALUES order for a plain INSERT; sorted by id to not depend on it.
  return rows.sort((a, b) => a.id - b.id).map((row) => ({ ...row, currency: order.currency }));
}

/** Every item of these orders, by order and then in the order added; the caller knows each order's currency. */
export async function selectItemsOfOrders(db: Queryable, orderIds: readonly number[]): Promise<Omit<OrderItemRecord, 'currency'>[]> {
  const { rows } = await db.query<Omit<OrderItemRecord, 'currency'>>(
    `SELECT id, order_id AS "orderId", product_id AS "productId", qty, unit_price AS "unitPrice", line_total AS "lineTotal"
     FROM order_items WHERE order_id = ANY($1::bigint[]) ORDER BY order_id, id`,
    [orderIds],
  );
  return rows;
}

export async function updateOrderStatus(tx: Queryable, id: number, status: OrderStatus): Promise<OrderRecord> {
  const { rows } = await tx.query<OrderRecord>(
    `UPDATE orders SET status = $2, version = version + 1, updated_at = now() WHERE id = $1 RETURNING ${ORDER_COLUMNS}`,
    [id, status],
  );
  return rows[0]!;
}

export async function softDeleteOrder(tx: Queryable, id: number): Promise<OrderRecord> {
  const { rows } = await tx.query<OrderRecord>(
    `UPDATE orders SET deleted_at = now(), version = version + 1, updated_at = now() WHERE id = $1 RETURNING ${ORDER_COLUMNS}`,
    [id],
  );
  return rows[0]!;
}

const ITEM_COLUMNS = `i.id, i.order_id AS "orderId", i.product_id AS "productId", i.qty, i.unit_price AS "unitPrice",
  i.line_total AS "lineTotal", o.currency`;

/** One page of an order's items, in the order they were added, and their exact total. */
export function selectOrderItems(db: Queryable, orderId: number, plan: PagePlan<'id'>): Promise<PageRows<OrderItemRecord>> {
  return selectPage<OrderItemRecord, 'id'>(
    db,
    {
      countSql: 'SELECT count(*) AS collection_total FROM order_items WHERE order_id = $1',
      rowsSql: `SELECT ${ITEM_COLUMNS} FROM order_items i JOIN orders o ON o.id = i.order_id WHERE i.order_id = $1`,
      columns: { id: { sql: 'i.id', type: 'integer' } },
      params: [orderId],
    },
    plan,
  );
}
