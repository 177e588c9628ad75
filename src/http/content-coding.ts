// Request bodies are read as sent: no content coding (RFC 9110 §8.4) is undone, so a coded body is
// refused with 415 and `Accept-Encoding: identity` (RFC 7694 §3) rather than parsed as if it were
// plain JSON. Our bodies are at most 64 KiB; decoding them would buy little and open the door to
// decompression bombs (docs/decisions/0020-coded-request-bodies-refused.md).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ProblemError } from './problem.ts';

/** The codings a request's body is said to be in, less identity (which is no coding). */
function contentCodings(request: FastifyRequest): string[] {
  const header = request.headers['content-encoding'];
  if (header === undefined) return [];
  return header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** Whether the request says it has a body (a length above zero, or a chunked one). */
export const hasBody = (request: FastifyRequest) =>
  request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;

async function contentCoding(app: FastifyInstance): Promise<void> {
  app.addHook('preParsing', function refuseCodedBodies(request, _reply, payload, done) {
    // No route (or only the authorization server's middleware): the router's answer (404/405) comes first, whatever the body is.
    if (request.is404 || request.routeOptions.config.servedByMiddleware || !hasBody(request)) return done(null, payload);
    const codings = contentCodings(request);
    if (codings.length === 0) return done(null, payload);
    done(
      new ProblemError(
        'REQUEST_UNSUPPORTED_MEDIA_TYPE',
        `Request bodies are read without a content coding; send this one without Content-Encoding: ${codings.join(', ')}.`,
        { headers: { 'accept-encoding': 'identity' } },
      ),
    );
  });
}

export const contentCodingPlugin = fp(contentCoding, { name: 'orderpay-content-coding', fastify: '5.x' });
