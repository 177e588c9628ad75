// Cursor paging (docs/api.md, "Paging"): the previous page is `before` the first element's cursor,
// the next `after` the last's; the exact total beside them.

export interface PageMeta {
  total: number;
  page: number;
  pageSize: number;
  totalPages: number;
  nextCursor: string | null;
  prevCursor: string | null;
}

export function Pager({
  meta,
  label,
  onPage,
}: {
  meta: PageMeta;
  label: string;
  onPage: (cursor: { after?: string; before?: string }) => void;
}) {
  return (
    <nav aria-label={`${label} pages`} className="pager">
      <button type="button" className="secondary" disabled={meta.prevCursor === null} onClick={() => onPage({ before: meta.prevCursor! })}>
        Previous page
      </button>
      <span>
        Page {Math.min(meta.page, Math.max(meta.totalPages, 1))} of {Math.max(meta.totalPages, 1)}
      </span>
      <button type="button" className="secondary" disabled={meta.nextCursor === null} onClick={() => onPage({ after: meta.nextCursor! })}>
        Next page
      </button>
    </nav>
  );
}
