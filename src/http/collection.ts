// Collections: sort parsing (pure), paging, the {data, meta} envelope and the RFC 8288 Link header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from './problem.ts';

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
        throw new ProblemError('REQUEST_PARAMETER_INVALID', 'sort has an empty key.', { errors: [{ parameter: 'sort', detail: 'sort has an empty key' }] });
      }
      if (!allowed.includes(field)) {
        const detail = `"${field}" is not a sort key of this collection; use ${allowed.join(', ')}`;
        throw new ProblemError('QUERY_UNKNOWN_SORT_KEY', detail, { errors: [{ parameter: 'sort', detail }] });
      }
      if (keys.some((k) => k.field === field)) {
        const detail = `"${field}" appears more than once in sort`;
        throw new ProblemError('QUERY_DUPLICATE_SORT_KEY', detail, { errors: [{ parameter: 'sort', detail }] });
      }
      keys.push({ field, descending });
    }
  }
  const result = keys.length > 0 ? keys : [...fallback];
  if (!result.some((k) => k.field === 'id') && allowed.includes('id' as F)) result.push({ field: 'id' as F, descending: result[0]?.descending ?? false });
  return result;
}

export interface Page {
  page: number;
  pageSize: number;
}

export interface Collection<T> {
  data: T[];
  meta: { total: number; page: number; pageSize: number; totalPages: number };
}

export function toCollection<T>(data: T[], total: number, page: Page): Collection<T> {
  return { data, meta: { total, page: page.page, pageSize: page.pageSize, totalPages: Math.ceil(total / page.pageSize) } };
}

/** Link: first, prev, next, last (RFC 8288), keeping every other query parameter as sent. */
export function setPageLinks(request: FastifyRequest, reply: FastifyReply, collection: Collection<unknown>): void {
  const { page, totalPages } = collection.meta;
  const url = new URL(request.url, request.server.config.publicUrl);
  const base = request.server.config.publicUrl + url.pathname;
  const link = (n: number, rel: string) => {
    url.searchParams.set('page', String(n));
    return `<${base}?${url.searchParams.toString()}>; rel="${rel}"`;
  };
  const last = Math.max(totalPages, 1);
  const links = [link(1, 'first')];
  if (page > 1) links.push(link(Math.min(page - 1, last), 'prev'));
  if (page < totalPages) links.push(link(page + 1, 'next'));
  links.push(link(last, 'last'));
  reply.header('link', links.join(', '));
}
