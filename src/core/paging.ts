// Collections, independent of HTTP: sort keys (parsed, pure), the page asked for, and the
// {data, meta} envelope every collection answers with.
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

export interface Page {
  page: number;
  pageSize: number;
}

export const DEFAULT_PAGE_SIZE = 20;

/** The page a query asks for, with the defaults applied once, here. */
export function pageOf(query: { page?: number; pageSize?: number }): Page {
  return { page: query.page ?? 1, pageSize: query.pageSize ?? DEFAULT_PAGE_SIZE };
}

export interface Collection<T> {
  data: T[];
  meta: { total: number; page: number; pageSize: number; totalPages: number };
}

export function toCollection<T>(data: T[], total: number, page: Page): Collection<T> {
  return { data, meta: { total, page: page.page, pageSize: page.pageSize, totalPages: Math.ceil(total / page.pageSize) } };
}
