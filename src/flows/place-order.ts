// Placing an order: the product (catalogue) priced into an order line (orders), in the
// transaction the idempotency layer opens for POST /orders.
import type { Principal } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { assertOrderable } from '../orders/orders.rules.ts';
import { createOrder, orderingCustomer } from '../orders/orders.service.ts';
import type { OrderRecord } from '../orders/orders.store.ts';
import { findProduct } from '../products/products.store.ts';
import { assertSubjectExists } from '../users/users.service.ts';

export interface PlaceOrderCommand {
  productId: number;
  qty: number;
}

export async function placeOrder(tx: Queryable, principal: Principal, command: PlaceOrderCommand): Promise<OrderRecord> {
  const customerId = orderingCustomer(principal);
  const product = await findProduct(tx, command.productId);
  assertOrderable(command.productId, product);
  // Checked before the insert for a clear answer; orders.customer_id refuses one deleted meanwhile.
  await assertSubjectExists(tx, principal);
  return createOrder(tx, customerId, {
    productId: command.productId,
    qty: command.qty,
    unitPrice: product.price,
    currency: product.currency,
  });
}
