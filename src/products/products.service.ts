// Product use cases. Reading the catalogue needs any valid token; changing it needs the
// products:write scope held by staff or a service client.
import { actorOf } from '../core/actor.ts';
import { DomainError } from '../core/errors.ts';
import { assertCurrency } from '../core/money.ts';
import { parseSortParam, planPage, toCollection, type Collection, type PageRequest } from '../core/paging.ts';
import type { Precondition } from '../core/precondition.ts';
import { isStaffOrService, type Principal } from '../core/principal.ts';
import type { Db, Queryable } from '../db/db.ts';
import { recordEvent } from '../events/events.store.ts';
import { isSameProduct, PRODUCT_SORT_KEYS } from './products.rules.ts';
import { findProduct, insertProduct, selectProducts, updateProduct, type ProductFields, type ProductRecord } from './products.store.ts';

function assertCatalogueManager(principal: Principal): void {
  if (!isStaffOrService(principal)) throw new DomainError('AUTH_FORBIDDEN', 'Only staff can change the product catalogue.');
}

const notFound = (id: number) => new DomainError('PRODUCT_NOT_FOUND', `Product ${id} does not exist.`);

export async function getProduct(db: Queryable, productId: number): Promise<ProductRecord> {
  const product = await findProduct(db, productId);
  if (!product) throw notFound(productId);
  return product;
}

export interface ListProductsCommand {
  active?: boolean;
  sort?: string;
  page: PageRequest;
}

export async function listProducts(db: Queryable, command: ListProductsCommand): Promise<Collection<ProductRecord>> {
  const sort = parseSortParam(command.sort, PRODUCT_SORT_KEYS, [{ field: 'id', descending: false }]);
  const filters = { active: command.active };
  const plan = planPage(command.page, 'products', filters, sort);
  return toCollection(await selectProducts(db, filters, plan), plan);
}

export async function createProduct(
  db: Db,
  principal: Principal,
  command: Omit<ProductFields, 'active'> & { active?: boolean },
): Promise<ProductRecord> {
  assertCatalogueManager(principal);
  assertCurrency(command.currency, '/price/currency');
  return db.transaction(async (tx) => {
    const product = await insertProduct(tx, { ...command, active: command.active ?? true });
    await recordEvent(tx, 'product.created', product, actorOf(principal));
    return product;
  });
}

export interface ReplaceProductCommand extends ProductFields {
  productId: number;
  precondition?: Precondition<ProductRecord>;
}

export async function replaceProduct(db: Db, principal: Principal, command: ReplaceProductCommand): Promise<ProductRecord> {
  assertCatalogueManager(principal);
  assertCurrency(command.currency, '/price/currency');
  const { productId, precondition, ...fields } = command;
  return db.transaction(async (tx) => {
    const product = await findProduct(tx, productId, true);
    if (!product) throw notFound(productId);
    precondition?.(product);
    if (isSameProduct(product, fields)) return product;
    const updated = await updateProduct(tx, productId, fields);
    await recordEvent(tx, 'product.updated', updated, actorOf(principal));
    return updated;
  });
}
