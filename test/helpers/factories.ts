// Rows for tests, created through the same stores the application uses.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/db.ts';
import { insertOrder, insertOrderItems, updateOrderStatus } from '../../src/orders/orders.store.ts';
import type { OrderStatus } from '../../src/orders/orders.rules.ts';
import { insertProduct } from '../../src/products/products.store.ts';
import { insertUser, type Role } from '../../src/users/users.store.ts';

export async function createUser(db: Db, role: Role = 'customer') {
  const id = randomUUID().slice(0, 8);
  return insertUser(db, { email: `${role}-${id}@example.test`, name: `${role} ${id}`, role });
}

export async function createProduct(db: Db, fields: Partial<{ name: string; price: number; currency: string; active: boolean }> = {}) {
  return insertProduct(db, {
    name: fields.name ?? `Product ${randomUUID().slice(0, 6)}`,
    price: fields.price ?? 1250,
    currency: fields.currency ?? 'EUR',
    active: fields.active ?? true,
  });
}

/** An order with one item, moved to the given status directly in the store. */
export async function createOrder(
  db: Db,
  customerId: number,
  fields: { status?: OrderStatus; productId?: number; qty?: number; price?: number; currency?: string } = {},
) {
  const product = fields.productId
    ? { id: fields.productId, price: fields.price ?? 1250 }
    : await createProduct(db, { price: fields.price, currency: fields.currency });
  const qty = fields.qty ?? 1;
  return db.transaction(async (tx) => {
    let order = await insertOrder(tx, { customerId, total: product.price * qty, currency: fields.currency ?? 'EUR' });
    await insertOrderItems(tx, order, [{ productId: product.id, qty, unitPrice: product.price, lineTotal: product.price * qty }]);
    if (fields.status && fields.status !== 'pending') order = await updateOrderStatus(tx, order.id, fields.status);
    return order;
  });
}
