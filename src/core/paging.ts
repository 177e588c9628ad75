// Collections, independent of HTTP: sort keys (parsed, pure), the page asked for (a page number, or
// a cursor: src/core/cursor.ts), the plan a store reads it by, and the {data, meta} envelope every
// collection answers with.
import type { CursorCodec, CursorValue } from './cursor.ts';
import { DomainError } from './errors.ts';

export interface SortKey<F extends string = string> {
  field: F;
  descending: boolean;
}

/**
 * Parses sort=createdAt,-status: keys in the order written, "-" for descending. Unknown and
 * repeated keys are refused; id is appended as the final tie-breaker so pages are stable.
 */
export function parseSortParam<F extends string>(raw: string | undefined, allowed: readonly F[], fallback: SortKey<F>[]): SortKey<F>[] {
  const keys: SortKey<F>[] = [];
  if (raw !== undefined) {
    for (const part of raw.split(',')) {
      const descending = part.startsWith('-');
      const field = (descending ? part.slice(1) : part) as F;
      if (field === '') {
        throw new DomainError('REQUEST_PARAMETER_INVALID', 'sort has an empty key.', {
          errors: [{ parameter: 'sort', detail: 'sort has an empty key' }],
        });
      }
      if (!allowed.includes(field)) {
        const detail = `"${field}" is not a sort key of this collection; use ${allowed.join(', ')}`;
        throw new DomainError('QUERY_UNKNOWN_SORT_KEY', detail, { errors: [{ parameter: 'sort', detail }] });
      }
      if (keys.some((k) => k.field === field)) {
        const detail = `"${field}" appears more than once in sort`;
        throw new DomainError('QUERY_DUPLICATE_SORT_KEY', detail, { errors: [{ parameter: 'sort', detail }] });
      }
      keys.push({ field, descending });
    }
  }
  const result = keys.length > 0 ? keys : [...fallback];
  if (!result.some((k) => k.field === 'id') && allowed.includes('id' as F))
    result.push({ field: 'id' as F, descending: result[0]?.descending ?? false });
  return result;
}

export const DEFAULT_PAGE_SIZE = 20;
/** The largest page number asked for, and shown: a page reached by cursor beyond it shows this. */
export const MAX_PAGE = 1_000_000;

/** The page a query asks for: a page number, or the page after or before a cursor's row. */
export type PagePosition = { page: number } | { after: string } | { before: string };

export interface PageRequest {
  pageSize: number;
  position: PagePosition;
  /** Verifies the cursor asked for and signs the page's own (the deployment's key). */
  cursors: CursorCodec;
}

function refuseCombination(parameter: 'page' | 'before', detail: string): DomainError {
  return new DomainError('REQUEST_PARAMETER_INVALID', `${detail}.`, { errors: [{ parameter, detail }] });
}

/** The page a query asks for, with the defaults applied once, here; page, after and before exclude each other. */
export function pageOf(query: { page?: number; pageSize?: number; after?: string; before?: string }, cursors: CursorCodec): PageRequest {
  const { page, after, before } = query;
  if (page !== undefined && (after !== undefined || before !== undefined)) {
    throw refuseCombination('page', `page cannot be combined with ${after !== undefined ? 'after' : 'before'}: a cursor names the page`);
  }
  if (after !== undefined && before !== undefined) throw refuseCombination('before', 'after and before cannot be combined');
  const position: PagePosition = after !== undefined ? { after } : before !== undefined ? { before } : { page: page ?? 1 };
  return { pageSize: query.pageSize ?? DEFAULT_PAGE_SIZE, position, cursors };
}

/** Where a store starts reading: an offset, or beside a cursor's row (its sort-key values, in sort order). */
export type PageStart =
  | { kind: 'offset'; page: number }
  | { kind: 'after' | 'before'; values: CursorValue[]; n: number; parameter: 'after' | 'before' };

/** A page as a store reads it: size, sort and start; and how the page's own cursors are signed. */
export interface PagePlan<F extends string = string> {
  pageSize: number;
  sort: SortKey<F>[];
  start: PageStart;
  sign(values: CursorValue[], n: number): string;
}

/** What a cursor is bound to: the collection, its filters as applied (the caller's scope included), its sort. */
function cursorScope(collection: string, filters: object, sort: readonly SortKey[]): string {
  const applied = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([collection, applied, sort.map((k) => `${k.descending ? '-' : ''}${k.field}`)]);
}

export function invalidCursor(parameter: 'after' | 'before'): DomainError {
  const detail = `${parameter} is not a cursor this collection gave for these filters and sort`;
  return new DomainError('QUERY_CURSOR_INVALID', `${detail}; start again from the first page.`, { errors: [{ parameter, detail }] });
}

/**
 * The plan of the page asked for, in a collection with these filters and sort: a cursor is verified
 * here (its MAC binds it to all three, so one altered or made for anything else is refused).
 */
export function planPage<F extends string>(request: PageRequest, collection: string, filters: object, sort: SortKey<F>[]): PagePlan<F> {
  const scope = cursorScope(collection, filters, sort);
  const { cursors, pageSize, position } = request;
  const sign = (values: CursorValue[], n: number) => cursors.sign(scope, { values, n });
  if ('page' in position) return { pageSize, sort, start: { kind: 'offset', page: position.page }, sign };
  const parameter = 'after' in position ? 'after' : 'before';
  const cursor = cursors.verify(scope, 'after' in position ? position.after : position.before);
  if (!cursor || cursor.values.length !== sort.length) throw invalidCursor(parameter);
  return { pageSize, sort, start: { kind: parameter, values: cursor.values, n: cursor.n, parameter }, sign };
}

/** A page as read: its rows in sort order, the exact total, and whether a row lies beyond them in the reading direction. */
export interface PageRows<T> {
  rows: T[];
  total: number;
  /** Another row after the page (offset, after) or before it (before). */
  more: boolean;
}

export interface CollectionMeta {
  total: number;
  page: number;
  pageSize: number;
  totalPages: number;
  nextCursor: string | null;
  prevCursor: string | null;
}

export interface Collection<T> {
  data: T[];
  meta: CollectionMeta;
}

/** Rows before the page's first row, and the page's number: exact for a page number, as of the cursor's making for a cursor. */
function pageNumber(plan: PagePlan, count: number): { before: number; page: number } {
  const { start, pageSize } = plan;
  if (start.kind === 'offset') return { before: (start.page - 1) * pageSize, page: start.page };
  // after: the cursor's row is row n, the page starts at n + 1; before: the page ends at row n - 1.
  const before = start.kind === 'after' ? start.n + 1 : Math.max(start.n - count, 0);
  return { before, page: Math.min(Math.floor(before / pageSize) + 1, MAX_PAGE) };
}

/** The envelope of a page: its number, the exact total, and cursors to the pages beside it (null where there is none). */
export function toCollection<T>(read: PageRows<T>, plan: PagePlan): Collection<T> {
  const { rows, total, more } = read;
  const { pageSize, start, sort } = plan;
  const { before, page } = pageNumber(plan, rows.length);
  // A record holds its sort fields under their names (the store selects them so), in the types the cursor carries.
  const cursorAt = (row: T | undefined, n: number) => {
    if (row === undefined) return null;
    return plan.sign(
      sort.map((k) => (row as Record<string, CursorValue>)[k.field]!),
      n,
    );
  };
  const hasNext = start.kind === 'before' ? rows.length > 0 : more;
  const hasPrev = start.kind === 'before' ? more : start.kind === 'after' || before > 0;
  return {
    data: rows,
    meta: {
      total,
      page,
      pageSize,
      totalPages: Math.ceil(total / pageSize),
      nextCursor: hasNext ? cursorAt(rows.at(-1), before + rows.length - 1) : null,
      prevCursor: hasPrev ? cursorAt(rows[0], before) : null,
    },
  };
}

/** The same page holding nothing: a filter that can match no row (a user's orders with another customerId). */
export function emptied<T>(collection: Collection<T>): Collection<T> {
  return { data: [], meta: { ...collection.meta, total: 0, totalPages: 0, nextCursor: null, prevCursor: null } };
}
