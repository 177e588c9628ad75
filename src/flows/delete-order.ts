// DELETE of an order: a soft delete (orders), refused while a payment of the order is in progress
// (payments), since that payment could still pay it.
import { actorOf } from '../core/actor.ts';
import type { Precondition } from '../core/precondition.ts';
import type { Principal } from '../core/principal.ts';
import type { Db } from '../db/db.ts';
import { lockOrderForDelete, removeOrder } from '../orders/orders.service.ts';
import type { OrderRecord } from '../orders/orders.store.ts';
import { assertNoPaymentInProgress } from './order-payments.ts';

/** Soft delete; repeating it on a deleted order answers the same (204) and changes nothing. */
export function deleteOrder(
  db: Db,
  principal: Principal,
  command: { orderId: number; precondition?: Precondition<OrderRecord> },
): Promise<void> {
  return db.transaction(async (tx) => {
    const order = await lockOrderForDelete(tx, principal, command);
    if (!order) return;
    if (order.status === 'pending') await assertNoPaymentInProgress(tx, order.id, 'deleted');
    await removeOrder(tx, order, actorOf(principal));
  });
}
