// offline_access ("stay signed in") reaches the consent page. OpenID Connect Core §11 has the
// server ignore offline_access unless prompt includes consent, and oidc-provider drops it silently
// (lib/actions/authorization/scopes.js): the user was never asked, and the grant ended with the
// session. An authorization request asking for it without prompt=consent gets consent added, so
// the user is asked each time, as §11 requires.
import type { KoaContextWithOIDC } from 'oidc-provider';

/**
 * The query with consent added to prompt, or undefined to leave it as it is: no offline_access,
 * consent already there, prompt=none (which must not show a page; §11 then drops the scope), or
 * a parameter sent twice, which the provider refuses as it stands.
 */
function withConsentPrompt(querystring: string): string | undefined {
  const query = new URLSearchParams(querystring);
  const scopes = query.getAll('scope');
  const prompts = query.getAll('prompt');
  if (scopes.length !== 1 || prompts.length > 1 || !scopes[0]!.split(' ').includes('offline_access')) return undefined;
  const prompt = (prompts[0] ?? '').split(' ').filter(Boolean);
  if (prompt.includes('consent') || prompt.includes('none')) return undefined;
  query.set('prompt', [...prompt, 'consent'].join(' '));
  return query.toString();
}

/**
 * Sets the request's query, in originalUrl too: oidc-provider finds its mount path (/oauth) as
 * what originalUrl has before url (lib/helpers/oidc_context.js), and so builds the URLs it sends.
 */
function replaceQuery(ctx: KoaContextWithOIDC, querystring: string): void {
  const req = ctx.req as typeof ctx.req & { originalUrl?: string };
  const before = req.url ?? '';
  ctx.querystring = querystring;
  if (req.originalUrl?.endsWith(before)) req.originalUrl = req.originalUrl.slice(0, req.originalUrl.length - before.length) + req.url;
}

/** Koa middleware for the provider (provider.use), ahead of its authorization endpoint. */
export function askConsentForOfflineAccess(authorizationPath: string) {
  return async function askConsentForOfflineAccessScope(ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<void> {
    const rewritten = ctx.method === 'GET' && ctx.path === authorizationPath ? withConsentPrompt(ctx.querystring) : undefined;
    if (rewritten !== undefined) replaceQuery(ctx, rewritten);
    await next();
  };
}
