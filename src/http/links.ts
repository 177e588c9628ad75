// RFC 8288 Link header of a collection page: first, prev, next, last.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Collection } from '../core/paging.ts';

/** Links keep every other query parameter as sent, under the public URL. */
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
  // A deprecated version's Link to its migration guide (set when the version was resolved) stays, after the page's.
  const earlier = reply.getHeader('link');
  if (earlier !== undefined) links.push(String(earlier));
  reply.header('link', links.join(', '));
}
