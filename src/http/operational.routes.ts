// Operational endpoints: liveness, readiness, and the pages behind problem types.
import type { FastifyInstance } from 'fastify';
import { DomainError, ERRORS, problemSlug, type ErrorCode } from '../core/errors.ts';
import { NEVER_SHED } from './load-shedding.ts';
import { sendProblem } from './problem.ts';

/**
 * A probe answers within the connect timeout, whatever holds the query up: behind a pooler a query
 * waits in the pooler's queue while it cannot reach the server, and a balancer's health check
 * needs its answer long before the query timeout.
 */
async function withinReadinessBound(check: Promise<unknown>, boundMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from the database within ${boundMs} ms`)), boundMs);
  });
  try {
    await Promise.race([check, late]);
  } finally {
    clearTimeout(timer);
  }
}

export function registerOperationalRoutes(app: FastifyInstance): void {
  app.get('/livez', { schema: { hide: true }, config: NEVER_SHED }, async function reportLive(_request, reply) {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  app.get('/readyz', { schema: { hide: true } }, async function reportReady(request, reply) {
    reply.header('cache-control', 'no-store');
    try {
      await withinReadinessBound(app.db.query('SELECT 1'), app.config.db.connectTimeoutMs);
      return { status: 'ok' };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed');
      return sendProblem(request, reply, new DomainError('SERVICE_UNAVAILABLE', 'The database is not reachable.'));
    }
  });

  const bySlug = new Map(Object.keys(ERRORS).map((code) => [problemSlug(code as ErrorCode), code as ErrorCode]));
  app.get<{ Params: { slug: string } }>('/problems/:slug', { schema: { hide: true } }, async function describeProblemType(request, reply) {
    const code = bySlug.get(request.params.slug);
    if (!code) throw new DomainError('ROUTE_NOT_FOUND', `No problem type ${request.params.slug}.`);
    const { status, title, description } = ERRORS[code];
    const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
    reply.header('cache-control', 'public, max-age=86400').type('text/html; charset=utf-8');
    return (
      `<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(code)}</title>` +
      `<h1>${escapeHtml(title)}</h1><p><code>${escapeHtml(code)}</code> — HTTP ${status}</p><p>${escapeHtml(description)}</p></html>`
    );
  });
}
