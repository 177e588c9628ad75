// Order use cases and the order steps of flows (src/flows/): each loads through the store, asks
// the rules, writes. Nothing here knows HTTP or API versions: callers get records.
import type { Actor as ChangeActor } from '../core/actor.ts';
import { readReport, type Report, type ReportQuery } from '../core/day-range.ts';
import { DomainError } from '../core/errors.ts';
import { parseSortParam, planPage, toCollection, type Collection, type PageRequest } from '../core/paging.ts';
import type { Precondition } from '../core/precondition.ts';
import { ownerScope, type OwnerScope, type Principal } from '../core/principal.ts';
import { coalesceReads, perDatabase } from '../db/coalesce.ts';
import type { Queryable } from '../db/db.ts';
import type { EventType } from '../events/events.rules.ts';
import { recordEvent } from '../events/events.store.ts';
import { type DailyOrderTotalRecord, selectDailyOrderTotals } from './daily-order-totals.store.ts';
import {
  decideTransition,
  effectiveOrderSort,
  isDeletable,
  priceOrder,
  ORDER_SORT_KEYS,
  refuseTransition,
  type Actor,
  type OrderFilters,
  type OrderStatus,
  type PricedLine,
} from './orders.rules.ts';
import {
  findOrders,
  findOrderVersions,
  insertOrder,
  insertOrderItems,
  selectItemsOfOrders,
  lockOrder,
  selectOrderItems,
  selectOrderPage,
  softDeleteOrder,
  updateOrderStatus,
  type OrderItemRecord,
  type ListedOrder,
  type OrderRecord,
  type OrderWithItems,
} from './orders.store.ts';

function actorsFor(principal: Principal, order: OrderRecord): Actor[] {
  if (principal.kind === 'service') return ['service'];
  const actors: Actor[] = principal.role === 'staff' ? ['staff'] : [];
  if (principal.userId === order.customerId) actors.push('owner');
  return actors;
}

const notFound = (id: number) => new DomainError('ORDER_NOT_FOUND', `Order ${id} does not exist.`);

/**
 * Reads of one order by id, for one turn of the event loop at a time: concurrent lookups share one
 * statement per owner scope (src/db/coalesce.ts). Full rows for the 200, the version alone for a
 * revalidation (If-None-Match), whose 304 renders nothing from the row.
 */
const scopeKey = (scope: OwnerScope) => (scope ? String(scope.customerId) : '*');
const orderReads = perDatabase((db: Queryable) =>
  coalesceReads({ groupKey: scopeKey, readMany: (scope: OwnerScope, ids: number[]) => findOrders(db, ids, scope) }),
);
const versionReads = perDatabase((db: Queryable) =>
  coalesceReads({ groupKey: scopeKey, readMany: (scope: OwnerScope, ids: number[]) => findOrderVersions(db, ids, scope) }),
);

export async function getOrder(db: Queryable, principal: Principal, orderId: number): Promise<OrderRecord> {
  const order = await orderReads(db)(ownerScope(principal), orderId);
  if (!order) throw notFound(orderId);
  return order;
}

/** What an order's entity tag is made of, read alone: a missing or hidden order is 404 as for getOrder. */
export async function getOrderVersion(db: Queryable, principal: Principal, orderId: number): Promise<Pick<OrderRecord, 'id' | 'version'>> {
  const version = await versionReads(db)(ownerScope(principal), orderId);
  if (version === undefined) throw notFound(orderId);
  return { id: orderId, version };
}

/** Items by order, read for the orders of one turn together (a page's, and concurrent requests'). */
const itemReads = perDatabase((db: Queryable) =>
  coalesceReads({
    groupKey: () => 'all',
    readMany: async (_all: null, orderIds: number[]) => {
      const byOrder = new Map<number, Omit<OrderItemRecord, 'currency'>[]>();
      for (const item of await selectItemsOfOrders(db, orderIds)) {
        const items = byOrder.get(item.orderId) ?? [];
        items.push(item);
        byOrder.set(item.orderId, items);
      }
      return byOrder;
    },
  }),
);

/** Orders with their items (what a representation embeds), in the order's currency. */
export async function withItems<O extends ListedOrder>(
  db: Queryable,
  orders: readonly O[],
): Promise<(O & Pick<OrderWithItems, 'items'>)[]> {
  const readItems = itemReads(db);
  const items = await Promise.all(orders.map((order) => readItems(null, order.id)));
  return orders.map((order, i) => ({ ...order, items: (items[i] ?? []).map((item) => ({ ...item, currency: order.currency })) }));
}

export interface ListOrdersCommand {
  page: PageRequest;
  status?: OrderStatus;
  customerId?: number;
  minTotal?: number;
  /** The sort parameter as sent (orders.rules: ORDER_SORT_KEYS). */
  sort?: string;
}

/** GET /orders and the orders of one user: customers may list only their own. */
export async function listOrders(db: Queryable, principal: Principal, command: ListOrdersCommand): Promise<Collection<ListedOrder>> {
  const sort = parseSortParam(command.sort, ORDER_SORT_KEYS, [{ field: 'createdAt', descending: false }]);
  const scope = ownerScope(principal);
  if (scope && command.customerId !== undefined && command.customerId !== scope.customerId) {
    throw new DomainError('AUTH_FORBIDDEN', 'Customers can list only their own orders.');
  }
  const filters: OrderFilters = { status: command.status, minTotal: command.minTotal, customerId: scope?.customerId ?? command.customerId };
  const plan = planPage(command.page, 'orders', filters, effectiveOrderSort(sort, filters));
  return toCollection(await selectOrderPage(db, filters, plan), plan);
}

export async function listOrderItems(
  db: Queryable,
  principal: Principal,
  command: { orderId: number; page: PageRequest },
): Promise<Collection<OrderItemRecord>> {
  const plan = planPage(command.page, 'order-items', { orderId: command.orderId }, [{ field: 'id', descending: false }]);
  await getOrder(db, principal, command.orderId);
  return toCollection(await selectOrderItems(db, command.orderId, plan), plan);
}

/** Step: who an order is placed for; a service client has no customer to place it for. */
export function orderingCustomer(principal: Principal): number {
  if (principal.kind !== 'user') {
    throw new DomainError('ORDER_CUSTOMER_REQUIRED', 'Orders are placed by a signed-in user; this token belongs to a service client.');
  }
  return principal.userId;
}

/** Step: records the order and its lines (priced by the caller), its total their sum, in one currency. */
export async function createOrder(
  tx: Queryable,
  customerId: number,
  lines: readonly PricedLine[],
  actor: ChangeActor,
): Promise<OrderWithItems> {
  const { currency, total, lineTotals } = priceOrder(lines);
  const order = await insertOrder(tx, { customerId, total, currency });
  const items = await insertOrderItems(
    tx,
    order,
    lines.map((line, i) => ({ productId: line.productId, qty: line.qty, unitPrice: line.unitPrice, lineTotal: lineTotals[i]! })),
  );
  const created = { ...order, items };
  await recordEvent(tx, 'order.created', created, actor);
  return created;
}

/** Step: the event of an order's new status (order.paid, order.shipped, …), with its items. */
async function recordStatusEvent(tx: Queryable, order: OrderRecord, actor: ChangeActor): Promise<void> {
  if (order.status === 'pending') return;
  const [withTheirItems] = await withItems(tx, [order]);
  await recordEvent(tx, `order.${order.status}` satisfies EventType, withTheirItems!, actor);
}

/** Step: the order to change, locked, within the caller's scope, meeting the request's precondition. */
export async function lockOrderForChange(
  tx: Queryable,
  principal: Principal,
  orderId: number,
  precondition?: Precondition<OrderRecord>,
): Promise<OrderRecord> {
  const order = await lockOrder(tx, orderId, ownerScope(principal));
  if (!order || order.deleted) throw notFound(orderId);
  precondition?.(order);
  return order;
}

/** Step: the status this caller moves the order to; undefined when it already has it. */
export function decideStatusChange(principal: Principal, order: OrderRecord, to: OrderStatus): OrderStatus | undefined {
  const decision = decideTransition(order.status, to, actorsFor(principal, order));
  if (decision.kind === 'refused') throw refuseTransition(order.status, to, decision.allowed);
  return decision.kind === 'change' ? decision.to : undefined;
}

/** Step: records the order's new status, made by actor. */
export async function changeStatus(tx: Queryable, order: OrderRecord, to: OrderStatus, actor: ChangeActor): Promise<OrderRecord> {
  const changed = await updateOrderStatus(tx, order.id, to);
  await recordStatusEvent(tx, changed, actor);
  return changed;
}

/**
 * Step: a successful payment of an order moves it to paid (the state machine's 'payment' actor);
 * its event names who paid (actor).
 */
export async function markOrderPaid(tx: Queryable, order: OrderRecord, actor: ChangeActor): Promise<void> {
  const decision = decideTransition(order.status, 'paid', ['payment']);
  if (decision.kind !== 'change') throw refuseTransition(order.status, 'paid', decision.kind === 'refused' ? decision.allowed : []);
  await recordStatusEvent(tx, await updateOrderStatus(tx, order.id, 'paid'), actor);
}

/**
 * Step of a delete: the order locked, within the caller's scope, meeting the precondition, and
 * deletable; undefined when it is deleted already (repeating a delete answers the same and changes nothing).
 */
export async function lockOrderForDelete(
  tx: Queryable,
  principal: Principal,
  command: { orderId: number; precondition?: Precondition<OrderRecord> },
): Promise<OrderRecord | undefined> {
  const order = await lockOrder(tx, command.orderId, ownerScope(principal));
  if (!order) throw notFound(command.orderId);
  // A deleted order has no current representation: any If-Match fails (RFC 9110 §13.1.1).
  command.precondition?.(order.deleted ? undefined : order);
  if (order.deleted) return undefined;
  if (!isDeletable(order.status)) {
    throw new DomainError('ORDER_NOT_DELETABLE', `The order is ${order.status}; only pending or cancelled orders can be deleted.`, {
      extensions: { currentStatus: order.status },
    });
  }
  return order;
}

/** Step: the soft delete (reads skip the row from now on), with its event. */
export async function removeOrder(tx: Queryable, order: OrderRecord, actor: ChangeActor): Promise<void> {
  const [deleted] = await withItems(tx, [await softDeleteOrder(tx, order.id)]);
  await recordEvent(tx, 'order.deleted', deleted!, actor);
}

/** Orders placed per UTC day and currency: a customer's own, every one for staff and service clients. */
export function dailyOrderTotals(
  db: Queryable,
  principal: Principal,
  query: ReportQuery,
  now: Date,
): Promise<Report<DailyOrderTotalRecord>> {
  return readReport(query, now, (filter) => selectDailyOrderTotals(db, ownerScope(principal), filter));
}
