// Revoking a grant recalls the JWT access tokens issued under it (RFC 7009 §2.1, RFC 6749 §4.1.2,
// RFC 9700 §4.14.2): the authorization server records the grant in revoked_grants, and every
// resource server refuses tokens whose `gid` names it. Real sockets, a real OAuth client
// (openid-client); a second instance over the same database sees what the first one revoked.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { decodeJwt } from 'jose';
import { createConfidentialClient, createPublicClient } from '../../src/auth/clients.store.ts';
import { digestOidcIdentifier } from '../../src/auth/oidc.adapter.ts';
import { REVOKED_GRANT_KEPT_SECONDS } from '../../src/auth/revoked-grants.store.ts';
import {
  assertRevokedToken,
  authorizeWithForms,
  FormBrowser,
  startAuthServer,
  startSecondInstance,
  type AuthServer,
  untilRefused,
} from '../helpers/oauth.ts';

const PORT = 29_601;
const SECOND_PORT = 29_602;
const REDIRECT_URI = 'http://127.0.0.1:29619/callback';
const SCOPE = 'openid orders:read';
const ADA = { email: 'revocation-ada@example.test', password: 'ada horse battery' };
const BO = { email: 'revocation-bo@example.test', password: 'bo horse battery' };
/** How long the second instance may take to see a revocation before the test gives up (not a speed claim). */
const PROPAGATION_DEADLINE_MS = 10_000;

let server: AuthServer;
let publicClientId: string;

before(async () => {
  // revocationCheckIntervalMs 0: this instance reads revoked_grants on every check, so each
  // refusal below is deterministic; the second instance (last describe) uses the default.
  server = await startAuthServer(PORT, {}, { revocationCheckIntervalMs: 0 });
  await server.createUser(ADA.email, ADA.password);
  await server.createUser(BO.email, BO.password);
  ({ clientId: publicClientId } = await createPublicClient(server.db, {
    name: 'Revocation app',
    redirectUris: [REDIRECT_URI],
    scopes: ['openid', 'offline_access', 'orders:read'],
  }));
});
after(async () => {
  await server.close();
});

function discover(clientId = publicClientId, auth: client.ClientAuth = client.None(), secret?: string): Promise<client.Configuration> {
  return client.discovery(new URL(server.issuer), clientId, secret, auth, { execute: [client.allowInsecureRequests] });
}

/** Signs `user` in through the forms (a fresh browser: a new session, hence a new grant). */
function authorize(config: client.Configuration, user = ADA, { scope = SCOPE, browser = new FormBrowser() } = {}) {
  // OpenID Connect Core §11: offline_access is granted only with prompt=consent.
  const prompt = scope.split(' ').includes('offline_access') ? 'consent' : undefined;
  return authorizeWithForms(server, config, {
    scope,
    redirectUri: REDIRECT_URI,
    email: user.email,
    password: user.password,
    browser,
    prompt,
  });
}

async function signIn(config: client.Configuration, user = ADA, options: { scope?: string; browser?: FormBrowser } = {}) {
  const { callback, checks } = await authorize(config, user, options);
  return client.authorizationCodeGrant(config, callback, checks);
}

function listOrders(accessToken: string, baseUrl = server.baseUrl): Promise<Response> {
  return fetch(`${baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${accessToken}` } });
}

async function assertAccepted(accessToken: string, baseUrl = server.baseUrl): Promise<void> {
  const response = await listOrders(accessToken, baseUrl);
  assert.equal(response.status, 200, await response.text());
}

const assertRevoked = (response: Response) => assertRevokedToken(server, response);

async function grantIdOfRefreshToken(refreshToken: string): Promise<string> {
  const { rows } = await server.db.query<{ grant_id: string }>(
    "SELECT grant_id FROM oidc_payloads WHERE model = 'RefreshToken' AND id = $1",
    [digestOidcIdentifier(refreshToken)],
  );
  assert.ok(rows[0]?.grant_id, 'the refresh token is stored with its grant');
  return rows[0].grant_id;
}

/** The revoked_grants row of this digest: how long it is kept, in seconds. */
async function revocationKeptSeconds(grantDigest: string): Promise<number | undefined> {
  const { rows } = await server.db.query<{ kept: number }>(
    'SELECT extract(epoch FROM expires_at - revoked_at)::int AS kept FROM revoked_grants WHERE grant_digest = $1',
    [grantDigest],
  );
  return rows[0]?.kept;
}

function gidOf(accessToken: string): string {
  const { gid } = decodeJwt(accessToken);
  assert.equal(typeof gid, 'string', 'a token issued under a grant carries gid');
  return gid as string;
}

describe('the gid claim', () => {
  test('an access token names its grant by digest, never by the grant id itself', async () => {
    const tokens = await signIn(await discover());
    const grantId = await grantIdOfRefreshToken(tokens.refresh_token!);
    assert.equal(gidOf(tokens.access_token), digestOidcIdentifier(grantId));
    assert.ok(!tokens.access_token.includes(grantId));
  });

  test('a client-credentials token has no grant, so no gid: it cannot be recalled before it expires', async () => {
    const service = await createConfidentialClient(server.db, { name: 'Revocation service', scopes: ['orders:read'] });
    const config = await discover(service.clientId, client.ClientSecretBasic(service.clientSecret), service.clientSecret);
    const { access_token: accessToken } = await client.clientCredentialsGrant(config, { scope: 'orders:read' });
    assert.equal(decodeJwt(accessToken).gid, undefined);
  });
});

describe('RFC 7009 §2.1: revoking a refresh token recalls the access tokens of its grant', () => {
  test('an access token the API accepted (and remembers) is refused once its refresh token is revoked', async () => {
    const config = await discover();
    const tokens = await signIn(config);
    await assertAccepted(tokens.access_token);

    await client.tokenRevocation(config, tokens.refresh_token!);

    await assertRevoked(await listOrders(tokens.access_token));
    assert.equal(await revocationKeptSeconds(gidOf(tokens.access_token)), REVOKED_GRANT_KEPT_SECONDS);
    // oidc-provider asks every grant-bound model to revoke: still one row.
    const { rows } = await server.db.query<{ n: number }>('SELECT count(*)::int AS n FROM revoked_grants WHERE grant_digest = $1', [
      gidOf(tokens.access_token),
    ]);
    assert.equal(rows[0]!.n, 1);
  });

  test('RFC 7009 §2.2.1: the JWT access token itself cannot be revoked (unsupported_token_type) and stays valid', async () => {
    const config = await discover();
    const tokens = await signIn(config);
    await assert.rejects(
      client.tokenRevocation(config, tokens.access_token),
      (error: client.ResponseBodyError) => error.error === 'unsupported_token_type',
    );
    await assertAccepted(tokens.access_token);
  });
});

describe('RFC 6749 §4.1.2: a reused authorization code recalls the tokens issued from it', () => {
  test('the access token of the first exchange is refused after the code is redeemed again', async () => {
    const config = await discover();
    const { callback, checks } = await authorize(config);
    const tokens = await client.authorizationCodeGrant(config, callback, checks);

    await assert.rejects(
      client.authorizationCodeGrant(config, callback, checks),
      (error: client.ResponseBodyError) => error.error === 'invalid_grant',
    );

    // Never presented before: refused on first sight, not only when remembered.
    await assertRevoked(await listOrders(tokens.access_token));
    assert.equal(await revocationKeptSeconds(gidOf(tokens.access_token)), REVOKED_GRANT_KEPT_SECONDS);
  });
});

describe('RFC 9700 §4.14.2: a reused refresh token recalls every access token of the grant', () => {
  test('the first and the rotated access token are both refused', async () => {
    const config = await discover();
    const tokens = await signIn(config);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.equal(gidOf(refreshed.access_token), gidOf(tokens.access_token), 'a refresh stays in the grant');
    await assertAccepted(tokens.access_token);
    await assertAccepted(refreshed.access_token);

    await assert.rejects(
      client.refreshTokenGrant(config, tokens.refresh_token!),
      (error: client.ResponseBodyError) => error.error === 'invalid_grant',
    );

    await assertRevoked(await listOrders(tokens.access_token));
    await assertRevoked(await listOrders(refreshed.access_token));
  });
});

describe('a revocation recalls only its own grant', () => {
  test("the user's other grant, another user's grant and a service token stay accepted", async () => {
    const config = await discover();
    const revoked = await signIn(config, ADA);
    const sameUserOtherGrant = await signIn(config, ADA);
    const otherUser = await signIn(config, BO);
    const service = await createConfidentialClient(server.db, { name: 'Bystander service', scopes: ['orders:read'] });
    const serviceConfig = await discover(service.clientId, client.ClientSecretBasic(service.clientSecret), service.clientSecret);
    const { access_token: serviceToken } = await client.clientCredentialsGrant(serviceConfig, { scope: 'orders:read' });
    assert.notEqual(gidOf(sameUserOtherGrant.access_token), gidOf(revoked.access_token));

    await client.tokenRevocation(config, revoked.refresh_token!);

    await assertRevoked(await listOrders(revoked.access_token));
    for (const accessToken of [sameUserOtherGrant.access_token, otherUser.access_token, serviceToken]) await assertAccepted(accessToken);
  });
});

describe('OpenID RP-Initiated Logout 1.0: signing out revokes the grants that end with the session', () => {
  async function signOut(browser: FormBrowser): Promise<void> {
    const page = await browser.request(`${server.issuer}/logout`);
    const html = await page.text();
    const action =
      /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"/.exec(html)?.[1] ??
      /<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"/.exec(html)?.[1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
    assert.ok(action && xsrf, 'the logout page has its form');
    const { response } = await browser.follow(new URL(action, server.baseUrl).toString(), { form: { xsrf, logout: 'yes' } });
    assert.match(await response.text(), /You are signed out/);
  }

  test('without offline_access the grant ends with the session, and its access tokens with it', async () => {
    const browser = new FormBrowser();
    const tokens = await signIn(await discover(), ADA, { browser });
    await assertAccepted(tokens.access_token);
    await signOut(browser);
    await assertRevoked(await listOrders(tokens.access_token));
  });

  test('with offline_access the grant outlives the session, and so do its access tokens', async () => {
    const browser = new FormBrowser();
    const config = await discover();
    const tokens = await signIn(config, ADA, { browser, scope: `${SCOPE} offline_access` });
    await signOut(browser);
    await assertAccepted(tokens.access_token);
    assert.ok((await client.refreshTokenGrant(config, tokens.refresh_token!)).access_token, 'the grant is still there');
  });
});

describe('every instance refuses a revoked grant through the shared database', () => {
  let second: FastifyInstance;

  before(async () => {
    second = await startSecondInstance(server, SECOND_PORT);
  });
  after(async () => {
    await second?.close();
  });

  test('a revocation at one instance is seen by another, which has already accepted the token', async (t) => {
    const secondUrl = `http://127.0.0.1:${SECOND_PORT}`;
    const config = await discover();
    const tokens = await signIn(config);
    await assertAccepted(tokens.access_token, secondUrl);

    await client.tokenRevocation(config, tokens.refresh_token!);
    const revokedAt = performance.now();

    // The second instance refreshes its copy at most once a second: asked until it refuses.
    const response = await untilRefused(() => listOrders(tokens.access_token, secondUrl), PROPAGATION_DEADLINE_MS);
    t.diagnostic(`refused by the second instance ${Math.round(performance.now() - revokedAt)} ms after the revocation`);
    await assertRevoked(response);
  });
});
