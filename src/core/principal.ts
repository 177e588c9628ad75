// Who is calling, as every layer below the edge sees it, and the ownership policy: customers act
// on their own orders and payments only, staff and service clients on all.

/** What every caller has, user or service. */
interface Caller {
  clientId: string;
  scopes: ReadonlySet<string>;
  subject: string;
  /** The API version unversioned requests get: the one the client is pinned to (src/core/api-versions.ts). */
  apiVersion: number;
}

export type Principal = (Caller & { kind: 'user'; userId: number; role: 'customer' | 'staff' }) | (Caller & { kind: 'service' });

export function isStaffOrService(principal: Principal): boolean {
  return principal.kind === 'service' || principal.role === 'staff';
}

/** Restricts a query to one customer's rows; undefined means every customer (staff, service). */
export type OwnerScope = { customerId: number } | undefined;

export function ownerScope(principal: Principal): OwnerScope {
  return principal.kind === 'user' && principal.role === 'customer' ? { customerId: principal.userId } : undefined;
}
