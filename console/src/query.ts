// A collection page's state in the URL's query (so that a view can be linked): reading its
// numbers, and moving to another page by cursor with the filters and sort kept.

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

/** The query a filter form makes: its non-empty fields, and no cursor (a new filter starts at page 1). */
export function filterQuery(fields: Record<string, string | boolean>): URLSearchParams {
  const next = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'boolean' ? value : value.trim()) next.set(name, String(value).trim());
  }
  return next;
}
