// The whole authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636), driven by a real OAuth
// client (openid-client) against a real socket: authorize → login → consent → callback → code
// exchange → API call → refresh with rotation → reuse detection → revocation, introspection;
// client credentials for a service; and the API version each client is pinned to, in its tokens.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createConfidentialClient, createPublicClient, setClientApiVersion } from '../../src/auth/clients.store.ts';
import { LATEST_API_VERSION } from '../../src/core/api-versions.ts';
import { authorizeWithForms, startAuthServer, type AuthServer } from '../helpers/oauth.ts';
import { EMPTY_FIRST_PAGE_META } from '../helpers/paging.ts';

const PORT = 29_111;
const REDIRECT_URI = 'http://127.0.0.1:29199/callback';
const SCOPE = 'openid profile email orders:read orders:write';

let server: AuthServer;
let publicClientId: string;

before(async () => {
  server = await startAuthServer(PORT);
  await server.createUser('ada@example.test', 'correct horse battery', 'customer');
  ({ clientId: publicClientId } = await createPublicClient(server.db, {
    name: 'Test app',
    redirectUris: [REDIRECT_URI],
    scopes: SCOPE.split(' ').concat('offline_access'),
  }));
});
after(async () => {
  await server.close();
});

async function discover(clientId: string, auth: client.ClientAuth = client.None(), secret?: string) {
  return client.discovery(new URL(server.issuer), clientId, secret, auth, { execute: [client.allowInsecureRequests] });
}

async function authorize(config: client.Configuration, scope = SCOPE) {
  const credentials = { email: 'ada@example.test', password: 'correct horse battery' };
  const { callback, checks } = await authorizeWithForms(server, config, { scope, redirectUri: REDIRECT_URI, ...credentials });
  return { verifier: checks.pkceCodeVerifier, state: checks.expectedState, callback };
}

describe('RFC 6749 §4.1 + RFC 7636: authorization code with PKCE, end to end', () => {
  test('discovery advertises only the code flow, S256 and no implicit or password grant', async () => {
    const config = await discover(publicClientId);
    const metadata = config.serverMetadata();
    assert.equal(metadata.issuer, `${server.baseUrl}/oauth`);
    assert.equal(metadata.authorization_endpoint, `${server.baseUrl}/oauth/authorize`);
    assert.equal(metadata.token_endpoint, `${server.baseUrl}/oauth/token`);
    assert.deepEqual(metadata.response_types_supported, ['code']);
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
    assert.ok(!metadata.grant_types_supported?.includes('implicit'));
    assert.ok(!metadata.grant_types_supported?.includes('password'));
    assert.ok(metadata.grant_types_supported?.includes('client_credentials'));
  });

  test('published URLs come from PUBLIC_URL: Host and X-Forwarded-* headers cannot change them', async () => {
    for (const path of ['/oauth/.well-known/openid-configuration', '/.well-known/oauth-authorization-server/oauth']) {
      const response = await fetch(`${server.baseUrl}${path}`, {
        headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', host: 'evil.example' },
      });
      assert.equal(response.status, 200);
      const metadata = (await response.json()) as Record<string, string>;
      for (const key of ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri']) {
        assert.ok(metadata[key]!.startsWith(`${server.baseUrl}/oauth`), `${path} ${key}: ${metadata[key]}`);
      }
    }
  });

  test('login, consent, code exchange, API call, refresh rotation, reuse revokes the grant', async () => {
    const config = await discover(publicClientId);
    const { verifier, state, callback } = await authorize(config);
    assert.equal(callback.origin + callback.pathname, REDIRECT_URI);
    assert.equal(callback.searchParams.get('state'), state, 'state is echoed byte for byte');
    assert.ok(callback.searchParams.get('code'));

    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    assert.equal(tokens.token_type, 'bearer'); // openid-client lower-cases; the raw value is checked below
    assert.ok(tokens.access_token && tokens.refresh_token && tokens.id_token);
    assert.equal(tokens.expires_in, 600);
    assert.equal(decodeProtectedHeader(tokens.access_token).typ, 'at+jwt');
    const claims = decodeJwt(tokens.access_token);
    assert.equal(claims.aud, server.config.audience);
    assert.equal(claims.iss, server.issuer);
    assert.equal(claims.client_id, publicClientId);
    // The token response's scope is the token's: every scope granted, OpenID Connect ones included.
    assert.deepEqual(String(claims.scope).split(' ').sort(), ['email', 'openid', 'orders:read', 'orders:write', 'profile']);
    assert.equal(tokens.scope, claims.scope);
    assert.equal(claims.api_version, LATEST_API_VERSION, 'registered without a version: pinned to the latest');

    const api = await fetch(`${server.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(api.status, 200);
    assert.deepEqual(((await api.json()) as { meta: unknown }).meta, EMPTY_FIRST_PAGE_META);

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.ok(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token, 'the refresh token rotates');
    await assert.rejects(
      client.refreshTokenGrant(config, tokens.refresh_token!),
      (error: client.ResponseBodyError) => error.error === 'invalid_grant',
    );
    // Reuse of the rotated token revoked the whole grant: the newest refresh token is dead too.
    await assert.rejects(
      client.refreshTokenGrant(config, refreshed.refresh_token!),
      (error: client.ResponseBodyError) => error.error === 'invalid_grant',
    );
  });

  test('the raw token response: token_type Bearer, no-store, refresh_token without offline_access', async () => {
    const config = await discover(publicClientId);
    const { verifier, callback } = await authorize(config, 'openid orders:read');
    const response = await fetch(`${server.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: REDIRECT_URI,
        client_id: publicClientId,
        code_verifier: verifier,
      }),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(response.headers.get('pragma'), 'no-cache');
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 600);
    assert.equal(typeof body.refresh_token, 'string');
    assert.equal(typeof body.id_token, 'string');
  });

  test('revocation (RFC 7009) and introspection (RFC 7662)', async () => {
    const config = await discover(publicClientId);
    const { verifier, state, callback } = await authorize(config);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    const service = await createConfidentialClient(server.db, { name: 'Introspector', scopes: ['orders:read'] });
    const serviceConfig = await discover(service.clientId, client.ClientSecretBasic(service.clientSecret), service.clientSecret);
    const active = await client.tokenIntrospection(serviceConfig, tokens.refresh_token!);
    assert.equal(active.active, true);
    await client.tokenRevocation(config, tokens.refresh_token!);
    const revoked = await client.tokenIntrospection(serviceConfig, tokens.refresh_token!);
    assert.equal(revoked.active, false);
  });
});

describe('RFC 6749 §4.4: client credentials', () => {
  test('a service token works on the API and has no refresh or id token', async () => {
    const service = await createConfidentialClient(server.db, { name: 'Shipping', scopes: ['orders:read', 'orders:write'] });
    const config = await discover(service.clientId, client.ClientSecretBasic(service.clientSecret), service.clientSecret);
    const tokens = await client.clientCredentialsGrant(config, { scope: 'orders:read' });
    assert.equal(tokens.refresh_token, undefined);
    assert.equal(tokens.id_token, undefined);
    const claims = decodeJwt(tokens.access_token);
    assert.equal(claims.sub, service.clientId);
    assert.equal(claims.aud, server.config.audience);
    assert.equal(claims.api_version, LATEST_API_VERSION);
    const api = await fetch(`${server.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(api.status, 200);
  });

  test('a wrong secret is invalid_client', async () => {
    const service = await createConfidentialClient(server.db, { name: 'Wrong', scopes: ['orders:read'] });
    const config = await discover(service.clientId, client.ClientSecretBasic('not-the-secret'), 'not-the-secret');
    // RFC 6749 §5.2: a client that authenticated with HTTP Basic gets 401 and a challenge.
    await assert.rejects(
      client.clientCredentialsGrant(config, { scope: 'orders:read' }),
      (error: unknown) =>
        error instanceof client.WWWAuthenticateChallengeError &&
        error.status === 401 &&
        error.cause[0]?.parameters.error === 'invalid_client',
    );
  });
});

describe("the client's pinned API version travels in its access tokens (api_version)", () => {
  // Pinned to 1 first, then moved to the latest: the two must differ for the change to show.
  const FIRST = 1;
  before(() => assert.notEqual(FIRST, LATEST_API_VERSION));

  test('client credentials: the token carries the pin; once the pin changes, the next token carries the new one', async () => {
    const service = await createConfidentialClient(server.db, { name: 'Pinned service', scopes: ['orders:read'], apiVersion: FIRST });
    const config = await discover(service.clientId, client.ClientSecretBasic(service.clientSecret), service.clientSecret);
    const earlier = await client.clientCredentialsGrant(config, { scope: 'orders:read' });
    assert.equal(decodeJwt(earlier.access_token).api_version, FIRST);

    assert.equal((await setClientApiVersion(server.db, service.clientId, LATEST_API_VERSION))?.previousApiVersion, FIRST);
    const later = await client.clientCredentialsGrant(config, { scope: 'orders:read' });
    assert.equal(decodeJwt(later.access_token).api_version, LATEST_API_VERSION);
    // The token issued before keeps its version until it expires; both are accepted.
    assert.equal(decodeJwt(earlier.access_token).api_version, FIRST);
    for (const token of [earlier.access_token, later.access_token]) {
      const api = await fetch(`${server.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(api.status, 200);
    }
    // On the unversioned paths each token gets its client's version as the token carries it,
    // unless Accept names another.
    for (const [token, version] of [
      [earlier.access_token, FIRST],
      [later.access_token, LATEST_API_VERSION],
    ] as const) {
      const api = await fetch(`${server.baseUrl}/orders`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(api.status, 200);
      assert.equal(api.headers.get('api-version'), String(version));
      assert.equal(api.headers.get('deprecation') !== null, version < LATEST_API_VERSION);
    }
    const overridden = await fetch(`${server.baseUrl}/orders`, {
      headers: { authorization: `Bearer ${later.access_token}`, accept: `application/vnd.orderpay.v${FIRST}+json` },
    });
    assert.equal(overridden.headers.get('api-version'), String(FIRST));
    assert.equal(overridden.headers.get('content-type'), `application/vnd.orderpay.v${FIRST}+json; charset=utf-8`);
  });

  test('authorization code: the access token carries the pin, a refreshed one the pin of its moment; the ID token none', async () => {
    const { clientId } = await createPublicClient(server.db, {
      name: 'Pinned app',
      redirectUris: [REDIRECT_URI],
      scopes: SCOPE.split(' ').concat('offline_access'),
      apiVersion: FIRST,
    });
    const config = await discover(clientId);
    const { verifier, state, callback } = await authorize(config);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    const claims = decodeJwt(tokens.access_token);
    assert.equal(claims.client_id, clientId);
    assert.equal(claims.api_version, FIRST);
    assert.equal(decodeJwt(tokens.id_token!).api_version, undefined, 'the pin is for the API, not the client');

    await setClientApiVersion(server.db, clientId, LATEST_API_VERSION);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.equal(decodeJwt(refreshed.access_token).api_version, LATEST_API_VERSION);
  });
});
