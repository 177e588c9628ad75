// Server-rendered pages of the authorization server: login, consent, errors, logout. Plain HTML
// forms that work without JavaScript; every value is escaped; the one inline stylesheet is
// allowed by its hash in the Content-Security-Policy.
import { createHash } from 'node:crypto';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { CLIENT_SCOPES } from './clients.rules.ts';

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f5f7;color:#1d1d1f}
main{max-width:26rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:12px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin-top:0}label{display:block;margin:1rem 0 .25rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.6rem;font-size:1rem;border:1px solid #888;border-radius:6px}
button{margin-top:1.25rem;padding:.6rem 1.2rem;font-size:1rem;border-radius:6px;border:1px solid #0057b8;cursor:pointer}
.primary{background:#0057b8;color:#fff}.secondary{background:#fff;color:#0057b8}
.error{color:#b00020;font-weight:600}ul{padding-left:1.2rem}.actions{display:flex;gap:.75rem}`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** Headers of every page: no caching, no framing, nothing but our own stylesheet. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; frame-ancestors 'none'; base-uri 'none'`,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/**
 * Headers for whatever the provider renders itself: the self-submitting forms of /oauth/logout
 * without a session and of response_mode=form_post. Set before the provider runs, because
 * oidc-provider allows the form's one inline script by adding its hash to an existing
 * script-src; no form-action, as such a form (and the redirect after it) goes to a client's origin.
 * Our own pages replace them with PAGE_HEADERS.
 */
const PROVIDER_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** Koa middleware of the provider: PROVIDER_PAGE_HEADERS on every response it writes (not on one it leaves to Fastify). */
export async function guardProviderPages(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
  for (const [name, value] of Object.entries(PROVIDER_PAGE_HEADERS)) ctx.set(name, value);
  await next();
  if (ctx.respond === false) for (const name of Object.keys(PROVIDER_PAGE_HEADERS)) ctx.remove(name);
}

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · orderpay</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** Plain-language descriptions of the scopes, for the consent page: one for every scope a client may ask for. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<(typeof CLIENT_SCOPES)[number], string>> = {
  openid: 'Confirm who you are',
  profile: 'See your name',
  email: 'See your email address',
  offline_access: 'Stay signed in: keep access after you sign out of orderpay',
  'orders:read': 'See your orders and their items',
  'orders:write': 'Place, change and cancel orders for you',
  'products:write': 'Change the product catalogue',
  'payments:read': 'See your payments',
  'payments:write': 'Make payments for you (and refunds, if you are staff)',
  'payments:refund': 'Refund payments, and cancel paid orders (which refunds them)',
  'events:read': 'See the event log: every change to orders, payments and refunds, and who made it',
  'webhooks:read': 'See the webhook endpoints and their delivery logs',
  'webhooks:write': 'Change, test and turn off webhook endpoints, and rotate their secrets',
};

export function loginPage(options: { action: string; csrf: string; clientName: string; email?: string; error?: string }): string {
  const error = options.error ? `<p class="error" role="alert">${escapeHtml(options.error)}</p>` : '';
  return layout(
    'Sign in',
    `<h1>Sign in to continue to ${escapeHtml(options.clientName)}</h1>${error}
<form method="post" action="${escapeHtml(options.action)}" autocomplete="on">
<input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
<label for="email">Email</label><input id="email" name="email" type="email" required autocomplete="username" value="${escapeHtml(options.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" required autocomplete="current-password">
<button class="primary" type="submit">Sign in</button></form>`,
  );
}

export function consentPage(options: { action: string; abort: string; csrf: string; clientName: string; scopes: string[] }): string {
  const items = options.scopes
    .map((s) => `<li>${escapeHtml(SCOPE_DESCRIPTIONS[s as keyof typeof SCOPE_DESCRIPTIONS] ?? s)} <small>(${escapeHtml(s)})</small></li>`)
    .join('');
  return layout(
    'Allow access',
    `<h1>${escapeHtml(options.clientName)} would like to</h1><ul>${items}</ul>
<div class="actions"><form method="post" action="${escapeHtml(options.action)}"><input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
<button class="primary" type="submit">Allow</button></form>
<form method="post" action="${escapeHtml(options.abort)}"><input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
<button class="secondary" type="submit">Deny</button></form></div>`,
  );
}

function setPageHeaders(ctx: KoaContextWithOIDC): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
}

/** oidc-provider renderError: errors that cannot go back to the client (e.g. a wrong redirect_uri). */
export async function renderErrorPage(ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }): Promise<void> {
  setPageHeaders(ctx);
  ctx.body = layout(
    'Error',
    `<h1>Something went wrong</h1><p class="error" role="alert">${escapeHtml(out.error)}</p>
<p>${escapeHtml(out.error_description ?? '')}</p>`,
  );
}

export async function renderLogoutPage(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  setPageHeaders(ctx);
  // form is oidc-provider's own hidden form (with its xsrf token); we add the buttons.
  ctx.body = layout(
    'Sign out',
    `${form}<h1>Sign out of orderpay?</h1>
<div class="actions"><button class="primary" form="op.logoutForm" type="submit" value="yes" name="logout">Sign out</button>
<button class="secondary" form="op.logoutForm" type="submit">Stay signed in</button></div>`,
  );
}

export async function renderLoggedOutPage(ctx: KoaContextWithOIDC): Promise<void> {
  setPageHeaders(ctx);
  ctx.body = layout('Signed out', '<h1>You are signed out</h1>');
}
