// A user's orders (GET /users/{userId}/orders): the user (users) must exist for staff to list
// them; customers may list only their own (orders), so to them another user's existence is moot.
import { ownerScope, type Principal } from '../core/principal.ts';
import type { Collection } from '../core/paging.ts';
import type { Queryable } from '../db/db.ts';
import { listOrders, type ListOrdersCommand } from '../orders/orders.service.ts';
import type { OrderRecord } from '../orders/orders.store.ts';
import { assertUserExists } from '../users/users.service.ts';

export async function listUserOrders(
  db: Queryable,
  principal: Principal,
  userId: number,
  command: Omit<ListOrdersCommand, 'customerId'>,
): Promise<Collection<OrderRecord>> {
  if (!ownerScope(principal)) await assertUserExists(db, userId);
  return listOrders(db, principal, { ...command, customerId: userId });
}
