// The ORDER BY and LIMIT/OFFSET of a page query: the page is read in a LATERAL subquery beside its
// total (one statement, one snapshot), then ordered again outside by the same keys.
import type { SortKey } from '../http/collection.ts';

export interface PageClauses {
  /** ORDER BY keys inside the subquery, on the table's columns. */
  innerOrder: string;
  /** ORDER BY keys outside, on the subquery's camelCase output columns under `alias`. */
  outerOrder: string;
  limit: string;
  offset: string;
}

export function pageClauses<F extends string>(
  sort: SortKey<F>[],
  columns: Record<F, string>,
  alias: string,
  page: { page: number; pageSize: number },
  params: unknown[],
): PageClauses {
  const direction = (k: SortKey<F>) => (k.descending ? 'DESC' : 'ASC');
  return {
    innerOrder: sort.map((k) => `${columns[k.field]} ${direction(k)}`).join(', '),
    outerOrder: sort.map((k) => `${alias}."${k.field}" ${direction(k)}`).join(', '),
    limit: `$${params.push(page.pageSize)}`,
    offset: `$${params.push((page.page - 1) * page.pageSize)}`,
  };
}
