// Products in SQL.
import type { PagePlan, PageRows } from '../core/paging.ts';
import type { Queryable } from '../db/db.ts';
import { selectPage, type SortColumn } from '../db/paging.ts';
import type { ProductSortKey } from './products.rules.ts';

/** What a product is made of: its price in minor units of currency. */
export interface ProductFields {
  name: string;
  price: number;
  currency: string;
  active: boolean;
}

export interface ProductRecord extends ProductFields {
  id: number;
  createdAt: string;
  updatedAt: string;
  version: number;
}

const COLUMNS = `id, name, price, currency, active, created_at AS "createdAt", updated_at AS "updatedAt", version`;
const SORT_COLUMNS: Record<ProductSortKey, SortColumn> = {
  name: { sql: 'name', type: 'text' },
  price: { sql: 'price', type: 'integer' },
  createdAt: { sql: 'created_at', type: 'timestamp' },
  id: { sql: 'id', type: 'integer' },
};

export async function findProduct(db: Queryable, id: number, lock = false): Promise<ProductRecord | undefined> {
  const { rows } = await db.query<ProductRecord>(`SELECT ${COLUMNS} FROM products WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0];
}

/** The products of these ids that exist (any order). */
export async function findProducts(db: Queryable, ids: readonly number[]): Promise<ProductRecord[]> {
  const { rows } = await db.query<ProductRecord>(`SELECT ${COLUMNS} FROM products WHERE id = ANY($1::bigint[])`, [ids]);
  return rows;
}

/** One page of products and the exact total, in one statement (db/paging.ts). */
export function selectProducts(
  db: Queryable,
  filters: { active?: boolean },
  plan: PagePlan<ProductSortKey>,
): Promise<PageRows<ProductRecord>> {
  const params: unknown[] = [];
  const where = filters.active === undefined ? 'TRUE' : `active = $${params.push(filters.active)}`;
  return selectPage<ProductRecord, ProductSortKey>(
    db,
    {
      countSql: `SELECT count(*) AS collection_total FROM products WHERE ${where}`,
      rowsSql: `SELECT ${COLUMNS} FROM products WHERE ${where}`,
      columns: SORT_COLUMNS,
      params,
    },
    plan,
  );
}

export async function insertProduct(db: Queryable, p: ProductFields): Promise<ProductRecord> {
  const { rows } = await db.query<ProductRecord>(
    `INSERT INTO products (name, price, currency, active) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
    [p.name, p.price, p.currency, p.active],
  );
  return rows[0]!;
}

export async function updateProduct(db: Queryable, id: number, p: ProductFields): Promise<ProductRecord> {
  const { rows } = await db.query<ProductRecord>(
    `UPDATE products SET name = $2, price = $3, currency = $4, active = $5, version = version + 1, updated_at = now()
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, p.name, p.price, p.currency, p.active],
  );
  return rows[0]!;
}
