// OpenID Connect Core §5.3, the UserInfo endpoint, driven by a generic OIDC client (openid-client)
// over a real socket: a sign-in with the authorization code flow and PKCE gets one access token, the
// API's RFC 9068 JWT, which both the API and the userinfo endpoint discovery advertises take; the
// endpoint answers `sub` and exactly the claims the token's scopes release, and refuses as RFC 6750
// §3.1 says a token without openid (insufficient_scope) or one the API would refuse (invalid_token).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { decodeJwt } from 'jose';
import { issueTokenFor, signAccessToken } from '../../src/auth/access-token.ts';
import { createConfidentialClient } from '../../src/auth/clients.store.ts';
import { findActiveSigningKey } from '../../src/auth/keys.store.ts';
import { discoverClient, setUpSigningInApp } from '../helpers/oauth.ts';

// This file's ports: 29800 (the server); 29801 is only a redirect URI, nothing listens there.
const PORT = 29_800;
const REDIRECT_URI = 'http://127.0.0.1:29801/callback';
const EMAIL = 'noor@example.test';
const PASSWORD = 'a long enough passphrase';
const JSON_UTF8 = 'application/json; charset=utf-8';

const t = setUpSigningInApp(PORT, { email: EMAIL, password: PASSWORD, redirectUri: REDIRECT_URI });
/** Where discovery says userinfo is. */
const userinfoUrl = () => t.app.serverMetadata().userinfo_endpoint!;

/** An access token of the app's, signed with the server's key, as `tokens issue` signs them (10 minutes). */
async function signToken({
  subject = String(t.userId),
  scope,
  audience = t.server.config.audience,
  now,
}: {
  subject?: string;
  scope: string;
  audience?: string;
  now?: Date;
}) {
  const key = (await findActiveSigningKey(t.server.db))!;
  return signAccessToken(key, { issuer: t.server.issuer, audience, subject, clientId: t.app.clientMetadata().client_id, scope, now });
}

const sorted = (scope: unknown) => String(scope).split(' ').sort();

const listOrders = (token: string) => fetch(`${t.server.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${token}` } });

/** A refusal: its status, its WWW-Authenticate challenge and its RFC 6749 JSON body, all of them. */
async function assertRefused(response: Response, status: number, challenge: string, body: Record<string, string>): Promise<void> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('www-authenticate'), challenge);
  assert.equal(response.headers.get('content-type'), JSON_UTF8);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.deepEqual(await response.json(), body);
}

/** openid-client's refusal of userinfo's answer: the challenge's error, read from WWW-Authenticate. */
async function refusalOf(answer: Promise<unknown>) {
  try {
    await answer;
  } catch (error) {
    return challengeOf(error);
  }
  return assert.fail('userinfo answered');
}

function challengeOf(error: unknown): {
  status: number;
  error: string | undefined;
  description: string | undefined;
  scope: string | undefined;
} {
  assert.ok(error instanceof client.WWWAuthenticateChallengeError, String(error));
  const { parameters } = error.cause[0]!;
  return { status: error.status, error: parameters.error, description: parameters.error_description, scope: parameters.scope };
}

function invalidToken(description: string) {
  return [
    401,
    `Bearer realm="orderpay", error="invalid_token", error_description="${description}"`,
    { error: 'invalid_token', error_description: description },
  ] as const;
}

describe('OpenID Connect Core §5.3: userinfo with the API access token of a sign-in', () => {
  test('openid profile email orders:read: one JWT for the API and userinfo; the token response lists every scope granted', async () => {
    assert.equal(userinfoUrl(), `${t.server.issuer}/userinfo`);
    const tokens = await t.signIn('openid profile email orders:read');
    // RFC 6749 §5.1: the token response's scope is the access token's, OpenID Connect scopes included.
    assert.deepEqual(sorted(tokens.scope), ['email', 'openid', 'orders:read', 'profile']);
    const jwt = decodeJwt(tokens.access_token);
    assert.equal(jwt.aud, t.server.config.audience);
    assert.deepEqual(sorted(jwt.scope), sorted(tokens.scope));

    // §5.3.2: openid-client checks that the answer's sub is the ID token's.
    const { sub: idTokenSub, name, email, email_verified } = tokens.claims()!;
    assert.equal(idTokenSub, String(t.userId));
    // The ID token carries the same claims (the provider masks them to the granted scopes too).
    assert.deepEqual({ name, email, email_verified }, { name: 'noor', email: EMAIL, email_verified: false });
    const claims = await client.fetchUserInfo(t.app, tokens.access_token, idTokenSub);
    assert.deepEqual(claims, { sub: idTokenSub, name: 'noor', email: EMAIL, email_verified: false });
    assert.equal((await listOrders(tokens.access_token)).status, 200);
  });

  test('exactly the claims the scopes release: openid → sub; email → email, email_verified; profile → name; offline_access → nothing', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['openid', { sub: String(t.userId) }],
      ['openid email orders:read', { sub: String(t.userId), email: EMAIL, email_verified: false }],
      ['openid profile', { sub: String(t.userId), name: 'noor' }],
      ['openid offline_access', { sub: String(t.userId) }],
    ];
    for (const [scope, expected] of cases) {
      const tokens = await t.signIn(scope);
      assert.deepEqual(sorted(tokens.scope), sorted(scope), scope);
      assert.deepEqual(await client.fetchUserInfo(t.app, tokens.access_token, String(t.userId)), expected, scope);
    }
  });

  test('a sign-in for OpenID Connect scopes only gets the API JWT too: userinfo answers it, the API grants it nothing', async () => {
    const tokens = await t.signIn('openid profile email');
    assert.equal(tokens.scope, 'openid profile email');
    assert.equal(decodeJwt(tokens.access_token).aud, t.server.config.audience, 'no opaque token is issued any more');
    assert.deepEqual(await client.fetchUserInfo(t.app, tokens.access_token, String(t.userId)), {
      sub: String(t.userId),
      name: 'noor',
      email: EMAIL,
      email_verified: false,
    });
    const api = await listOrders(tokens.access_token);
    assert.equal(api.status, 403);
    assert.equal(api.headers.get('www-authenticate'), 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:read"');
  });

  test('a refresh keeps every scope, or narrows them (RFC 6749 §6); userinfo follows the token it gets', async () => {
    const tokens = await t.signIn('openid profile email offline_access orders:read');
    const refreshed = await client.refreshTokenGrant(t.app, tokens.refresh_token!);
    assert.deepEqual(sorted(refreshed.scope), ['email', 'offline_access', 'openid', 'orders:read', 'profile']);
    assert.equal((await client.fetchUserInfo(t.app, refreshed.access_token, String(t.userId))).name, 'noor');

    const narrowed = await client.refreshTokenGrant(t.app, refreshed.refresh_token!, { scope: 'openid email' });
    assert.equal(narrowed.scope, 'openid email');
    assert.deepEqual(await client.fetchUserInfo(t.app, narrowed.access_token, String(t.userId)), {
      sub: String(t.userId),
      email: EMAIL,
      email_verified: false,
    });

    const apiOnly = await client.refreshTokenGrant(t.app, narrowed.refresh_token!, { scope: 'orders:read' });
    assert.equal(apiOnly.scope, 'orders:read');
    const refusal = await refusalOf(client.fetchUserInfo(t.app, apiOnly.access_token, String(t.userId)));
    assert.deepEqual(refusal, {
      status: 403,
      error: 'insufficient_scope',
      description: 'the token was not granted the openid scope',
      scope: 'openid',
    });
  });
});

describe('RFC 6750 §3.1: refusals', () => {
  test('without openid → 403 insufficient_scope, scope="openid": a sign-in for API scopes, a service, a token from `tokens issue`', async () => {
    const service = await createConfidentialClient(t.server.db, { name: 'Shipping', scopes: ['orders:read'] });
    const serviceConfig = await discoverClient(
      t.server,
      service.clientId,
      client.ClientSecretBasic(service.clientSecret),
      service.clientSecret,
    );
    const tokens = [
      (await t.signIn('orders:read')).access_token,
      (await client.clientCredentialsGrant(serviceConfig, { scope: 'orders:read' })).access_token,
      await issueTokenFor(t.server.db, t.server.config, { email: EMAIL }, ['orders:read']),
    ];
    for (const token of tokens) {
      await assertRefused(
        await fetch(userinfoUrl(), { headers: { authorization: `Bearer ${token}` } }),
        403,
        'Bearer realm="orderpay", error="insufficient_scope", error_description="the token was not granted the openid scope", scope="openid"',
        { error: 'insufficient_scope', error_description: 'the token was not granted the openid scope', scope: 'openid' },
      );
    }
  });

  test('revoked at once: revoking the grant (RFC 7009) → 401 invalid_token "the token has been revoked"', async () => {
    const tokens = await t.signIn('openid profile orders:read');
    assert.equal((await client.fetchUserInfo(t.app, tokens.access_token, String(t.userId))).sub, String(t.userId));
    await client.tokenRevocation(t.app, tokens.refresh_token!);
    const refusal = await refusalOf(client.fetchUserInfo(t.app, tokens.access_token, String(t.userId)));
    assert.deepEqual(refusal, { status: 401, error: 'invalid_token', description: 'the token has been revoked', scope: undefined });
  });

  test('expired, forged, another server’s, an ID token, garbage → 401 invalid_token naming the check, as the API says it', async () => {
    const tokens = await t.signIn('openid profile orders:read');
    const expired = await signToken({ scope: 'openid profile', now: new Date(Date.now() - 700_000) });
    const [header, , signature] = tokens.access_token.split('.') as [string, string, string];
    const forgedPayload = Buffer.from(JSON.stringify({ ...decodeJwt(tokens.access_token), scope: 'openid profile email' })).toString(
      'base64url',
    );
    const elsewhere = await signToken({ scope: 'openid', audience: 'https://another.example' });
    const cases: [string, string][] = [
      [expired, 'the token has expired'],
      [`${header}.${forgedPayload}.${signature}`, "the token's signature does not verify"],
      [elsewhere, 'the token is for another audience'],
      [tokens.id_token!, 'the token is not a JWT access token (typ at+jwt)'],
      ['garbage', 'the token is not a well-formed JWT'],
    ];
    for (const [token, description] of cases) {
      const api = await listOrders(token);
      assert.equal(api.status, 401, description);
      assert.match(api.headers.get('www-authenticate')!, new RegExp(`error_description="${description.replace(/[()+]/g, '\\$&')}"`));
      await assertRefused(await fetch(userinfoUrl(), { headers: { authorization: `Bearer ${token}` } }), ...invalidToken(description));
    }
  });

  test('a user who no longer exists → 401 invalid_token', async () => {
    const { id } = await t.server.createUser('gone@example.test', PASSWORD);
    const token = await signToken({ subject: String(id), scope: 'openid email' });
    assert.equal((await fetch(userinfoUrl(), { headers: { authorization: `Bearer ${token}` } })).status, 200);
    await t.server.db.query('DELETE FROM users WHERE id = $1', [id]);
    await assertRefused(
      await fetch(userinfoUrl(), { headers: { authorization: `Bearer ${token}` } }),
      ...invalidToken("the token's user no longer exists"),
    );
  });

  test('no token → 401 with a challenge without an error code; in the query, twice, or both ways → 400 invalid_request', async () => {
    await assertRefused(await fetch(userinfoUrl()), 401, 'Bearer realm="orderpay"', {
      error: 'invalid_token',
      error_description: 'no access token provided',
    });
    await assertRefused(await fetch(userinfoUrl(), { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 401, 'Bearer realm="orderpay"', {
      error: 'invalid_token',
      error_description: 'no access token provided',
    });
    await assertRefused(
      await fetch(userinfoUrl(), { headers: { authorization: 'Bearer not a b64token' } }),
      ...invalidToken('the Bearer credentials are malformed'),
    );

    const { access_token: token } = await t.signIn('openid');
    const invalidRequest = (description: string) =>
      [
        400,
        `Bearer realm="orderpay", error="invalid_request", error_description="${description}"`,
        { error: 'invalid_request', error_description: description },
      ] as const;
    await assertRefused(await fetch(`${userinfoUrl()}?access_token=${token}`), ...invalidRequest('token in query string'));
    // fetch joins two fields of a name into one: the app is asked directly.
    const twice = await t.server.app.inject({
      url: '/oauth/userinfo',
      headers: { authorization: [`Bearer ${token}`, `Bearer ${token}`] as unknown as string },
    });
    await assertRefused(
      new Response(twice.body, { status: twice.statusCode, headers: twice.headers as Record<string, string> }),
      ...invalidRequest('several Authorization headers'),
    );
    await assertRefused(
      await fetch(userinfoUrl(), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: new URLSearchParams({ access_token: token }),
      }),
      ...invalidRequest('token in both the Authorization header and the body'),
    );
    await assertRefused(
      await fetch(userinfoUrl(), {
        method: 'POST',
        body: `access_token=${token}&access_token=${token}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      ...invalidRequest('several access_token parameters'),
    );
  });
});

describe('GET, HEAD and POST (OpenID Connect Core §5.3.1; RFC 6750 §2.1, §2.2)', () => {
  test('the header on GET, HEAD and POST; the form body on POST; the same claims, never cached', async () => {
    const { access_token: token } = await t.signIn('openid email');
    const expected = { sub: String(t.userId), email: EMAIL, email_verified: false };
    const answers = [
      await fetch(userinfoUrl(), { headers: { authorization: `Bearer ${token}` } }),
      await fetch(userinfoUrl(), { method: 'POST', headers: { authorization: `Bearer ${token}` } }),
      await fetch(userinfoUrl(), { method: 'POST', body: new URLSearchParams({ access_token: token }) }),
      // A JSON body is no way to send the token (§2.2 is form-encoded only), nor an obstacle to the header.
      await fetch(userinfoUrl(), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{"access_token":"x"}',
      }),
    ];
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('content-type'), JSON_UTF8);
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      assert.deepEqual(await answer.json(), expected);
    }
    const head = await fetch(userinfoUrl(), { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('cache-control'), 'no-store');
    assert.equal(await head.text(), '');
  });
});
