// The authorization server: oidc-provider configured for orderpay (RFC 9700, OAuth 2.1 profile).
// Authorization code + PKCE S256 for every client, rotating refresh tokens in every code exchange,
// client credentials for services, and RFC 9068 JWT access tokens for the orderpay API audience,
// which orderpay's own /oauth/userinfo takes too (src/auth/userinfo.routes.ts). Clients registered
// on the FAPI 2.0 profile get oidc-provider's FAPI 2.0 behaviour and what their metadata requires
// (src/auth/fapi2-profile.ts, docs/fapi.md).
import type { IncomingMessage } from 'node:http';
import Provider, { errors, type Configuration } from 'oidc-provider';
import type { JWK } from 'jose';
import type { Config } from '../config.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import type { Db } from '../db/db.ts';
import { CLIENT_SCOPES, type ClientMetadata } from './clients.rules.ts';
import { clientProfileOf, FAPI2_SIGNING_ALGS, PROFILE_METADATA, withheldMoneyScopes } from './fapi2-profile.ts';
import { accountFinder, findAccountRow } from './account.ts';
import { isClientOrigin } from './client-origins.ts';
import { isFromTheFuture, MAX_FUTURE_SECONDS } from './future-jwts.ts';
import { isLoopbackHost } from '../core/loopback.ts';
import { introspectJwtAccessTokens, mayIntrospect } from './jwt-introspection.ts';
import { USERINFO_PATH } from './oauth-paths.ts';
import { askConsentForOfflineAccess } from './offline-access.ts';
import { createOidcAdapter, digestOidcIdentifier } from './oidc.adapter.ts';
import { createOwnTokenVerifier } from './own-token-verifier.ts';
import { guardProviderPages, renderErrorPage, renderLogoutPage, renderLoggedOutPage } from './pages.ts';
import { verifyClientSecret } from './passwords.ts';
import { TOKEN_TTL } from './token-lifetimes.ts';
import { SCOPE_CLAIMS } from './userinfo.rules.ts';

export { TOKEN_TTL };

/** Marks a request the provider left unanswered (see leaveUnansweredToFastify). */
const kUnanswered = Symbol('orderpay.unanswered-by-provider');

type UnansweredRequest = IncomingMessage & { [kUnanswered]?: true };

/** Whether the provider left this request for someone else to answer. */
export function isUnansweredByProvider(req: IncomingMessage): boolean {
  return (req as UnansweredRequest)[kUnanswered] === true;
}

/** Which browser origins may call the token, revocation and introspection endpoints for a client. */
function allowClientOrigin(config: Config): NonNullable<Configuration['clientBasedCORS']> {
  return function allowsClientOrigin(_ctx, origin, client) {
    return isClientOrigin(config, origin, client.redirectUris ?? []);
  };
}

/** An access token or a client-credentials token, as extraTokenClaims receives it. */
type IssuedToken = Parameters<NonNullable<Configuration['extraTokenClaims']>>[1];

export interface ProviderOptions {
  config: Config;
  db: Db;
  /** Private signing JWKs, the one to sign with first. */
  signingKeys: JWK[];
  cookieKeys: string[];
  /** Clients known from the configuration rather than the database (the /docs client: docs-client.ts). */
  staticClients?: ClientMetadata[];
  /** The clock a rotated secret's grace period is judged by (tests move it on). */
  now?: Clock;
}

const AUTHORIZATION_PATH = '/authorize';

/** A client as compareClientSecret sees it: the secret's hash and, after a rotation, the one before (clients.store.ts). */
interface ClientSecrets {
  clientSecret?: string;
  previous_client_secret?: string;
  previous_client_secret_expires_at?: number;
}

/**
 * Client secrets are stored as scrypt hashes (src/auth/passwords.ts), never in the clear, so the
 * provider's own comparison is replaced (docs/decisions/0025-client-secrets-stored-hashed.md). After
 * a rotation the previous secret authenticates too, until its grace period ends
 * (docs/decisions/0113-client-secret-rotation.md): checked second, so the current one costs no more.
 */
function compareHashedClientSecrets(now: Clock) {
  return async function compareHashedClientSecret(this: ClientSecrets, actual: string): Promise<boolean> {
    if (this.clientSecret && (await verifyClientSecret(this.clientSecret, actual))) return true;
    const { previous_client_secret: previous, previous_client_secret_expires_at: expiresAt } = this;
    if (!previous || expiresAt === undefined || now().getTime() >= expiresAt * 1000) return false;
    return verifyClientSecret(previous, actual);
  };
}

/**
 * How the provider fetches a client's jwks_uri. oidc-provider refuses special-use addresses (SSRF);
 * outside production a jwks_uri on a loopback host is read, like a loopback redirect URI (RFC 8252
 * §7.3), so that a client can be developed on one machine (src/auth/fapi2-profile.ts, checkJwksUri).
 */
function clientKeysFetch(config: Config): NonNullable<Configuration['fetch']> {
  return function fetchClientKeys(url, options) {
    const loopback = isLoopbackHost(new URL(url).hostname);
    return fetch(url, config.env !== 'production' && loopback ? { ...options, dispatcher: undefined } : options);
  };
}

/** Whether the client is held to the FAPI 2.0 profile (undefined: no client yet, e.g. discovery). */
const isFapi2Client = (client: { metadata(): Record<string, unknown> } | undefined): boolean =>
  client !== undefined && clientProfileOf(client.metadata()) === 'fapi2';

export function createProvider({ config, db, signingKeys, cookieKeys, staticClients = [], now = systemClock }: ProviderOptions): Provider {
  const configuration: Configuration = {
    adapter: createOidcAdapter(db, undefined, (metadata) => withheldMoneyScopes(metadata, config.fapi2ForPayments)),
    clients: staticClients as Configuration['clients'],
    findAccount: accountFinder(db) as Configuration['findAccount'],
    jwks: { keys: signingKeys as never },
    cookies: { keys: cookieKeys, long: { httpOnly: true, sameSite: 'lax' }, short: { httpOnly: true, sameSite: 'lax' } },
    claims: Object.fromEntries(Object.entries(SCOPE_CLAIMS).map(([scope, claims]) => [scope, [...claims]])),
    scopes: [...CLIENT_SCOPES],
    responseTypes: ['code'],
    // RFC 9700 §2.1.1 / OAuth 2.1: PKCE for every client; oidc-provider 9 accepts only S256.
    pkce: { required: () => true },
    routes: {
      authorization: AUTHORIZATION_PATH,
      token: '/token',
      jwks: '/jwks',
      revocation: '/revoke',
      introspection: '/introspect',
      end_session: '/logout',
    },
    ttl: TOKEN_TTL,
    features: {
      devInteractions: { enabled: false },
      // RFC 9449: a client that sends a DPoP proof to the token endpoint gets a DPoP-bound token
      // (cnf.jkt), which the API accepts only with a proof by that key (src/http/dpop.ts); without
      // a proof, Bearer as before; FAPI 2.0 clients must send one (dpop_bound_access_tokens). No
      // server nonces (FAPI 2.0 §5.3.2.1 item 10 makes them optional): the proofs' jti are
      // remembered instead (oidc-provider's ReplayDetection here, the API's own store).
      dPoP: { enabled: true },
      // FAPI 2.0 Security Profile, per client: its PKCE, redirect_uri and client-assertion rules for
      // the clients registered on it (fapi2-profile.ts), none for the others.
      fapi: { enabled: true, profile: (_ctx, client) => (isFapi2Client(client) ? '2.0' : undefined) },
      // RFC 9126: any client may push its authorization request; FAPI 2.0 clients must
      // (require_pushed_authorization_requests, FAPI 2.0 §5.3.2.2 items 2 and 3).
      pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false },
      clientCredentials: { enabled: true },
      // RFC 7662 §2.1: clients that authenticate may introspect any token (the JWT access tokens
      // too, src/auth/jwt-introspection.ts); public clients none. RFC 7009: a client may revoke
      // only its own tokens.
      introspection: { enabled: true, allowedPolicy: (_ctx, client) => mayIntrospect(client) },
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      // OpenID Connect Core §5.3: oidc-provider's userinfo takes only tokens without an audience,
      // and every access token is the API's; orderpay's own route answers at the URL advertised
      // below (src/auth/userinfo.routes.ts, docs/decisions/0110-userinfo-for-api-tokens.md).
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: true, logoutSource: renderLogoutPage, postLogoutSuccessSource: renderLoggedOutPage },
      // RFC 8707: every access token is for the orderpay API, as an RFC 9068 JWT. Its scopes are
      // those of the API's resource server, which lists the OpenID Connect ones too: the token is
      // also for /oauth/userinfo, and the token response's scope (RFC 6749 §5.1) lists everything
      // granted rather than the API scopes only.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => config.audience,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, resourceIndicator, client) {
          if (resourceIndicator !== config.audience) throw new errors.InvalidTarget();
          return {
            scope: CLIENT_SCOPES.join(' '),
            audience: config.audience,
            accessTokenTTL: TOKEN_TTL.AccessToken,
            accessTokenFormat: 'jwt',
            // FAPI 2.0 §5.4.1: its JWTs are PS256, ES256 or EdDSA; the RSA keys sign PS256 (keys.store.ts).
            jwt: { sign: { alg: isFapi2Client(client) ? 'PS256' : 'RS256' } },
          };
        },
      },
    },
    // The spec: a refresh token in every authorization-code exchange response (oidc-provider's
    // default asks for offline_access and consent); rotated on every use (RFC 9700 §4.14.2), except
    // a FAPI 2.0 client's, which is bound to the client's authentication and is not rotated
    // (FAPI 2.0 §5.3.2.1 item 9, RFC 9449 §5): a client that lost a response retries with it.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: (ctx) => !isFapi2Client(ctx.oidc.client),
    extraTokenClaims: (_ctx, token) => findExtraTokenClaims(db, token),
    // The client's pinned API version, read with the rest of its row (findClientMetadata): kept on
    // the provider's Client, so a token's api_version claim costs no query of its own. After a
    // rotation, the previous secret's hash and its end, for compareHashedClientSecret.
    extraClientMetadata: { properties: ['api_version', 'previous_client_secret', 'previous_client_secret_expires_at', PROFILE_METADATA] },
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    // Only what a registered client can use: public clients (none), confidential ones (Basic), and
    // FAPI 2.0 clients (private_key_jwt, FAPI 2.0 §5.3.2.1 item 6). Secrets are stored hashed, so
    // client_secret_jwt could only be keyed by the hash.
    clientAuthMethods: ['client_secret_basic', 'private_key_jwt', 'none'],
    // FAPI 2.0 §5.3.2.1 item 13: JWTs (client assertions, DPoP proofs) issued up to 15 s in the
    // future are accepted, which covers the 10 s it requires and stays under its 60 s ceiling.
    clockTolerance: 15,
    // FAPI 2.0 §5.3.2.1 item 8: a FAPI 2.0 client's assertion names the issuer as its aud, a string
    // (oidc-provider's own check); item 13: no client's assertion is from more than 60 s ahead.
    assertJwtClientAuthClaimsAndHeader: async (ctx, claims) => {
      if (ctx.oidc.isFapi('2.0') && claims.aud !== ctx.oidc.issuer) {
        throw new errors.InvalidClientAuth('audience (aud) must equal the issuer identifier url');
      }
      if (isFromTheFuture(claims, now().getTime() / 1000)) {
        throw new errors.InvalidClientAuth(`the client assertion is from the future (iat or nbf more than ${MAX_FUTURE_SECONDS} s ahead)`);
      }
    },
    clientDefaults: {
      id_token_signed_response_alg: 'RS256',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256', 'PS256'],
      userinfoSigningAlgValues: ['RS256'],
      // FAPI 2.0 §5.4.1 for client assertions (private_key_jwt is only for FAPI 2.0 clients) and
      // for DPoP proofs, the API's too (DPOP_ALGORITHMS, src/http/dpop.ts).
      clientAuthSigningAlgValues: [...FAPI2_SIGNING_ALGS],
      dPoPSigningAlgValues: ['ES256', 'PS256', 'EdDSA'],
    },
    clientBasedCORS: allowClientOrigin(config),
    renderError: renderErrorPage,
    // Where the provider's own endpoints are published: PUBLIC_URL's origin, the mount's path.
    discovery: { userinfo_endpoint: new URL(USERINFO_PATH, config.publicUrl).href },
    fetch: clientKeysFetch(config),
  };
  const provider = new Provider(config.issuer, configuration);
  // Koa reads the scheme from X-Forwarded-Proto, which the mount pins to PUBLIC_URL's scheme
  // (src/auth/authorization-server.ts): secure cookies and published URLs follow PUBLIC_URL.
  provider.proxy = true;
  provider.use(guardProviderPages);
  provider.use(introspectJwtAccessTokens(createOwnTokenVerifier(db, config)));
  provider.use(askConsentForOfflineAccess(AUTHORIZATION_PATH));
  provider.Client.prototype.compareClientSecret = compareHashedClientSecrets(now) as never;
  // A request the provider does not answer (no route of its own, or a CORS route asked without
  // CORS) would get Koa's text/plain 404: it is handed back to Fastify instead, which answers it
  // as a problem (src/auth/provider-mount.ts).
  provider.use(async function leaveUnansweredToFastify(ctx, next) {
    await next();
    if (ctx.status === 404 && ctx.body == null) {
      ctx.respond = false;
      (ctx.req as UnansweredRequest)[kUnanswered] = true;
    }
  });
  // The provider answers an unexpected failure with a bare server_error; the cause goes to the log,
  // with the request's id (the mount's request carries Fastify's logger, src/auth/provider-mount.ts).
  provider.on('server_error', function logServerError(ctx, error) {
    (ctx.req as { log?: { error(object: object, message: string): void } }).log?.error({ err: error }, 'authorization server error');
  });
  return provider;
}

/**
 * Claims beside RFC 9068's own. `roles` (§2.2.3.1): staff users' tokens say so, the resource server
 * needs no lookup. `gid`: the digest of the grant the token was issued under, so resource servers
 * can refuse it once the grant is revoked (src/http/grant-revocations.ts). A digest, not the id: a
 * JWT is readable by whoever holds it, and the grant id is the authorization server's internal
 * handle on the grant's rows. Client-credentials tokens have no grant, hence no gid.
 * `api_version`: the API version the client is pinned to, what its unversioned requests get
 * (docs/decisions/0054-api-version-in-access-tokens.md); a new pin reaches the API with the client's next token.
 */
async function findExtraTokenClaims(db: Db, token: IssuedToken): Promise<Record<string, unknown> | undefined> {
  const claims: Record<string, unknown> = {};
  if ('grantId' in token && typeof token.grantId === 'string') claims.gid = digestOidcIdentifier(token.grantId);
  const apiVersion = token.client?.metadata().api_version;
  if (typeof apiVersion === 'number') claims.api_version = apiVersion;
  if ('accountId' in token && token.accountId) {
    const user = await findAccountRow(db, token.accountId);
    if (user?.role === 'staff') claims.roles = ['staff'];
  }
  return Object.keys(claims).length ? claims : undefined;
}
