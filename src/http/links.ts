// RFC 8288 Link header of a collection page: first and last by page number; next and prev by
// cursor (after=, before=), so that following them costs the same however deep the page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Collection } from '../core/paging.ts';

/** Links keep every other query parameter as sent, under the public URL. */
export function setPageLinks(request: FastifyRequest, reply: FastifyReply, collection: Collection<unknown>): void {
  const { page, totalPages, nextCursor, prevCursor } = collection.meta;
  const url = new URL(request.url, request.server.config.publicUrl);
  const base = request.server.config.publicUrl + url.pathname;
  const link = (rel: string, name: 'page' | 'after' | 'before', value: string) => {
    const query = new URLSearchParams(url.searchParams);
    // page, after and before exclude each other: the link names its page by one of them.
    for (const other of ['page', 'after', 'before'] as const) if (other !== name) query.delete(other);
    query.set(name, value);
    return `<${base}?${query.toString()}>; rel="${rel}"`;
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
