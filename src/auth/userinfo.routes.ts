// OpenID Connect Core §5.3, the UserInfo endpoint, at the URL discovery advertises
// (src/auth/provider.ts). orderpay's own route: every access token is an RFC 9068 JWT for the API,
// and oidc-provider's userinfo takes only tokens without an audience
// (docs/decisions/0110-userinfo-for-api-tokens.md). GET or POST, the token in the Authorization
// header (RFC 6750 §2.1) or, on a POST, in the form body (§2.2); never in the query (RFC 9700
// §2.5). A DPoP-bound token as at the API: `Authorization: DPoP` and a proof for this URL (RFC 9449
// §7). Refusals are RFC 6750 §3 (or RFC 9449 §7.1) challenges with RFC 6749's JSON error body, like
// the rest of /oauth.
import formbody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import {
  challengeFor,
  dpopUnavailable,
  hasAccessTokenInQuery,
  malformedCredentials,
  readAuthorization,
  type TokenScheme,
} from '../http/authenticate.ts';
import { type DpopCheck, refuseBoundBearer, TokenBindingRefusal } from '../http/token-binding.ts';
import type { TokenVerifier } from '../http/token-verifier.ts';
import { isClientOrigin } from './client-origins.ts';
import { USERINFO_PATH } from './oauth-paths.ts';
import { findUserinfo } from './userinfo.service.ts';
import { UserinfoClaims } from './userinfo.schemas.ts';
import { UserinfoRefusal } from './userinfo.rules.ts';

interface UserinfoOptions {
  config: Config;
  db: Db;
  /** Judges orderpay's access tokens (src/auth/own-token-verifier.ts). */
  verifier: TokenVerifier;
  /** The DPoP proofs' checks, the API's (src/http/token-binding.ts). */
  dpop: DpopCheck;
  /** A client's redirect URIs, where its pages run; empty for a client the server does not know. */
  findRedirectUris(clientId: string): Promise<readonly string[]>;
}

const FORM_CONTENT_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;

/** RFC 6750 §2.2: the form-encoded body's access_token of a POST; several of them are refused. */
function formBodyToken(request: FastifyRequest): string | undefined {
  if (request.method !== 'POST' || !FORM_CONTENT_TYPE.test(request.headers['content-type'] ?? '')) return undefined;
  const token = (request.body as Record<string, unknown> | undefined)?.access_token;
  if (Array.isArray(token)) throw new UserinfoRefusal('invalid_request', 'several access_token parameters');
  return typeof token === 'string' && token !== '' ? token : undefined;
}

/** The access token of the request and its scheme, sent one way only (RFC 6750 §2: "MUST NOT use more than one method"). */
function readAccessToken(request: FastifyRequest): { scheme: TokenScheme; token: string } {
  if (hasAccessTokenInQuery(request.url)) throw new UserinfoRefusal('invalid_request', 'token in query string');
  const bearer = readAuthorization(request);
  if (bearer.kind === 'several') throw new UserinfoRefusal('invalid_request', 'several Authorization headers');
  const inBody = formBodyToken(request);
  if (inBody !== undefined && bearer.kind !== 'absent') {
    throw new UserinfoRefusal('invalid_request', 'token in both the Authorization header and the body');
  }
  if (inBody !== undefined) return { scheme: 'Bearer', token: inBody };
  if (bearer.kind === 'absent') throw new UserinfoRefusal('invalid_token', 'no access token provided', { challengeWithoutError: true });
  if (bearer.kind === 'malformed')
    throw new UserinfoRefusal('invalid_token', malformedCredentials(bearer.scheme), { scheme: bearer.scheme });
  return bearer;
}

/** The token's binding against the scheme it came under, as the API judges it; a refusal in the endpoint's words. */
function bindingConfirmation(request: FastifyRequest, dpop: DpopCheck, { scheme, token }: { scheme: TokenScheme; token: string }) {
  return async function confirmUserinfoBinding(jkt: string | undefined): Promise<void> {
    try {
      if (scheme === 'Bearer') refuseBoundBearer(jkt);
      else await dpop.confirm(request, token, jkt);
    } catch (error) {
      if (error instanceof TokenBindingRefusal) throw new UserinfoRefusal(error.error, error.description, { scheme: 'DPoP' });
      throw dpopUnavailable(error, request);
    }
  };
}

/**
 * Serialized here: a response schema for these statuses would also be applied to the edge's
 * problems (an unparsable body's 400) on this route.
 */
function sendRefusal(reply: FastifyReply, refusal: UserinfoRefusal, scheme: TokenScheme): FastifyReply {
  const body = { error: refusal.error, error_description: refusal.description, ...(refusal.scope ? { scope: refusal.scope } : {}) };
  return reply
    .code(refusal.status)
    .header('www-authenticate', challengeFor(scheme, refusal.challengeWithoutError ? {} : body))
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(body));
}

export async function userinfoRoutes(
  parent: FastifyInstance,
  { config, db, verifier, dpop, findRedirectUris }: UserinfoOptions,
): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  // RFC 6750 §2.2 bodies; only this route (and the sign-in forms) parse them.
  await app.register(formbody);

  /**
   * CORS as the provider's endpoints have it (src/auth/client-origins.ts): @fastify/cors answers
   * the allow-list (src/http/cors.ts); an origin that is not the token's client's is refused, its
   * answer unreadable.
   */
  async function refuseOtherClientsOrigin(request: FastifyRequest, reply: FastifyReply, clientId: string): Promise<void> {
    const origin = request.headers.origin;
    if (origin === undefined || isClientOrigin(config, origin, await findRedirectUris(clientId))) return;
    reply.removeHeader('access-control-allow-origin');
    reply.removeHeader('access-control-expose-headers');
    throw new UserinfoRefusal('invalid_request', "the request's Origin is not one of this client's");
  }

  app.route({
    method: ['GET', 'POST'],
    url: USERINFO_PATH,
    schema: { hide: true, response: { 200: UserinfoClaims } },
    handler: async function answerUserinfo(request, reply) {
      let scheme: TokenScheme = 'Bearer';
      try {
        const credentials = readAccessToken(request);
        scheme = credentials.scheme;
        const userinfo = await findUserinfo(db, verifier, credentials.token, bindingConfirmation(request, dpop, credentials));
        await refuseOtherClientsOrigin(request, reply, userinfo.clientId);
        return reply.header('cache-control', 'no-store').send(userinfo.claims);
      } catch (error) {
        // Under the scheme the token came in, or DPoP's for a binding refused (RFC 9449 §7.1).
        if (error instanceof UserinfoRefusal) return sendRefusal(reply, error, error.scheme === 'DPoP' ? 'DPoP' : scheme);
        throw error;
      }
    },
  });
}
