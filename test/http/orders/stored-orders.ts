// Orders as the read and collection tests arrange and check them: rows with a chosen status, total
// and creation time, the representation read back with SQL rather than through the store, and the
// ids a collection lists.
import type { LightMyRequestResponse } from 'fastify';
import type { Db } from '../../../src/db/db.ts';
import type { OrderStatus } from '../../../src/orders/orders.rules.ts';
import { createOrder } from '../../helpers/factories.ts';

export interface StoredOrder {
  id: number;
  status: string;
  customerId: number;
  total: number;
  currency: string;
  createdAt: string;
  updatedAt: string;
}

/** An order of this customer with a chosen status, total and creation time; returns its id. */
export async function createOrderRow(
  db: Db,
  customerId: number,
  fields: { status?: OrderStatus; total?: number; createdAt?: string } = {},
): Promise<number> {
  const row = await createOrder(db, customerId, { status: fields.status, price: fields.total ?? 1000 });
  if (fields.createdAt) await db.query('UPDATE orders SET created_at = $2 WHERE id = $1', [row.id, fields.createdAt]);
  return row.id;
}

/** The representation as stored. */
export async function readStoredOrder(db: Db, id: number): Promise<StoredOrder> {
  const { rows } = await db.query<StoredOrder>(
    `SELECT id, status, customer_id AS "customerId", total, currency, created_at AS "createdAt", updated_at AS "updatedAt"
       FROM orders WHERE id = $1`,
    [id],
  );
  return rows[0]!;
}

/** The ids of a collection response's data, in the order listed. */
export function idsOf(res: LightMyRequestResponse): number[] {
  return res.json().data.map((o: { id: number }) => o.id);
}
