// Who is calling, as every layer below the edge sees it, and the ownership policy: customers act
// on their own orders and payments only, staff and service clients on all.

export type Principal =
  | { kind: 'user'; userId: number; role: 'customer' | 'staff'; clientId: string; scopes: ReadonlySet<string>; subject: string }
  | { kind: 'service'; clientId: string; scopes: ReadonlySet<string>; subject: string };

export function isStaffOrService(principal: Principal): boolean {
  return principal.kind === 'service' || principal.role === 'staff';
}

/** Restricts a query to one customer's rows; undefined means every customer (staff, service). */
export type OwnerScope = { customerId: number } | undefined;

export function ownerScope(principal: Principal): OwnerScope {
  return principal.kind === 'user' && principal.role === 'customer' ? { customerId: principal.userId } : undefined;
}
