// A user's orders (GET /users/{userId}/orders): the user (users) must exist for staff to list
// them; customers may list only their own (orders), so to them another user's existence is moot.
// The query has the parameters of GET /orders, customerId included: no order belongs to two
// customers, so a customerId other than the user's selects nothing.
import { ownerScope, type Principal } from '../core/principal.ts';
import { emptied, type Collection } from '../core/paging.ts';
import type { Queryable } from '../db/db.ts';
import { listOrders, type ListOrdersCommand } from '../orders/orders.service.ts';
import type { ListedOrder } from '../orders/orders.store.ts';
import { assertUserExists } from '../users/users.service.ts';

export async function listUserOrders(
  db: Queryable,
  principal: Principal,
  userId: number,
  command: ListOrdersCommand,
): Promise<Collection<ListedOrder>> {
  if (!ownerScope(principal)) await assertUserExists(db, userId);
  // Listed whatever customerId says, so the caller and the parameters are judged as ever (403, 400).
  const orders = await listOrders(db, principal, { ...command, customerId: userId });
  if (command.customerId !== undefined && command.customerId !== userId) return emptied(orders);
  return orders;
}
