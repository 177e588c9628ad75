// Orders and order items as the API shows them: the record less what is internal, the entity tag
// of that representation, and what a complete replacement (PUT) may repeat of it. A new API version
// changes what it needs here; services and stores do not know versions exist.
import type { Precondition } from '../core/precondition.ts';
import { DomainError } from '../core/errors.ts';
import { entityTag, ifMatchPrecondition } from '../http/etag.ts';
import type { Order, OrderItem } from './orders.schemas.ts';
import type { OrderItemRecord, OrderRecord } from './orders.store.ts';

export function orderRepresentation(record: OrderRecord): Order {
  return {
    id: record.id,
    status: record.status,
    customerId: record.customerId,
    total: record.total,
    currency: record.currency,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function orderItemRepresentation(record: OrderItemRecord): OrderItem {
  return {
    id: record.id,
    orderId: record.orderId,
    productId: record.productId,
    qty: record.qty,
    unitPrice: record.unitPrice,
    lineTotal: record.lineTotal,
    currency: record.currency,
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

/** Read-only fields a PUT body may repeat, compared with the current representation. */
export const READ_ONLY_FIELDS = ['id', 'customerId', 'total', 'currency', 'createdAt', 'updatedAt'] as const;

const TIMESTAMP_FIELDS: ReadonlySet<string> = new Set(['createdAt', 'updatedAt']);

/** Timestamps are the same instant however written (another offset, fewer fractional digits). */
function sameValue(field: string, sent: unknown, current: unknown): boolean {
  if (sent === current) return true;
  if (!TIMESTAMP_FIELDS.has(field) || typeof sent !== 'string' || typeof current !== 'string') return false;
  const instant = Date.parse(sent);
  return !Number.isNaN(instant) && instant === Date.parse(current);
}

export function changedReadOnlyFields(body: Record<string, unknown>, current: Record<string, unknown>): string[] {
  return READ_ONLY_FIELDS.filter((field) => field in body && !sameValue(field, body[field], current[field]));
}

/**
 * What a PUT of an order requires of the order it replaces: If-Match (when sent), then the
 * read-only fields the body repeats must equal the current representation's.
 */
export function orderReplacementPrecondition(
  body: Record<string, unknown>,
  ifMatch: string | undefined,
  apiVersion: number,
): Precondition<OrderRecord> {
  const matches = orderIfMatch(ifMatch, apiVersion);
  return function checkReplacedOrder(record) {
    matches?.(record);
    if (!record) return;
    const current = orderRepresentation(record);
    const changed = changedReadOnlyFields(body, current);
    if (changed.length > 0) {
      throw new DomainError('ORDER_READ_ONLY_FIELD', `Read-only fields differ from the order: ${changed.join(', ')}.`, {
        errors: changed.map((f) => ({
          pointer: `/${f}`,
          detail: `${f} is read-only; send ${JSON.stringify(current[f as keyof Order])} or omit it`,
        })),
      });
    }
  };
}
