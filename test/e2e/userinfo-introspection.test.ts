// The two endpoints discovery advertises beside the code flow, driven by openid-client over a real
// socket: userinfo (OpenID Connect Core §5.3) with the access token of a sign-in for OpenID Connect
// scopes, and introspection (RFC 7662) of orderpay's own access tokens, JWTs included: active while
// they would be accepted by the API, inactive once revoked, expired, forged or made up.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { decodeJwt } from 'jose';
import { issueTokenFor, signAccessToken } from '../../src/auth/access-token.ts';
import { createConfidentialClient, createPublicClient } from '../../src/auth/clients.store.ts';
import { findActiveSigningKey } from '../../src/auth/keys.store.ts';
import { TOKEN_TTL } from '../../src/auth/token-lifetimes.ts';
import { signInWithForms, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_280;
const REDIRECT_URI = 'http://127.0.0.1:29281/callback';
const EMAIL = 'ines@example.test';
const PASSWORD = 'a long enough passphrase';

let server: AuthServer;
let userId: number;
let app: client.Configuration;
let introspector: client.Configuration;

async function discover(clientId: string, auth: client.ClientAuth = client.None(), secret?: string) {
  return client.discovery(new URL(server.issuer), clientId, secret, auth, { execute: [client.allowInsecureRequests] });
}

before(async () => {
  server = await startAuthServer(PORT);
  ({ id: userId } = await server.createUser(EMAIL, PASSWORD, 'customer'));
  const { clientId } = await createPublicClient(server.db, {
    name: 'Profile app',
    redirectUris: [REDIRECT_URI],
    scopes: ['openid', 'profile', 'email', 'offline_access', 'orders:read'],
  });
  app = await discover(clientId);
  const service = await createConfidentialClient(server.db, { name: 'Resource server', scopes: ['orders:read'] });
  introspector = await discover(service.clientId, client.ClientSecretBasic(service.clientSecret), service.clientSecret);
});
after(async () => {
  await server.close();
});

/** authorize → login → consent → code exchange, for these scopes. */
async function signIn(scope: string): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(app, {
    redirect_uri: REDIRECT_URI,
    scope,
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const callback = await signInWithForms(server, url.toString(), EMAIL, PASSWORD);
  return client.authorizationCodeGrant(app, callback, { pkceCodeVerifier: verifier, expectedState: state });
}

const isJwt = (token: string) => token.split('.').length === 3;

const listOrders = (token: string) => fetch(`${server.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${token}` } });

describe('OpenID Connect Core §5.3: /oauth/userinfo', () => {
  test('discovery advertises it, and a sign-in for openid profile email gets a token it accepts, with the claims', async () => {
    assert.equal(app.serverMetadata().userinfo_endpoint, `${server.issuer}/userinfo`);
    const tokens = await signIn('openid profile email');
    assert.equal(tokens.scope, 'openid profile email', 'the token carries the scopes asked for, not ""');
    assert.ok(!isJwt(tokens.access_token), 'an opaque token, for the authorization server itself');
    const claims = await client.fetchUserInfo(app, tokens.access_token, String(userId));
    assert.deepEqual(claims, { sub: String(userId), name: 'ines', email: EMAIL, email_verified: false });
    // It is not a token for the API.
    const api = await listOrders(tokens.access_token);
    assert.equal(api.status, 401);
    assert.match(api.headers.get('www-authenticate') ?? '', /error_description="the token is not a well-formed JWT"/);
  });

  test('openid alone: the subject and nothing else', async () => {
    const tokens = await signIn('openid');
    assert.deepEqual(await client.fetchUserInfo(app, tokens.access_token, String(userId)), { sub: String(userId) });
  });

  test('a sign-in with API scopes gets a JWT for the API, which userinfo refuses; a refresh narrowed to OpenID scopes gets a userinfo token', async () => {
    const tokens = await signIn('openid profile email orders:read');
    assert.ok(isJwt(tokens.access_token));
    assert.equal(decodeJwt(tokens.access_token).aud, server.config.audience);
    assert.equal((await listOrders(tokens.access_token)).status, 200);
    await assert.rejects(
      client.fetchUserInfo(app, tokens.access_token, String(userId)),
      (error: unknown) =>
        error instanceof client.WWWAuthenticateChallengeError &&
        error.status === 401 &&
        error.cause[0]?.parameters.error === 'invalid_token',
    );

    const identity = await client.refreshTokenGrant(app, tokens.refresh_token!, { scope: 'openid profile email' });
    assert.ok(!isJwt(identity.access_token));
    assert.equal(identity.scope, 'openid profile email');
    assert.deepEqual(await client.fetchUserInfo(app, identity.access_token, String(userId)), {
      sub: String(userId),
      name: 'ines',
      email: EMAIL,
      email_verified: false,
    });
    // Without `scope`, a refresh gets a token for the API again.
    const api = await client.refreshTokenGrant(app, identity.refresh_token!);
    assert.ok(isJwt(api.access_token));
    assert.equal(decodeJwt(api.access_token).scope, 'orders:read');
    assert.equal((await listOrders(api.access_token)).status, 200);
  });
});

describe('RFC 7662: /oauth/introspect for orderpay access tokens', () => {
  test('a live JWT access token is active, with its claims; revoking its grant (RFC 7009) makes it inactive at once', async () => {
    assert.equal(introspector.serverMetadata().introspection_endpoint, `${server.issuer}/introspect`);
    const tokens = await signIn('openid orders:read');
    const claims = decodeJwt(tokens.access_token);
    const active = await client.tokenIntrospection(introspector, tokens.access_token);
    assert.deepEqual(active, {
      active: true,
      sub: String(userId),
      client_id: app.clientMetadata().client_id,
      scope: 'orders:read',
      exp: claims.exp,
      iat: claims.iat,
      iss: server.issuer,
      aud: server.config.audience,
      jti: claims.jti,
      token_type: 'Bearer',
    });
    assert.equal(active.exp! - active.iat!, TOKEN_TTL.AccessToken);

    await client.tokenRevocation(app, tokens.refresh_token!);
    assert.deepEqual(await client.tokenIntrospection(introspector, tokens.access_token), { active: false });
    assert.deepEqual(await client.tokenIntrospection(introspector, tokens.refresh_token!), { active: false });
  });

  test('a token from `orderpay tokens issue` is active; one past its exp is not', async () => {
    const issued = await issueTokenFor(server.db, server.config, { email: EMAIL }, ['orders:read']);
    const answer = await client.tokenIntrospection(introspector, issued);
    assert.equal(answer.active, true);
    assert.equal(answer.client_id, 'orderpay-cli');
    assert.equal(answer.sub, String(userId));

    const key = (await findActiveSigningKey(server.db))!;
    const expired = await signAccessToken(key, {
      issuer: server.issuer,
      audience: server.config.audience,
      subject: String(userId),
      clientId: 'orderpay-cli',
      scope: 'orders:read',
      expiresIn: 600,
      now: new Date(Date.now() - 700_000),
    });
    assert.deepEqual(await client.tokenIntrospection(introspector, expired), { active: false });
  });

  test('garbage, a forged JWT, another server’s token and an ID token are inactive', async () => {
    const tokens = await signIn('openid orders:read');
    const [header, payload, signature] = tokens.access_token.split('.') as [string, string, string];
    const forgedPayload = Buffer.from(JSON.stringify({ ...decodeJwt(tokens.access_token), scope: 'orders:read orders:write' })).toString(
      'base64url',
    );
    const elsewhere = await issueTokenFor(
      server.db,
      { issuer: 'http://127.0.0.1:3000/oauth', audience: 'http://127.0.0.1:3000' },
      {
        email: EMAIL,
      },
    );
    for (const token of [
      'garbage',
      'a.b.c',
      `${header}.${forgedPayload}.${signature}`,
      `${header}.${payload}.`,
      elsewhere,
      tokens.id_token!,
    ]) {
      assert.deepEqual(await client.tokenIntrospection(introspector, token), { active: false }, token);
    }
  });

  test('the opaque userinfo token is active until its grant is revoked', async () => {
    const tokens = await signIn('openid profile email offline_access');
    const active = await client.tokenIntrospection(introspector, tokens.access_token);
    assert.equal(active.active, true);
    assert.equal(active.scope, 'openid profile email offline_access');
    assert.equal(active.sub, String(userId));
    await client.tokenRevocation(app, tokens.refresh_token!);
    assert.deepEqual(await client.tokenIntrospection(introspector, tokens.access_token), { active: false });
  });

  test('RFC 7662 §2.1: only clients that authenticate are answered; a public client learns nothing, not even of its own token', async () => {
    const tokens = await signIn('openid orders:read');
    for (const token of [tokens.access_token, tokens.refresh_token!]) {
      assert.deepEqual(await client.tokenIntrospection(app, token), { active: false });
      assert.equal((await client.tokenIntrospection(introspector, token)).active, true);
    }
    const anonymous = await fetch(`${server.issuer}/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.access_token }),
    });
    assert.equal(anonymous.status, 400);
    assert.deepEqual(await anonymous.json(), {
      error: 'invalid_request',
      error_description: 'no client authentication mechanism provided',
    });
  });
});
