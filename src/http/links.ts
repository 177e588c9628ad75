// RFC 8288 Link header of a collection page: first and last by page number; next and prev by
// cursor (after=, before=), so that following them costs the same however deep the page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Collection } from '../core/paging.ts';

/** How a page is named in a link: one of these, never two. */
const PAGE_PARAMETERS = new Set(['page', 'after', 'before']);

/** Links keep every other query parameter as sent, under the public URL. */
export function setPageLinks(request: FastifyRequest, reply: FastifyReply, collection: Collection<unknown>): void {
  const { page, totalPages, nextCursor, prevCursor } = collection.meta;
  const { path, query: sent } = splitTarget(request.url);
  const base = request.server.config.publicUrl + path;
  // The query's pairs, form-encoded once ("name=value"; a name encodes to page, after or before only if it is one).
  const encoded = sent ? new URLSearchParams(sent).toString() : '';
  const pairs = encoded ? encoded.split('&') : [];
  // As URLSearchParams' set would: the page's parameter replaces the first of its name, in its place, or comes last.
  const link = (rel: string, name: 'page' | 'after' | 'before', value: string) => {
    const parameter = `${name}=${formEncoded(value)}`;
    const query: string[] = [];
    let placed = false;
    for (const pair of pairs) {
      const key = pair.slice(0, pair.indexOf('='));
      if (key === name && !placed) query.push(parameter);
      placed ||= key === name;
      if (!PAGE_PARAMETERS.has(key)) query.push(pair);
    }
    if (!placed) query.push(parameter);
    return `<${base}?${query.join('&')}>; rel="${rel}"`;
  };
  const last = Math.max(totalPages, 1);
  const links = [link('first', 'page', '1')];
  // A page with no element has no cursor: its prev is the last page, by number.
  if (prevCursor !== null) links.push(link('prev', 'before', prevCursor));
  else if (page > 1) links.push(link('prev', 'page', String(Math.min(page - 1, last))));
  if (nextCursor !== null) links.push(link('next', 'after', nextCursor));
  links.push(link('last', 'page', String(last)));
  // A deprecated version's Link to its migration guide (set when the version was resolved) stays, after the page's.
  const earlier = reply.getHeader('link');
  if (earlier !== undefined) links.push(String(earlier));
  reply.header('link', links.join(', '));
}

/**
 * A request target's path and query, as a URL parser reads them for a path a route matched (which
 * has nothing to normalise), without one: the fragment is not part of either.
 */
function splitTarget(target: string): { path: string; query: string } {
  const fragment = target.indexOf('#');
  const end = fragment < 0 ? target.length : fragment;
  const queryAt = target.indexOf('?');
  if (queryAt < 0 || queryAt > end) return { path: target.slice(0, end), query: '' };
  return { path: target.slice(0, queryAt), query: target.slice(queryAt + 1, end) };
}

/** A value as application/x-www-form-urlencoded writes it: cursors (base64url and '.') and numbers as they are. */
function formEncoded(value: string): string {
  return /^[\w.-]*$/.test(value) ? value : new URLSearchParams({ v: value }).toString().slice(2);
}
