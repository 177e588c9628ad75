// Sending a resource or collection: in the request's API version (handlers build the latest),
// content type by negotiated version, caching headers, ETag.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Collection } from '../core/paging.ts';
import { setPageLinks } from './links.ts';
import { representAtVersion } from './version-routes.ts';
import { jsonContentType } from './versioning.ts';

/** Reads revalidate every time (the spec's caching rule 4); only the owner's cache may keep them. */
export const CACHE_READ = 'private, no-cache';
export const CACHE_NONE = 'no-store';

export function sendRepresentation<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  body: T,
  headers: { etag?: string; location?: string; cacheControl?: string } = {},
): FastifyReply {
  reply
    .code(status)
    .type(jsonContentType(request))
    .header('cache-control', headers.cacheControl ?? (request.method === 'GET' ? CACHE_READ : CACHE_NONE));
  if (headers.etag) reply.header('etag', headers.etag);
  if (headers.location) reply.header('location', headers.location);
  return reply.send(representAtVersion(request, status, body));
}

/** A page of records as the collection envelope of their representations, with its Link header. */
export function sendPage<T, U>(
  request: FastifyRequest,
  reply: FastifyReply,
  records: Collection<T>,
  represent: (record: T) => U,
  headers: { cacheControl?: string } = {},
): FastifyReply {
  const collection: Collection<U> = { data: records.data.map(represent), meta: records.meta };
  setPageLinks(request, reply, collection);
  return sendRepresentation(request, reply, 200, collection, headers);
}

/** 304 Not Modified: no body, with the headers a 200 would have carried (RFC 9110 §15.4.5). */
export function sendNotModified(reply: FastifyReply, etag: string, cacheControl = CACHE_READ): FastifyReply {
  return reply.code(304).header('etag', etag).header('cache-control', cacheControl).send();
}

/** Absolute URL of a resource, under the same version prefix the request used. */
export function resourceUrl(request: FastifyRequest, path: string): string {
  return `${request.server.config.publicUrl}${request.apiPathPrefix}${path}`;
}
