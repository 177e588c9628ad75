// Placing an order: each line's product (catalogue) priced into an order line (orders), in the
// transaction the idempotency layer opens for POST /orders.
import { actorOf } from '../core/actor.ts';
import type { Principal } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { assertOrderable, type PricedLine } from '../orders/orders.rules.ts';
import { createOrder, orderingCustomer } from '../orders/orders.service.ts';
import type { OrderWithItems } from '../orders/orders.store.ts';
import { findProducts } from '../products/products.store.ts';
import { forExistingSubject } from '../users/users.service.ts';

export interface PlaceOrderCommand {
  /** The lines as requested, in order: 1–MAX_ORDER_LINES, each a product and a quantity. */
  items: readonly { productId: number; qty: number }[];
}

export async function placeOrder(tx: Queryable, principal: Principal, command: PlaceOrderCommand): Promise<OrderWithItems> {
  const customerId = orderingCustomer(principal);
  const lines = await priceLines(tx, command.items);
  return forExistingSubject(principal, () => createOrder(tx, customerId, lines, actorOf(principal)));
}

/** Step: every line's product, for sale, at its current price (one query for all lines). */
async function priceLines(tx: Queryable, items: PlaceOrderCommand['items']): Promise<PricedLine[]> {
  const products = new Map((await findProducts(tx, [...new Set(items.map((i) => i.productId))])).map((p) => [p.id, p]));
  return items.map(({ productId, qty }, line) => {
    const product = products.get(productId);
    assertOrderable(productId, product, line);
    return { productId, qty, unitPrice: product.price, currency: product.currency };
  });
}
