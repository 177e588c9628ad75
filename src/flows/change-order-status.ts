// PUT or PATCH of an order's status: the state machine (orders), and when a paid order is cancelled its
// payment refunded (payments). The cancellation and the refund's phase 1 commit together; the
// processor is asked after the commit (src/flows/settle-refund.ts), and the completer goes on if it
// does not answer. An order whose payment is in progress keeps its status until the outcome is known.
import { actorOf } from '../core/actor.ts';
import type { Precondition } from '../core/precondition.ts';
import type { Principal } from '../core/principal.ts';
import type { OrderStatus } from '../orders/orders.rules.ts';
import { changeStatus, decideStatusChange, lockOrderForChange } from '../orders/orders.service.ts';
import type { OrderRecord } from '../orders/orders.store.ts';
import { beginOrderRefund } from '../payments/payments.service.ts';
import type { RefundRecord } from '../payments/payments.store.ts';
import { assertNoPaymentInProgress } from './order-payments.ts';
import type { PaymentDriver } from './settle-payment.ts';
import { advanceRefund } from './settle-refund.ts';

export interface ChangeOrderStatusCommand {
  orderId: number;
  /** The status to set; absent (a PATCH that leaves it) keeps the order's. */
  status?: OrderStatus;
  /** What the request requires of the order it changes (If-Match, read-only fields). */
  precondition?: Precondition<OrderRecord>;
  /** Throws when the caller may not refund: cancelling a paid order refunds it (REFUND_SCOPES). */
  authorizeRefund: () => void;
}

/** The order as changed (committed), and the refund its cancellation made, as far as it got. */
export interface StatusChange {
  order: OrderRecord;
  refund?: RefundRecord;
  /** Why the refund could not be taken further now: it stays pending, and the completer goes on. */
  refundError?: unknown;
}

export async function changeOrderStatus(
  driver: PaymentDriver,
  principal: Principal,
  command: ChangeOrderStatusCommand,
  leaseSeconds: number,
): Promise<StatusChange> {
  const { order, refund } = await driver.db.transaction(async (tx) => {
    const order = await lockOrderForChange(tx, principal, command.orderId, command.precondition);
    const to = command.status === undefined ? undefined : decideStatusChange(principal, order, command.status);
    if (to === undefined) return { order, refund: undefined };
    if (order.status === 'pending') await assertNoPaymentInProgress(tx, order.id, to);
    // A paid order that is cancelled gives its money back: only a caller who may refund cancels it.
    const refunds = order.status === 'paid' && to === 'cancelled';
    if (refunds) command.authorizeRefund();
    const actor = actorOf(principal);
    const refund = refunds ? await beginOrderRefund(tx, order.id, leaseSeconds, actor) : undefined;
    return { order: await changeStatus(tx, order, to, actor), refund };
  });
  if (!refund) return { order };
  // The cancellation has committed: whatever the processor does now, the answer is the cancelled order.
  try {
    return { order, refund: await advanceRefund(driver, refund.id) };
  } catch (error) {
    return { order, refund, refundError: error };
  }
}
