// The login and consent steps of the authorization code flow (oidc-provider "interactions"):
// GET shows the page the provider asks for; POSTs finish the step and send the browser back.
// CSRF: the interaction cookie is SameSite=Lax (never sent on a cross-site POST), and every form
// carries an HMAC of the interaction id under a server key, checked before anything else.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import type Provider from 'oidc-provider';
import type { Db } from '../db/db.ts';
import { STAFF_ONLY_SCOPES } from '../core/scopes.ts';
import { findUserCredentials } from '../users/users.store.ts';
import { findAccountRow } from './account.ts';
import { consentPage, layout, loginPage, PAGE_HEADERS, escapeHtml } from './pages.ts';
import { DUMMY_PASSWORD_HASH, verifyPassword } from './passwords.ts';
import { countSignInAttempt } from './rate-limits.ts';

interface InteractionOptions {
  /** The provider of the moment (it is rebuilt when signing keys rotate). */
  provider: () => Provider;
  db: Db;
  csrfKey: string;
  /** Clock of the sign-in limits (tests freeze it inside one window). */
  now: () => Date;
}

type Form = Record<string, string | undefined>;

function csrfToken(key: string, uid: string): string {
  return createHmac('sha256', key).update(`interaction:${uid}`).digest('base64url');
}

function validCsrf(key: string, uid: string, sent: unknown): boolean {
  const expected = Buffer.from(csrfToken(key, uid));
  const actual = Buffer.from(typeof sent === 'string' ? sent : '');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}

function sendErrorPage(reply: FastifyReply, status: number, message: string): FastifyReply {
  return sendPage(
    reply,
    status,
    layout(
      'Error',
      `<h1>Sign-in could not continue</h1><p class="error" role="alert">${escapeHtml(message)}</p>
<p>Go back to the application and start again.</p>`,
    ),
  );
}

export async function interactionRoutes(
  app: FastifyInstance,
  { provider: currentProvider, db, csrfKey, now }: InteractionOptions,
): Promise<void> {
  // Forms post application/x-www-form-urlencoded; only these routes accept it.
  await app.register(formbody);

  async function loadInteraction(request: FastifyRequest, reply: FastifyReply) {
    try {
      return await currentProvider().interactionDetails(request.raw, reply.raw);
    } catch {
      // Expired, finished, or another browser's interaction (its cookie is missing).
      sendErrorPage(reply, 400, 'This sign-in request has expired or was already used.');
      return undefined;
    }
  }

  async function clientName(clientId: string): Promise<string> {
    const client = await currentProvider().Client.find(clientId);
    return client?.clientName ?? clientId;
  }

  /**
   * Scopes the consent adds: what the provider says is missing, less staff-only scopes for
   * customers. Those are `withheld`: the provider lists API scopes among the OIDC ones too, and
   * keeps asking for any scope the grant has neither granted nor rejected.
   */
  async function consentScopes(details: Awaited<ReturnType<Provider['interactionDetails']>>) {
    const prompt = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    const account = details.session?.accountId ? await findAccountRow(db, details.session.accountId) : undefined;
    const staff = account?.role === 'staff';
    const allowed = (scope: string) => staff || !STAFF_ONLY_SCOPES.has(scope);
    const missingOidc = prompt.missingOIDCScope ?? [];
    const missingResources = Object.entries(prompt.missingResourceScopes ?? {});
    return {
      oidc: missingOidc.filter(allowed),
      resources: Object.fromEntries(missingResources.map(([resource, scopes]) => [resource, scopes.filter(allowed)])),
      withheld: {
        oidc: missingOidc.filter((s) => !allowed(s)),
        resources: Object.fromEntries(missingResources.map(([resource, scopes]) => [resource, scopes.filter((s) => !allowed(s))])),
      },
    };
  }

  app.get<{ Params: { uid: string } }>(
    '/oauth/interaction/:uid',
    { schema: { hide: true } },
    async function showInteraction(request, reply) {
      const details = await loadInteraction(request, reply);
      if (!details) return reply;
      const csrf = csrfToken(csrfKey, details.uid);
      const name = await clientName(String(details.params.client_id));
      const base = `/oauth/interaction/${details.uid}`;
      if (details.prompt.name === 'login') {
        return sendPage(
          reply,
          200,
          loginPage({
            action: `${base}/login`,
            csrf,
            clientName: name,
            email: typeof details.params.login_hint === 'string' ? details.params.login_hint : undefined,
          }),
        );
      }
      const scopes = await consentScopes(details);
      const listed = [...new Set([...scopes.oidc, ...Object.values(scopes.resources).flat()])];
      return sendPage(
        reply,
        200,
        consentPage({ action: `${base}/confirm`, abort: `${base}/abort`, csrf, clientName: name, scopes: listed }),
      );
    },
  );

  app.post<{ Params: { uid: string }; Body: Form }>(
    '/oauth/interaction/:uid/login',
    { schema: { hide: true } },
    async function submitLogin(request, reply) {
      const details = await loadInteraction(request, reply);
      if (!details) return reply;
      if (!validCsrf(csrfKey, details.uid, request.body?.csrf))
        return sendErrorPage(reply, 403, 'The form could not be verified. Reload the page and try again.');
      const email = String(request.body?.email ?? '').trim();
      const password = String(request.body?.password ?? '');
      // The attempt is counted before the password is checked, so parallel guesses cannot all pass
      // the limit while the first ones are still hashing; a success gives its count back.
      const attempt = await countSignInAttempt(db, email, request.ip, now());
      if (attempt.blocked) {
        const name = await clientName(String(details.params.client_id));
        reply.header('retry-after', String(attempt.blocked.resetSeconds));
        return sendPage(
          reply,
          429,
          loginPage({
            action: `/oauth/interaction/${details.uid}/login`,
            csrf: csrfToken(csrfKey, details.uid),
            clientName: name,
            email,
            error: `Too many failed sign-in attempts. Try again in ${Math.ceil(attempt.blocked.resetSeconds / 60)} minutes.`,
          }),
        );
      }
      const user = email ? await findUserCredentials(db, email) : undefined;
      // An unknown email costs the same scrypt work and gets the same answer as a wrong password.
      const valid = await verifyPassword(user?.passwordHash ?? DUMMY_PASSWORD_HASH, password);
      if (!user?.passwordHash || !valid) {
        const name = await clientName(String(details.params.client_id));
        return sendPage(
          reply,
          401,
          loginPage({
            action: `/oauth/interaction/${details.uid}/login`,
            csrf: csrfToken(csrfKey, details.uid),
            clientName: name,
            email,
            error: 'The email or password is not correct.',
          }),
        );
      }
      await attempt.succeeded();
      reply.hijack();
      await currentProvider().interactionFinished(
        request.raw,
        reply.raw,
        { login: { accountId: String(user.id) } },
        { mergeWithLastSubmission: false },
      );
    },
  );

  app.post<{ Params: { uid: string }; Body: Form }>(
    '/oauth/interaction/:uid/confirm',
    { schema: { hide: true } },
    async function submitConsent(request, reply) {
      const details = await loadInteraction(request, reply);
      if (!details) return reply;
      if (!validCsrf(csrfKey, details.uid, request.body?.csrf))
        return sendErrorPage(reply, 403, 'The form could not be verified. Reload the page and try again.');
      if (details.prompt.name !== 'consent' || !details.session?.accountId)
        return sendErrorPage(reply, 400, 'There is nothing to confirm.');
      const provider = currentProvider();
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session.accountId, clientId: String(details.params.client_id) });
      if (!grant) return sendErrorPage(reply, 400, 'This sign-in request has expired.');
      const scopes = await consentScopes(details);
      if (scopes.oidc.length) grant.addOIDCScope(scopes.oidc.join(' '));
      const claims = (details.prompt.details as { missingOIDCClaims?: string[] }).missingOIDCClaims;
      if (claims?.length) grant.addOIDCClaims(claims);
      for (const [resource, granted] of Object.entries(scopes.resources))
        if (granted.length) grant.addResourceScope(resource, granted.join(' '));
      // Rejected, not just left out: otherwise the provider asks for consent again, forever.
      if (scopes.withheld.oidc.length) grant.rejectOIDCScope(scopes.withheld.oidc.join(' '));
      for (const [resource, withheld] of Object.entries(scopes.withheld.resources))
        if (withheld.length) grant.rejectResourceScope(resource, withheld.join(' '));
      const grantId = await grant.save();
      reply.hijack();
      await provider.interactionFinished(request.raw, reply.raw, { consent: { grantId } }, { mergeWithLastSubmission: true });
    },
  );

  app.post<{ Params: { uid: string }; Body: Form }>(
    '/oauth/interaction/:uid/abort',
    { schema: { hide: true } },
    async function denyConsent(request, reply) {
      const details = await loadInteraction(request, reply);
      if (!details) return reply;
      if (!validCsrf(csrfKey, details.uid, request.body?.csrf))
        return sendErrorPage(reply, 403, 'The form could not be verified. Reload the page and try again.');
      reply.hijack();
      await currentProvider().interactionFinished(
        request.raw,
        reply.raw,
        { error: 'access_denied', error_description: 'The user denied access.' },
        { mergeWithLastSubmission: false },
      );
    },
  );
}
