// Order rules, pure: the state machine, money arithmetic, the collection's filters and sort keys.
import { DomainError } from '../core/errors.ts';

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

/** An order line names a product that exists and is for sale. */
export function assertOrderable<P extends { active: boolean }>(productId: number, product: P | undefined): asserts product is P {
  if (!product)
    throw new DomainError('ORDER_PRODUCT_NOT_FOUND', `Product ${productId} does not exist.`, {
      errors: [{ pointer: '/productId', detail: 'no such product' }],
    });
  if (!product.active)
    throw new DomainError('ORDER_PRODUCT_INACTIVE', `Product ${productId} is not for sale.`, {
      errors: [{ pointer: '/productId', detail: 'product is not active' }],
    });
}
