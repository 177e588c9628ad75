// One page of a collection and its exact total, in one statement: one snapshot (the total always
// matches the page) and one round trip. The page is read in a LATERAL subquery beside its total,
// then ordered again outside by the same keys; the LEFT JOIN keeps the total when the page is empty.
import type { Page, SortKey } from '../core/paging.ts';
import type { Queryable } from './db.ts';

export interface PageQuery<F extends string> {
  /** A query of one row with one column, collection_total: the exact number of matching rows. */
  countSql: string;
  /** SELECT <columns> FROM … WHERE …, without ORDER BY or LIMIT; the sort fields are output columns. */
  rowsSql: string;
  sort: SortKey<F>[];
  /** Sort field → the SQL expression it sorts by inside rowsSql. */
  columns: Record<F, string>;
  /** The parameters both queries use; the page's LIMIT and OFFSET are appended. */
  params: unknown[];
}

export async function selectPage<T extends { id: number | string }, F extends string>(
  db: Queryable,
  query: PageQuery<F>,
  page: Page,
): Promise<{ rows: T[]; total: number }> {
  const direction = (k: SortKey<F>) => (k.descending ? 'DESC' : 'ASC');
  const innerOrder = query.sort.map((k) => `${query.columns[k.field]} ${direction(k)}`).join(', ');
  const outerOrder = query.sort.map((k) => `x."${k.field}" ${direction(k)}`).join(', ');
  const params = [...query.params];
  const limit = `$${params.push(page.pageSize)}`;
  const offset = `$${params.push((page.page - 1) * page.pageSize)}`;
  const { rows } = await db.query<(T | { [K in keyof T]: null }) & { collection_total: number }>(
    `SELECT t.collection_total, x.* FROM (${query.countSql}) t LEFT JOIN LATERAL (
       ${query.rowsSql} ORDER BY ${innerOrder} LIMIT ${limit} OFFSET ${offset}
     ) x ON true ORDER BY ${outerOrder}`,
    params,
  );
  return {
    rows: rows.filter((r) => r.id !== null).map(({ collection_total: _total, ...row }) => row as unknown as T),
    total: rows[0]?.collection_total ?? 0,
  };
}
