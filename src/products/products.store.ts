// Products in SQL.
import type { SortKey } from '../http/collection.ts';
import type { Queryable } from '../db/db.ts';
import type { Product, PRODUCT_SORT_KEYS } from './products.schemas.ts';

export interface ProductRow extends Product {
  version: number;
}

const COLUMNS = `id, name, price, currency, active, created_at AS "createdAt", updated_at AS "updatedAt", version`;
const SORT_COLUMNS: Record<(typeof PRODUCT_SORT_KEYS)[number], string> = { name: 'name', price: 'price', createdAt: 'created_at', id: 'id' };

export async function findProduct(db: Queryable, id: number, lock = false): Promise<ProductRow | undefined> {
  const { rows } = await db.query<ProductRow>(`SELECT ${COLUMNS} FROM products WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0];
}

export async function selectProducts(
  db: Queryable,
  filters: { active?: boolean },
  sort: SortKey<(typeof PRODUCT_SORT_KEYS)[number]>[],
  page: { page: number; pageSize: number },
): Promise<{ rows: ProductRow[]; total: number }> {
  const params: unknown[] = [];
  const where = filters.active === undefined ? 'TRUE' : `active = $${params.push(filters.active)}`;
  const orderBy = sort.map((k) => `${SORT_COLUMNS[k.field]} ${k.descending ? 'DESC' : 'ASC'}`).join(', ');
  const [{ rows }, count] = await Promise.all([
    db.query<ProductRow>(`SELECT ${COLUMNS} FROM products WHERE ${where} ORDER BY ${orderBy} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`, [...params, page.pageSize, (page.page - 1) * page.pageSize]),
    db.query<{ n: number }>(`SELECT count(*) AS n FROM products WHERE ${where}`, params),
  ]);
  return { rows, total: count.rows[0]?.n ?? 0 };
}

export async function insertProduct(db: Queryable, p: { name: string; price: number; currency: string; active: boolean }): Promise<ProductRow> {
  const { rows } = await db.query<ProductRow>(
    `INSERT INTO products (name, price, currency, active) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
    [p.name, p.price, p.currency, p.active],
  );
  return rows[0]!;
}

export async function updateProduct(db: Queryable, id: number, p: { name: string; price: number; currency: string; active: boolean }): Promise<ProductRow> {
  const { rows } = await db.query<ProductRow>(
    `UPDATE products SET name = $2, price = $3, currency = $4, active = $5, version = version + 1, updated_at = now()
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, p.name, p.price, p.currency, p.active],
  );
  return rows[0]!;
}

export function toProduct(row: ProductRow): Product {
  const { version: _version, ...product } = row;
  return product;
}
