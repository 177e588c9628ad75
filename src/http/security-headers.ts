// Headers on every response against content sniffing and framing. An HTML page that needs more
// than nothing sets its own Content-Security-Policy first (the sign-in pages, Swagger UI at /docs);
// everything else (JSON, the problem type pages) loads nothing and may be framed by no one.
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';

export const DEFAULT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Sets the headers a response does not set itself. */
export function setSecurityHeaders(reply: FastifyReply): void {
  if (!reply.hasHeader('x-content-type-options')) reply.header('x-content-type-options', 'nosniff');
  if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', DEFAULT_CSP);
  if (!reply.hasHeader('x-frame-options')) reply.header('x-frame-options', 'DENY');
}

async function securityHeaders(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', function sendSecurityHeaders(_request, reply, payload, done) {
    // A 304 has no content to sniff or frame, and carries only what updates a cache's stored
    // response (RFC 9110 §15.4.5): the stored 200 keeps its own headers.
    if (reply.statusCode !== 304) setSecurityHeaders(reply);
    done(null, payload);
  });
}

export const securityHeadersPlugin = fp(securityHeaders, { name: 'orderpay-security-headers', fastify: '5.x' });
