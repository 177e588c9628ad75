// Order use cases: each loads through the store, asks the rules, writes; createOrder runs in the
// transaction the idempotency layer opens, the others open their own.
import { isDatabaseError, type Db, type Queryable } from '../db/db.ts';
import { parseSortParam, toCollection, type Collection } from '../http/collection.ts';
import { checkIfMatch, entityTag } from '../http/etag.ts';
import { ProblemError } from '../http/problem.ts';
import { ownerScope, type Principal } from '../http/authenticate.ts';
import { refundOrderPayment } from '../payments/payments.service.ts';
import type { PaymentProcessor } from '../payments/processor.ts';
import { findProduct } from '../products/products.store.ts';
import { userExists } from '../users/users.store.ts';
import {
  changedReadOnlyFields, decideTransition, isDeletable, lineTotal, ORDER_SORT_KEYS, refuseTransition,
  type Actor, type OrderFilters,
} from './orders.rules.ts';
import type { CreateOrderBody, ListOrderItemsQuery, ListOrdersQuery, Order, OrderItem, ReplaceOrderBody } from './orders.schemas.ts';
import {
  findOrder, insertOrder, insertOrderItem, lockOrder, selectOrderItems, selectOrderPage, softDeleteOrder,
  toOrder, updateOrderStatus, type OrderRow,
} from './orders.store.ts';

export interface TaggedOrder {
  order: Order;
  etag: string;
}

const tagged = (row: OrderRow, apiVersion: number): TaggedOrder => ({ order: toOrder(row), etag: entityTag('o', row.id, row.version, apiVersion) });

function actorsFor(principal: Principal, order: OrderRow): Actor[] {
  if (principal.kind === 'service') return ['service'];
  const actors: Actor[] = principal.role === 'staff' ? ['staff'] : [];
  if (principal.userId === order.customerId) actors.push('owner');
  return actors;
}

const notFound = (id: number) => new ProblemError('ORDER_NOT_FOUND', `Order ${id} does not exist.`);

export async function getOrder(db: Db, principal: Principal, id: number, apiVersion: number): Promise<TaggedOrder> {
  const row = await findOrder(db, id, ownerScope(principal));
  if (!row) throw notFound(id);
  return tagged(row, apiVersion);
}

/** GET /orders and GET /users/{userId}/orders (userId given). */
export async function listOrders(
  db: Db,
  principal: Principal,
  query: ListOrdersQuery,
  userId?: number,
): Promise<Collection<Order>> {
  const sort = parseSortParam(query.sort, ORDER_SORT_KEYS, [{ field: 'createdAt', descending: false }]);
  const customerId = userId ?? query.customerId;
  const scope = ownerScope(principal);
  if (scope && customerId !== undefined && customerId !== scope.customerId) {
    throw new ProblemError('AUTH_FORBIDDEN', "Customers can list only their own orders.");
  }
  if (userId !== undefined && !scope && !(await userExists(db, userId))) {
    throw new ProblemError('USER_NOT_FOUND', `User ${userId} does not exist.`);
  }
  const filters: OrderFilters = { status: query.status, minTotal: query.minTotal, customerId: scope?.customerId ?? customerId };
  const page = { page: query.page ?? 1, pageSize: query.pageSize ?? 20 };
  const { rows, total } = await selectOrderPage(db, filters, sort, page);
  return toCollection(rows.map(toOrder), total, page);
}

/** Places an order, in the transaction the idempotency layer opens (POST /orders may carry a key). */
export async function createOrder(tx: Queryable, principal: Principal, body: CreateOrderBody, apiVersion: number): Promise<TaggedOrder> {
  if (principal.kind !== 'user') {
    throw new ProblemError('ORDER_CUSTOMER_REQUIRED', 'Orders are placed by a signed-in user; this token belongs to a service client.');
  }
  try {
    const product = await findProduct(tx, body.productId);
    if (!product) throw new ProblemError('ORDER_PRODUCT_NOT_FOUND', `Product ${body.productId} does not exist.`, { errors: [{ pointer: '/productId', detail: 'no such product' }] });
    if (!product.active) throw new ProblemError('ORDER_PRODUCT_INACTIVE', `Product ${body.productId} is not for sale.`, { errors: [{ pointer: '/productId', detail: 'product is not active' }] });
    const total = lineTotal(product.price, body.qty);
    const row = await insertOrder(tx, { customerId: principal.userId, total, currency: product.currency });
    await insertOrderItem(tx, { orderId: row.id, productId: product.id, qty: body.qty, unitPrice: product.price, lineTotal: total });
    return tagged(row, apiVersion);
  } catch (error) {
    // orders.customer_id → users.id: the token's subject is not (any more) a user.
    if (isDatabaseError(error) && error.code === '23503') {
      throw new ProblemError('AUTH_SUBJECT_UNKNOWN', `User ${principal.userId} named by the access token does not exist.`);
    }
    throw error;
  }
}

export async function replaceOrder(
  db: Db,
  processor: PaymentProcessor,
  principal: Principal,
  id: number,
  body: ReplaceOrderBody,
  ifMatch: string | undefined,
  apiVersion: number,
): Promise<TaggedOrder> {
  return db.transaction(async (tx) => {
    const row = await lockOrder(tx, id, ownerScope(principal));
    if (!row || row.deleted) throw notFound(id);
    checkIfMatch(ifMatch, tagged(row, apiVersion).etag);
    const current = toOrder(row);
    const changed = changedReadOnlyFields(body, current);
    if (changed.length > 0) {
      throw new ProblemError('ORDER_READ_ONLY_FIELD', `Read-only fields differ from the order: ${changed.join(', ')}.`, {
        errors: changed.map((f) => ({ pointer: `/${f}`, detail: `${f} is read-only; send ${JSON.stringify(current[f as keyof Order])} or omit it` })),
      });
    }
    const decision = decideTransition(row.status, body.status, actorsFor(principal, row));
    if (decision.kind === 'refused') throw refuseTransition(row.status, body.status, decision.allowed);
    if (decision.kind === 'unchanged') return tagged(row, apiVersion);
    // A paid order that is cancelled gives its money back, in the same transaction.
    if (row.status === 'paid' && decision.to === 'cancelled') await refundOrderPayment(tx, processor, id);
    return tagged(await updateOrderStatus(tx, id, decision.to), apiVersion);
  });
}

/** Soft delete; repeating it on a deleted order answers the same (204) and changes nothing. */
export async function deleteOrder(db: Db, principal: Principal, id: number, ifMatch: string | undefined, apiVersion: number): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await lockOrder(tx, id, ownerScope(principal));
    if (!row) throw notFound(id);
    // A deleted order has no current representation: any If-Match fails (RFC 9110 §13.1.1).
    checkIfMatch(ifMatch, row.deleted ? undefined : tagged(row, apiVersion).etag);
    if (row.deleted) return;
    if (!isDeletable(row.status)) {
      throw new ProblemError('ORDER_NOT_DELETABLE', `The order is ${row.status}; only pending or cancelled orders can be deleted.`, {
        extensions: { currentStatus: row.status },
      });
    }
    await softDeleteOrder(tx, id);
  });
}

export async function listOrderItems(db: Db, principal: Principal, query: ListOrderItemsQuery): Promise<Collection<OrderItem>> {
  const page = { page: query.page ?? 1, pageSize: query.pageSize ?? 20 };
  const order = await findOrder(db, query.orderId, ownerScope(principal));
  if (!order) throw notFound(query.orderId);
  const { items, total } = await selectOrderItems(db, query.orderId, page);
  return toCollection(items, total, page);
}

