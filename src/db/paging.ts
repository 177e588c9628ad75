// One page of a collection and its exact total, in one statement: one snapshot (the total always
// matches the page) and one round trip. The page is read in a LATERAL subquery beside its total,
// then ordered again outside by the same keys; the LEFT JOIN keeps the total when the page is empty.
// A page is found by OFFSET (a page number) or by keyset (a cursor: the rows beyond its row in sort
// order), which reads only the page however deep it is, from an index on the sort keys.
import { fitsSortType, type CursorValue, type SortValueType } from '../core/cursor.ts';
import { invalidCursor, type PagePlan, type PageRows, type SortKey } from '../core/paging.ts';
import type { Queryable } from './db.ts';

/** A sort field's SQL expression inside rowsSql (NOT NULL: a keyset comparison would drop NULLs), and the type its values compare as. */
export interface SortColumn {
  sql: string;
  type: SortValueType;
}

export interface PageQuery<F extends string> {
  /** A query of one row with one column, collection_total: the exact number of matching rows. */
  countSql: string;
  /**
   * SELECT <columns> FROM … WHERE <the filters, joined by AND: a cursor's condition is ANDed on>,
   * without ORDER BY or LIMIT; the sort fields are output columns.
   */
  rowsSql: string;
  /** Sort field → its column inside rowsSql. */
  columns: Record<F, SortColumn>;
  /** The parameters both queries use; the page's own are appended. */
  params: unknown[];
}

const CAST: Record<SortValueType, string> = { integer: 'bigint', text: 'text', timestamp: 'timestamptz' };

/**
 * The rows beyond the cursor's row in the reading direction (after: the sort order; before: its
 * reverse). One direction for every key is a row comparison, which PostgreSQL reads as one index
 * range; mixed directions expand it, with the first key's bound repeated on its own so the index
 * scan still starts at the cursor.
 */
function keysetCondition<F extends string>(
  sort: SortKey<F>[],
  columns: Record<F, SortColumn>,
  values: CursorValue[],
  forward: boolean,
  params: unknown[],
): string {
  const keys = sort.map((k, i) => ({
    column: columns[k.field].sql,
    value: `$${params.push(values[i])}::${CAST[columns[k.field].type]}`,
    op: k.descending === forward ? '<' : '>',
  }));
  const first = keys[0]!;
  if (keys.every((k) => k.op === first.op)) {
    if (keys.length === 1) return `${first.column} ${first.op} ${first.value}`;
    return `(${keys.map((k) => k.column).join(', ')}) ${first.op} (${keys.map((k) => k.value).join(', ')})`;
  }
  const expanded = keys.reduceRight(
    (inner, k) =>
      inner === '' ? `${k.column} ${k.op} ${k.value}` : `(${k.column} ${k.op} ${k.value} OR (${k.column} = ${k.value} AND ${inner}))`,
    '',
  );
  return `${first.column} ${first.op}= ${first.value} AND ${expanded}`;
}

/**
 * A page's LIMIT written into the statement rather than passed as a parameter. A prepared
 * statement's generic plan cannot see a parameter's value and costs LIMIT $n as a tenth of the
 * matching rows, far above any custom plan's, so PostgreSQL's plan cache (plan_cache_mode auto)
 * kept planning a first page afresh on every call: about half of PostgreSQL's CPU for the broad
 * filter (record 0123). With the limit in the text the generic plan costs what a custom one does
 * and is reused. A page size is one of a hundred values, so the statements stay few; a later
 * page's OFFSET, which takes any value, stays a parameter (and its plan custom).
 */
function literalLimit(rows: number): string {
  if (!Number.isSafeInteger(rows) || rows < 1) throw new Error(`a page's limit must be a positive integer, not ${rows}`);
  return String(rows);
}

export async function selectPage<T extends { id: number | string }, F extends string>(
  db: Queryable,
  query: PageQuery<F>,
  plan: PagePlan<F>,
): Promise<PageRows<T>> {
  const { sort, start, pageSize } = plan;
  const params = [...query.params];
  const order = (reverse: boolean, column: (k: SortKey<F>) => string) =>
    sort.map((k) => `${column(k)} ${k.descending !== reverse ? 'DESC' : 'ASC'}`).join(', ');
  const outerOrder = order(false, (k) => `x."${k.field}"`);
  let inner: string;
  if (start.kind === 'offset') {
    const window =
      start.page === 1
        ? `LIMIT ${literalLimit(pageSize)}`
        : `LIMIT $${params.push(pageSize)} OFFSET $${params.push((start.page - 1) * pageSize)}`;
    inner = `${query.rowsSql} ORDER BY ${order(false, (k) => query.columns[k.field].sql)} ${window}`;
  } else {
    // Signed by us, so only a key leak or a bug gives a value of another type: still a 400, never SQL's 500.
    if (!sort.every((k, i) => fitsSortType(query.columns[k.field].type, start.values[i]!))) throw invalidCursor(start.parameter);
    const forward = start.kind === 'after';
    const condition = keysetCondition(sort, query.columns, start.values, forward, params);
    // One row more than the page says whether another page lies beyond it.
    inner = `${query.rowsSql} AND ${condition} ORDER BY ${order(!forward, (k) => query.columns[k.field].sql)} LIMIT ${literalLimit(pageSize + 1)}`;
  }
  const { rows } = await db.query<(T | { [K in keyof T]: null }) & { collection_total: number }>(
    `SELECT t.collection_total, x.* FROM (${query.countSql}) t LEFT JOIN LATERAL (
       ${inner}
     ) x ON true ORDER BY ${outerOrder}`,
    params,
  );
  const total = rows[0]?.collection_total ?? 0;
  // The LEFT JOIN's one row of NULLs is an empty page. The rows keep their collection_total: they
  // are read field by field by a representation, and a copy of each without it cost a page of
  // orders ~3 µs of CPU per request.
  const found = (rows.length === 1 && rows[0]!.id === null ? [] : rows) as unknown as T[];
  if (start.kind === 'offset') return { rows: found, total, more: (start.page - 1) * pageSize + found.length < total };
  const more = found.length > pageSize;
  // The extra row is the farthest from the cursor: the last in sort order after it, the first before it.
  return { rows: more ? (start.kind === 'after' ? found.slice(0, pageSize) : found.slice(1)) : found, total, more };
}
