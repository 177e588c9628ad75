// The login and consent steps of the authorization code flow (oidc-provider "interactions"):
// GET shows the page the provider asks for; POSTs finish the step and send the browser back.
// CSRF: the interaction cookie is SameSite=Lax (never sent on a cross-site POST), and every form
// carries an HMAC of the interaction id under a server key, checked before anything else.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import type { Interaction } from 'oidc-provider';
import type Provider from 'oidc-provider';
import type { Db } from '../db/db.ts';
import type { Counters } from '../http/rate-limit/counters.ts';
import { findConsentScopes, listConsentScopes, recordConsent } from './consent.ts';
import { consentPage, layout, loginPage, PAGE_HEADERS, escapeHtml } from './pages.ts';
import { type SignInRefusal, signIn } from './sign-in.service.ts';

interface InteractionOptions {
  /** The provider of the moment (it is rebuilt when signing keys rotate). */
  provider: () => Provider;
  db: Db;
  csrfKey: string;
  /** Where the sign-in limits are counted. */
  counters: Counters;
}

type Form = Record<string, string | undefined>;

const REFUSAL_STATUS: Record<SignInRefusal['kind'], number> = { refused: 401, blocked: 429, unavailable: 503 };

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
  { provider: currentProvider, db, csrfKey, counters }: InteractionOptions,
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
   * The login form again, with why the last try did not sign in: 401, 429 when blocked (RFC 6585
   * §4), 503 while the attempt cannot be counted; both with Retry-After.
   */
  async function sendLoginRefusal(reply: FastifyReply, details: Interaction, email: string, refusal: SignInRefusal) {
    const name = await clientName(String(details.params.client_id));
    if (refusal.kind !== 'refused') reply.header('retry-after', String(refusal.retryAfterSeconds));
    return sendPage(
      reply,
      REFUSAL_STATUS[refusal.kind],
      loginPage({
        action: `/oauth/interaction/${details.uid}/login`,
        csrf: csrfToken(csrfKey, details.uid),
        clientName: name,
        email,
        error:
          refusal.kind === 'blocked'
            ? `Too many failed sign-in attempts. Try again in ${Math.ceil(refusal.retryAfterSeconds / 60)} minutes.`
            : refusal.kind === 'unavailable'
              ? 'Signing in is unavailable for a moment. Try again shortly.'
              : // One answer for a wrong password, an unknown email and a disabled account (sign-in.service.ts).
                'The email or password is not correct, or the account cannot sign in.',
      }),
    );
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
      const scopes = listConsentScopes(await findConsentScopes(db, details));
      return sendPage(reply, 200, consentPage({ action: `${base}/confirm`, abort: `${base}/abort`, csrf, clientName: name, scopes }));
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
      const result = await signIn(db, counters, { email, password, ip: request.ip });
      if (result.kind !== 'signed-in') {
        if (result.kind === 'unavailable') request.log.warn({ err: result.cause }, 'sign-in: the attempt could not be counted; refused');
        app.businessMetrics.countSignInFailure(result.kind);
        return sendLoginRefusal(reply, details, email, result);
      }
      reply.hijack();
      await currentProvider().interactionFinished(
        request.raw,
        reply.raw,
        { login: { accountId: result.accountId } },
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
      recordConsent(grant, details, await findConsentScopes(db, details));
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
