// Products as the API shows them: the record less its row version, and the entity tag.
import type { Precondition } from '../core/precondition.ts';
import { entityTag, ifMatchPrecondition } from '../http/etag.ts';
import type { Product } from './products.schemas.ts';
import type { ProductRecord } from './products.store.ts';

export function productRepresentation(record: ProductRecord): Product {
  return {
    id: record.id,
    name: record.name,
    price: { value: record.price, currency: record.currency },
    active: record.active,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function productEtag(record: Pick<ProductRecord, 'id' | 'version'>, apiVersion: number): string {
  return entityTag('product', record.id, record.version, apiVersion);
}

/** If-Match on a product, judged by the service on the locked row. */
export function productIfMatch(header: string | undefined, apiVersion: number): Precondition<ProductRecord> | undefined {
  return ifMatchPrecondition<ProductRecord>(header, (current) => productEtag(current, apiVersion));
}
