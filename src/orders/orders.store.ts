// Orders and order items in SQL. Every read takes the caller's scope: a customer's queries carry
// customer_id = $n, so another customer's order is indistinguishable from a missing one.
import type { SortKey } from '../http/collection.ts';
import type { Queryable } from '../db/db.ts';
import type { OwnerScope } from '../http/authenticate.ts';
import { pageClauses } from '../db/paging.ts';
import type { OrderFilters, OrderSortKey, OrderStatus } from './orders.rules.ts';
import type { Order, OrderItem } from './orders.schemas.ts';


export interface OrderRow extends Order {
  version: number;
  deleted: boolean;
}

const ORDER_COLUMNS = `id, status, customer_id AS "customerId", total, currency, created_at AS "createdAt",
  updated_at AS "updatedAt", version, deleted_at IS NOT NULL AS deleted`;

const SORT_COLUMNS: Record<OrderSortKey, string> = { createdAt: 'created_at', status: 'status', total: 'total', id: 'id' };

export function toOrder(row: OrderRow): Order {
  return {
    id: row.id,
    status: row.status,
    customerId: row.customerId,
    total: row.total,
    currency: row.currency,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export async function findOrder(db: Queryable, id: number, scope: OwnerScope): Promise<OrderRow | undefined> {
  const params: unknown[] = [id];
  const owner = scope ? ` AND customer_id = $${params.push(scope.customerId)}` : '';
  const { rows } = await db.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 AND deleted_at IS NULL${owner}`, params);
  return rows[0];
}

/** Locks the order row for a change, deleted or not, within the caller's scope. */
export async function lockOrder(tx: Queryable, id: number, scope: OwnerScope): Promise<OrderRow | undefined> {
  const params: unknown[] = [id];
  const owner = scope ? ` AND customer_id = $${params.push(scope.customerId)}` : '';
  const { rows } = await tx.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1${owner} FOR UPDATE`, params);
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
function countSql(filters: OrderFilters, params: unknown[]): string {
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

/**
 * One page of orders and the exact total, in one statement: one snapshot (the total always
 * matches the page), one round trip. The LEFT JOIN keeps the total when the page is empty.
 */
export async function selectOrderPage(
  db: Queryable,
  filters: OrderFilters,
  sort: SortKey<OrderSortKey>[],
  page: { page: number; pageSize: number },
): Promise<{ rows: OrderRow[]; total: number }> {
  const params: unknown[] = [];
  const total = countSql(filters, params);
  const where = whereClause(filters, params);
  const { innerOrder, outerOrder, limit, offset } = pageClauses(sort, SORT_COLUMNS, 'o', page, params);
  const { rows } = await db.query<OrderRow & { collection_total: number }>(
    `SELECT t.collection_total, o.* FROM (${total}) t LEFT JOIN LATERAL (
       SELECT ${ORDER_COLUMNS} FROM orders WHERE ${where} ORDER BY ${innerOrder} LIMIT ${limit} OFFSET ${offset}
     ) o ON true ORDER BY ${outerOrder}`,
    params,
  );
  return {
    rows: rows.filter((r) => r.id !== null).map(({ collection_total: _total, ...row }) => row),
    total: rows[0]?.collection_total ?? 0,
  };
}

export async function insertOrder(
  tx: Queryable,
  order: { customerId: number; total: number; currency: string },
): Promise<OrderRow> {
  const { rows } = await tx.query<OrderRow>(
    `INSERT INTO orders (customer_id, total, currency) VALUES ($1, $2, $3) RETURNING ${ORDER_COLUMNS}`,
    [order.customerId, order.total, order.currency],
  );
  return rows[0]!;
}

export async function insertOrderItem(
  tx: Queryable,
  item: { orderId: number; productId: number; qty: number; unitPrice: number; lineTotal: number },
): Promise<void> {
  await tx.query(
    'INSERT INTO order_items (order_id, product_id, qty, unit_price, line_total) VALUES ($1, $2, $3, $4, $5)',
    [item.orderId, item.productId, item.qty, item.unitPrice, item.lineTotal],
  );
}

export async function updateOrderStatus(tx: Queryable, id: number, status: OrderStatus): Promise<OrderRow> {
  const { rows } = await tx.query<OrderRow>(
    `UPDATE orders SET status = $2, version = version + 1, updated_at = now() WHERE id = $1 RETURNING ${ORDER_COLUMNS}`,
    [id, status],
  );
  return rows[0]!;
}

export async function softDeleteOrder(tx: Queryable, id: number): Promise<void> {
  await tx.query('UPDATE orders SET deleted_at = now(), version = version + 1, updated_at = now() WHERE id = $1', [id]);
}

export async function selectOrderItems(
  db: Queryable,
  orderId: number,
  page: { page: number; pageSize: number },
): Promise<{ items: OrderItem[]; total: number }> {
  const { rows } = await db.query<OrderItem & { total: number }>(
    `SELECT i.id, i.order_id AS "orderId", i.product_id AS "productId", i.qty, i.unit_price AS "unitPrice",
            i.line_total AS "lineTotal", o.currency, count(*) OVER () AS total
       FROM order_items i JOIN orders o ON o.id = i.order_id
      WHERE i.order_id = $1 ORDER BY i.id LIMIT $2 OFFSET $3`,
    [orderId, page.pageSize, (page.page - 1) * page.pageSize],
  );
  let total = rows[0]?.total;
  if (total === undefined) {
    total = page.page > 1 ? Number((await db.query<{ n: number }>('SELECT count(*) AS n FROM order_items WHERE order_id = $1', [orderId])).rows[0]?.n ?? 0) : 0;
  }
  return { items: rows.map(({ total: _t, ...item }) => item), total };
}
