// Orders and order items as the API shows them (the latest version; older versions are rendered
// from it at the edge, src/http/versions/): the record less what is internal, the entity tag of
// a representation, and what a complete replacement (PUT) or a merge patch (PATCH) may repeat of it.
import { isDeepStrictEqual } from 'node:util';
import type { Precondition } from '../core/precondition.ts';
import { DomainError } from '../core/errors.ts';
import { entityTag, ifMatchPrecondition } from '../http/etag.ts';
import { applyMergePatch, removedMembers } from '../http/merge-patch.ts';
import type { Order, OrderItem } from './orders.schemas.ts';
import type { ListedOrder, OrderItemRecord, OrderRecord, OrderWithItems } from './orders.store.ts';

/** items absent: a version that does not show them (v1) did not load them; they are shown empty. */
export function orderRepresentation(record: ListedOrder & Partial<Pick<OrderWithItems, 'items'>>): Order {
  return {
    id: record.id,
    status: record.status,
    customerId: record.customerId,
    total: { value: record.total, currency: record.currency },
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    items: record.items ? record.items.map(orderItemRepresentation) : [],
  };
}

export function orderItemRepresentation(record: OrderItemRecord): OrderItem {
  return {
    id: record.id,
    orderId: record.orderId,
    productId: record.productId,
    qty: record.qty,
    unitPrice: { value: record.unitPrice, currency: record.currency },
    lineTotal: { value: record.lineTotal, currency: record.currency },
  };
}

/** A strong tag of one representation: the order, its row version and the API version. */
export function orderEtag(record: Pick<OrderRecord, 'id' | 'version'>, apiVersion: number): string {
  return entityTag('order', record.id, record.version, apiVersion);
}

/** If-Match on an order, judged by the service on the locked row. */
export function orderIfMatch(header: string | undefined, apiVersion: number): Precondition<OrderRecord> | undefined {
  return ifMatchPrecondition<OrderRecord>(header, (current) => orderEtag(current, apiVersion));
}

/**
 * Fields of a representation a PUT body may carry but never sets: the server manages them, so a
 * body read earlier (its updatedAt since moved on) replaces the order as well as a fresh one.
 */
const SERVER_MANAGED: ReadonlySet<string> = new Set(['id', 'createdAt', 'updatedAt', 'items']);

/**
 * The read-only business fields a PUT body changes: those it carries that differ from the current
 * representation (in the body's own API version). Status is the writable field; server-managed
 * fields are ignored.
 */
export function changedReadOnlyFields(body: Record<string, unknown>, current: Record<string, unknown>): string[] {
  return Object.keys(current).filter(
    (field) => field !== 'status' && !SERVER_MANAGED.has(field) && field in body && !isDeepStrictEqual(body[field], current[field]),
  );
}

/**
 * What a change of an order requires of the order it changes: If-Match (when sent), then the
 * read-only business fields of the replacement must equal the current representation's, as
 * represent shows it in the version the body was written for.
 */
function readOnlyPrecondition(
  replacementOf: (current: Record<string, unknown>) => Record<string, unknown>,
  ifMatch: string | undefined,
  apiVersion: number,
  represent: (record: OrderRecord) => Record<string, unknown>,
): Precondition<OrderRecord> {
  const matches = orderIfMatch(ifMatch, apiVersion);
  return function checkChangedOrder(record) {
    matches?.(record);
    if (!record) return;
    const current = represent(record);
    const changed = changedReadOnlyFields(replacementOf(current), current);
    if (changed.length > 0) {
      throw new DomainError('ORDER_READ_ONLY_FIELD', `Read-only fields differ from the order: ${changed.join(', ')}.`, {
        errors: changed.map((f) => ({ pointer: `/${f}`, detail: `${f} is read-only; send ${JSON.stringify(current[f])} or omit it` })),
      });
    }
  };
}

/** PUT: the body is the replacement; the read-only fields it repeats must be the current ones. */
export function orderReplacementPrecondition(
  body: Record<string, unknown>,
  ifMatch: string | undefined,
  apiVersion: number,
  represent: (record: OrderRecord) => Record<string, unknown>,
): Precondition<OrderRecord> {
  return readOnlyPrecondition(() => body, ifMatch, apiVersion, represent);
}

/**
 * PATCH: the replacement is the current representation with the merge patch applied (RFC 7396
 * §2), so a patch of part of a read-only object ({"total": {"value": …}}) is judged as a whole.
 */
export function orderPatchPrecondition(
  patch: Record<string, unknown>,
  ifMatch: string | undefined,
  apiVersion: number,
  represent: (record: OrderRecord) => Record<string, unknown>,
): Precondition<OrderRecord> {
  return readOnlyPrecondition((current) => applyMergePatch(current, patch) as Record<string, unknown>, ifMatch, apiVersion, represent);
}

/**
 * A merge patch's null removes a member (RFC 7396 §1), and every member of an order is required:
 * refused before anything else is judged, so a patch never leaves an order without one.
 */
export function assertRemovesNoMember(patch: unknown): void {
  const removed = removedMembers(patch);
  if (removed.length === 0) return;
  throw new DomainError('ORDER_MEMBER_REQUIRED', `A merge patch of an order cannot remove members: ${removed.join(', ')}.`, {
    errors: removed.map((pointer) => ({
      pointer,
      detail: 'null removes this member, and an order requires it; send its value or omit it',
    })),
  });
}
