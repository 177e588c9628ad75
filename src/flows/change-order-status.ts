// PUT of an order's status: the state machine (orders), and when a paid order is cancelled its
// payment refunded (payments), all in one transaction.
import type { Precondition } from '../core/precondition.ts';
import type { Principal } from '../core/principal.ts';
import type { Db } from '../db/db.ts';
import type { OrderStatus } from '../orders/orders.rules.ts';
import { changeStatus, decideStatusChange, lockOrderForChange } from '../orders/orders.service.ts';
import type { OrderRecord } from '../orders/orders.store.ts';
import { refundOrderPayment } from '../payments/payments.service.ts';
import type { PaymentProcessor } from '../payments/processor.ts';

export interface ChangeOrderStatusCommand {
  orderId: number;
  status: OrderStatus;
  /** What the request requires of the order it replaces (If-Match, read-only fields). */
  precondition?: Precondition<OrderRecord>;
}

/** The order as changed, and whether the change refunded its payment (committed, both). */
export interface StatusChange {
  order: OrderRecord;
  refunded: boolean;
}

export function changeOrderStatus(
  db: Db,
  processor: PaymentProcessor,
  principal: Principal,
  command: ChangeOrderStatusCommand,
): Promise<StatusChange> {
  return db.transaction(async (tx) => {
    const order = await lockOrderForChange(tx, principal, command.orderId, command.precondition);
    const to = decideStatusChange(principal, order, command.status);
    if (to === undefined) return { order, refunded: false };
    // A paid order that is cancelled gives its money back, in the same transaction.
    const refunded = order.status === 'paid' && to === 'cancelled' && (await refundOrderPayment(tx, processor, order.id));
    return { order: await changeStatus(tx, order, to), refunded };
  });
}
