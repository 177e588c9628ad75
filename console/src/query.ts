// A collection page's state in the URL's query (so that a view can be linked): reading its
// numbers, moving to another page by cursor with the filters and sort kept, and the filter form
// that follows the query (the back button's too).
import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { formatSort, type SortKey } from './sort.ts';

/** A positive whole number from the query, or undefined. */
export const positiveInteger = (value: string | null) => (value && /^\d+$/.test(value) ? Number(value) : undefined);

/** The query of the page before or after a cursor (docs/api.md, "Paging"): the other parameters kept. */
export function withCursor(search: URLSearchParams, cursor: { after?: string; before?: string }): URLSearchParams {
  const next = new URLSearchParams(search);
  next.delete('after');
  next.delete('before');
  if (cursor.after) next.set('after', cursor.after);
  if (cursor.before) next.set('before', cursor.before);
  return next;
}

/** What a collection page asks the API for: its filters, the sort as the parameter spells it, and the cursor. */
export function collectionQuery<F extends { sort: SortKey[] }>(filters: F, search: URLSearchParams) {
  return {
    ...filters,
    sort: formatSort(filters.sort) || undefined,
    after: search.get('after') ?? undefined,
    before: search.get('before') ?? undefined,
  };
}

/** The query a filter form makes: its non-empty fields, and no cursor (a new filter starts at page 1). */
export function filterQuery(fields: Record<string, string | boolean>): URLSearchParams {
  const next = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'boolean' ? value : value.trim()) next.set(name, String(value).trim());
  }
  return next;
}

/**
 * The page's query, and a filter form's fields read from it whenever it changes (the back and
 * forward buttons, a link), so the controls always show the view the page lists; in between, what
 * the person types, kept with the query it was typed under. The fields are derived while
 * rendering, so no frame shows the old fields beside the new query. An edit goes when the page
 * moves to another query itself (setQuery), or once another query is committed: a navigation is
 * rendered as a transition, which a quick back button can supersede before it commits, and an edit
 * kept would then come back with the query it was typed under.
 */
export function useQueryForm<T>(read: (search: URLSearchParams) => T) {
  const [search, setSearch] = useSearchParams();
  const query = search.toString();
  const [edit, setEdit] = useState<{ query: string; form: T }>();
  useEffect(() => setEdit((kept) => (kept && kept.query !== query ? undefined : kept)), [query]);
  return {
    search,
    form: edit && edit.query === query ? edit.form : read(search),
    setForm: (form: T) => setEdit({ query, form }),
    setQuery(next: URLSearchParams) {
      setEdit(undefined);
      setSearch(next);
    },
  };
}
