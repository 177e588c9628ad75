// Introspection (RFC 7662) of orderpay's own access tokens, driven by openid-client over a real
// socket: a JWT is active while the API would accept it, inactive once revoked, expired, forged or
// made up; refresh tokens are the provider's own. (Userinfo: test/e2e/userinfo.test.ts.)
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { decodeJwt } from 'jose';
import { issueTokenFor, signAccessToken } from '../../src/auth/access-token.ts';
import { createConfidentialClient } from '../../src/auth/clients.store.ts';
import { findActiveSigningKey } from '../../src/auth/keys.store.ts';
import { TOKEN_TTL } from '../../src/auth/token-lifetimes.ts';
import { discoverClient, setUpSigningInApp } from '../helpers/oauth.ts';

const PORT = 29_280;
const REDIRECT_URI = 'http://127.0.0.1:29281/callback';
const EMAIL = 'ines@example.test';
const PASSWORD = 'a long enough passphrase';

const t = setUpSigningInApp(PORT, { email: EMAIL, password: PASSWORD, redirectUri: REDIRECT_URI });
let introspector: client.Configuration;

describe('RFC 7662: /oauth/introspect for orderpay access tokens', () => {
  // In the suite: hooks at a file's top level run side by side, and this one needs the server.
  before(async () => {
    const service = await createConfidentialClient(t.server.db, { name: 'Resource server', scopes: ['orders:read'] });
    introspector = await discoverClient(t.server, service.clientId, client.ClientSecretBasic(service.clientSecret), service.clientSecret);
  });

  test('a live JWT access token is active, with its claims; revoking its grant (RFC 7009) makes it inactive at once', async () => {
    assert.equal(introspector.serverMetadata().introspection_endpoint, `${t.server.issuer}/introspect`);
    const tokens = await t.signIn('openid orders:read');
    const claims = decodeJwt(tokens.access_token);
    const active = await client.tokenIntrospection(introspector, tokens.access_token);
    assert.deepEqual(active, {
      active: true,
      sub: String(t.userId),
      client_id: t.app.clientMetadata().client_id,
      scope: 'openid orders:read',
      exp: claims.exp,
      iat: claims.iat,
      iss: t.server.issuer,
      aud: t.server.config.audience,
      jti: claims.jti,
      token_type: 'Bearer',
    });
    assert.equal(active.exp! - active.iat!, TOKEN_TTL.AccessToken);

    await client.tokenRevocation(t.app, tokens.refresh_token!);
    assert.deepEqual(await client.tokenIntrospection(introspector, tokens.access_token), { active: false });
    assert.deepEqual(await client.tokenIntrospection(introspector, tokens.refresh_token!), { active: false });
  });

  test('a token from `orderpay tokens issue` is active; one past its exp is not', async () => {
    const issued = await issueTokenFor(t.server.db, t.server.config, { email: EMAIL }, ['orders:read']);
    const answer = await client.tokenIntrospection(introspector, issued);
    assert.equal(answer.active, true);
    assert.equal(answer.client_id, 'orderpay-cli');
    assert.equal(answer.sub, String(t.userId));

    const key = (await findActiveSigningKey(t.server.db))!;
    const expired = await signAccessToken(key, {
      issuer: t.server.issuer,
      audience: t.server.config.audience,
      subject: String(t.userId),
      clientId: 'orderpay-cli',
      scope: 'orders:read',
      expiresIn: 600,
      now: new Date(Date.now() - 700_000),
    });
    assert.deepEqual(await client.tokenIntrospection(introspector, expired), { active: false });
  });

  test('garbage, a forged JWT, another server’s token and an ID token are inactive', async () => {
    const tokens = await t.signIn('openid orders:read');
    const [header, payload, signature] = tokens.access_token.split('.') as [string, string, string];
    const forgedPayload = Buffer.from(JSON.stringify({ ...decodeJwt(tokens.access_token), scope: 'orders:read orders:write' })).toString(
      'base64url',
    );
    const elsewhere = await issueTokenFor(
      t.server.db,
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

  test('the JWT of a sign-in for OpenID Connect scopes only is active, with those scopes, until its grant is revoked', async () => {
    const tokens = await t.signIn('openid profile email offline_access');
    const active = await client.tokenIntrospection(introspector, tokens.access_token);
    assert.equal(active.active, true);
    assert.equal(active.aud, t.server.config.audience);
    assert.equal(active.scope, 'openid profile email offline_access');
    assert.equal(active.sub, String(t.userId));
    await client.tokenRevocation(t.app, tokens.refresh_token!);
    assert.deepEqual(await client.tokenIntrospection(introspector, tokens.access_token), { active: false });
  });

  test('RFC 7662 §2.1: only clients that authenticate are answered; a public client learns nothing, not even of its own token', async () => {
    const tokens = await t.signIn('openid orders:read');
    for (const token of [tokens.access_token, tokens.refresh_token!]) {
      assert.deepEqual(await client.tokenIntrospection(t.app, token), { active: false });
      assert.equal((await client.tokenIntrospection(introspector, token)).active, true);
    }
    const anonymous = await fetch(`${t.server.issuer}/introspect`, {
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
