// Product use cases. Reading the catalogue needs any valid token; changing it needs the
// products:write scope held by staff or a service client.
import type { Db } from '../db/db.ts';
import { isStaffOrService, type Principal } from '../http/authenticate.ts';
import { parseSortParam, toCollection, type Collection } from '../http/collection.ts';
import { checkIfMatch, entityTag } from '../http/etag.ts';
import { ProblemError } from '../http/problem.ts';
import { assertCurrency, isSameProduct } from './products.rules.ts';
import { PRODUCT_SORT_KEYS, type CreateProductBody, type ListProductsQuery, type Product, type ProductBody } from './products.schemas.ts';
import { findProduct, insertProduct, selectProducts, toProduct, updateProduct, type ProductRow } from './products.store.ts';

export interface TaggedProduct {
  product: Product;
  etag: string;
}

const tagged = (row: ProductRow, apiVersion: number): TaggedProduct => ({ product: toProduct(row), etag: entityTag('p', row.id, row.version, apiVersion) });

function assertCatalogueManager(principal: Principal): void {
  if (!isStaffOrService(principal)) throw new ProblemError('AUTH_FORBIDDEN', 'Only staff can change the product catalogue.');
}

export async function getProduct(db: Db, id: number, apiVersion: number): Promise<TaggedProduct> {
  const row = await findProduct(db, id);
  if (!row) throw new ProblemError('PRODUCT_NOT_FOUND', `Product ${id} does not exist.`);
  return tagged(row, apiVersion);
}

export async function listProducts(db: Db, query: ListProductsQuery): Promise<Collection<Product>> {
  const sort = parseSortParam(query.sort, PRODUCT_SORT_KEYS, [{ field: 'id', descending: false }]);
  const page = { page: query.page ?? 1, pageSize: query.pageSize ?? 20 };
  const { rows, total } = await selectProducts(db, { active: query.active }, sort, page);
  return toCollection(rows.map(toProduct), total, page);
}

export async function createProduct(db: Db, principal: Principal, body: CreateProductBody, apiVersion: number): Promise<TaggedProduct> {
  assertCatalogueManager(principal);
  assertCurrency(body.currency);
  return tagged(await insertProduct(db, { ...body, active: body.active ?? true }), apiVersion);
}

export async function replaceProduct(
  db: Db,
  principal: Principal,
  id: number,
  body: ProductBody,
  ifMatch: string | undefined,
  apiVersion: number,
): Promise<TaggedProduct> {
  assertCatalogueManager(principal);
  assertCurrency(body.currency);
  return db.transaction(async (tx) => {
    const row = await findProduct(tx, id, true);
    if (!row) throw new ProblemError('PRODUCT_NOT_FOUND', `Product ${id} does not exist.`);
    checkIfMatch(ifMatch, tagged(row, apiVersion).etag);
    if (isSameProduct(row, body)) return tagged(row, apiVersion);
    return tagged(await updateProduct(tx, id, body), apiVersion);
  });
}
