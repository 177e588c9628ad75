// Order rules, pure: the state machine, money arithmetic, the collection's filters and sort keys.
import { DomainError } from '../core/errors.ts';
import type { SortKey } from '../core/paging.ts';

export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Who asks for a change: the order's customer, staff, a service client, or a settled payment. */
export type Actor = 'owner' | 'staff' | 'service' | 'payment';

// from → to → who may make that move. Everything absent is refused.
const TRANSITIONS: Record<OrderStatus, Partial<Record<OrderStatus, readonly Actor[]>>> = {
  pending: { paid: ['payment'], cancelled: ['owner', 'staff'] },
  paid: { shipped: ['staff', 'service'], cancelled: ['staff'] },
  shipped: { delivered: ['staff', 'service'] },
  delivered: {},
  cancelled: {},
};

export type TransitionDecision = { kind: 'unchanged' } | { kind: 'change'; to: OrderStatus } | { kind: 'refused'; allowed: OrderStatus[] };

/** The statuses these actors may move an order to from its current status. */
export function allowedTransitions(from: OrderStatus, actors: readonly Actor[]): OrderStatus[] {
  return ORDER_STATUSES.filter((to) => TRANSITIONS[from][to]?.some((a) => actors.includes(a)));
}

export function decideTransition(from: OrderStatus, to: OrderStatus, actors: readonly Actor[]): TransitionDecision {
  if (from === to) return { kind: 'unchanged' };
  const allowed = allowedTransitions(from, actors);
  return allowed.includes(to) ? { kind: 'change', to } : { kind: 'refused', allowed };
}

export function refuseTransition(from: OrderStatus, to: OrderStatus, allowed: OrderStatus[]): DomainError {
  const options = allowed.length ? `allowed: ${allowed.join(', ')}` : 'no change of status is allowed to you from here';
  return new DomainError('ORDER_TRANSITION_NOT_ALLOWED', `The order is ${from}; it cannot become ${to} (${options}).`, {
    extensions: { currentStatus: from, allowedStatuses: allowed },
  });
}

/** Soft delete is for orders that never took money (or gave it back). */
export function isDeletable(status: OrderStatus): boolean {
  return status === 'pending' || status === 'cancelled';
}

/** Line total in minor units; integer arithmetic, guarded against leaving the exact range. */
export function lineTotal(unitPrice: number, qty: number): number {
  const total = unitPrice * qty;
  if (!Number.isSafeInteger(total)) throw new RangeError('line total exceeds the exact integer range');
  return total;
}

export const ORDER_SORT_KEYS = ['createdAt', 'status', 'total', 'id'] as const;
export type OrderSortKey = (typeof ORDER_SORT_KEYS)[number];

export interface OrderFilters {
  status?: OrderStatus;
  customerId?: number;
  minTotal?: number;
}

/**
 * The sort as the query runs it: under status=…, sorting by status orders nothing (every row has
 * it), so the key is dropped and the rows keep the order of the keys after it. The index that serves
 * the filter then serves the rest of the sort; kept, it would make a cursor page read the filter's
 * rows from the start.
 */
export function effectiveOrderSort(sort: SortKey<OrderSortKey>[], filters: OrderFilters): SortKey<OrderSortKey>[] {
  return filters.status === undefined ? sort : sort.filter((k) => k.field !== 'status');
}

/** How many lines one order may hold. */
export const MAX_ORDER_LINES = 100;
/** The largest order total, in minor units (the API's money bound; exact in a double). */
export const MAX_ORDER_TOTAL = 1_000_000_000_000_000;

/** An order line names a product that exists and is for sale; line is its index in the request. */
export function assertOrderable<P extends { active: boolean }>(
  productId: number,
  product: P | undefined,
  line: number,
): asserts product is P {
  const pointer = `/items/${line}/productId`;
  if (!product)
    throw new DomainError('ORDER_PRODUCT_NOT_FOUND', `Product ${productId} does not exist.`, {
      errors: [{ pointer, detail: 'no such product' }],
    });
  if (!product.active)
    throw new DomainError('ORDER_PRODUCT_INACTIVE', `Product ${productId} is not for sale.`, {
      errors: [{ pointer, detail: 'product is not active' }],
    });
}

export interface PricedLine {
  productId: number;
  qty: number;
  unitPrice: number;
  currency: string;
}

/**
 * The order's currency and total from its priced lines: one currency per order (a line in
 * another is named), and a total within MAX_ORDER_TOTAL.
 */
export function priceOrder(lines: readonly PricedLine[]): { currency: string; total: number; lineTotals: number[] } {
  const currency = lines[0]!.currency;
  const lineTotals: number[] = [];
  let total = 0;
  lines.forEach((line, i) => {
    if (line.currency !== currency) {
      throw new DomainError('ORDER_CURRENCY_MIXED', `Line ${i} is priced in ${line.currency}, the order's first line in ${currency}.`, {
        errors: [{ pointer: `/items/${i}/productId`, detail: `product ${line.productId} is priced in ${line.currency}, not ${currency}` }],
      });
    }
    lineTotals.push(lineTotal(line.unitPrice, line.qty));
    total += lineTotals[i]!;
  });
  if (total > MAX_ORDER_TOTAL) {
    throw new DomainError('ORDER_TOTAL_TOO_LARGE', `The order total ${total} exceeds ${MAX_ORDER_TOTAL} minor units.`, {
      errors: [{ pointer: '/items', detail: `the lines add up to more than ${MAX_ORDER_TOTAL}` }],
    });
  }
  return { currency, total, lineTotals };
}
