// Operators disable, erase and delete (docs/decisions/0112-disabling-and-erasing.md), proved with
// real sockets and a real OAuth client (openid-client): a disabled user's or client's access tokens
// are refused at the API (RFC 6750 §3.1 invalid_token) and inactive at introspection (RFC 7662
// §2.2), its refresh tokens refused at the token endpoint (RFC 6749 §5.2 invalid_grant, or
// invalid_client for a client), and the sign-in page refuses it as it refuses a wrong password.
// A second instance over the same database sees a disable within about a second.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { disableUser, enableUser, eraseUser } from '../../src/auth/accounts.service.ts';
import { issueTokenFor, signAccessToken, TokenRequestError } from '../../src/auth/access-token.ts';
import { createConfidentialClient, createPublicClient } from '../../src/auth/clients.store.ts';
import { deleteClient, disableClient, enableClient } from '../../src/auth/clients.service.ts';
import { ensureActiveSigningKey } from '../../src/auth/keys.store.ts';
import { createProduct } from '../helpers/factories.ts';
import {
  assertRevokedToken,
  buildPkceAuthorization,
  discoverClient,
  FormBrowser,
  readForm,
  signInWithForms,
  startAuthServer,
  startSecondInstance,
  untilRefused,
  type AuthServer,
} from '../helpers/oauth.ts';

const PORT = 29_810;
const SECOND_PORT = 29_811;
const REDIRECT_URI = 'http://127.0.0.1:29819/callback';
const SCOPE = 'openid orders:read orders:write payments:read payments:write';
const PASSWORD = 'operator horse battery';
/** How long the second instance may take to see a disable before the test gives up (not a speed claim). */
const PROPAGATION_DEADLINE_MS = 10_000;
const REFUSED_SIGN_IN = 'The email or password is not correct, or the account cannot sign in.';

let server: AuthServer;
let appClientId: string;
/** A resource server's credentials: introspects (RFC 7662 §2.1) what the tests hand it. */
let introspector: client.Configuration;

before(async () => {
  // revocationCheckIntervalMs 0: this instance reads the revocations on every check, so each
  // refusal below is deterministic; the second instance (last describe) uses the default.
  server = await startAuthServer(PORT, {}, { revocationCheckIntervalMs: 0 });
  ({ clientId: appClientId } = await createPublicClient(server.db, {
    name: 'Operator app',
    redirectUris: [REDIRECT_URI],
    scopes: SCOPE.split(' '),
  }));
  const resourceServer = await createConfidentialClient(server.db, { name: 'Introspecting API', scopes: ['orders:read'] });
  introspector = await discover(resourceServer.clientId, resourceServer.clientSecret);
});
after(async () => {
  await server.close();
});

function discover(clientId = appClientId, secret?: string): Promise<client.Configuration> {
  return discoverClient(server, clientId, secret === undefined ? client.None() : client.ClientSecretBasic(secret), secret);
}

async function newUser(role: 'customer' | 'staff' = 'customer') {
  const email = `operator-${randomUUID().slice(0, 8)}@example.test`;
  return { email, ...(await server.createUser(email, PASSWORD, role)) };
}

const authorize = async () => buildPkceAuthorization(await discover(), { redirectUri: REDIRECT_URI, scope: SCOPE });

/** Signs the user in through the forms and exchanges the code: the tokens an app gets. */
async function signIn(email: string, browser = new FormBrowser()) {
  const { url, checks } = await authorize();
  const callback = await signInWithForms(server, url, email, PASSWORD, browser);
  return client.authorizationCodeGrant(await discover(), callback, checks);
}

/** The login form posted with this email and password: the page that answers it. */
async function submitLogin(email: string, password: string, browser = new FormBrowser()): Promise<Response> {
  const { response } = await browser.follow((await authorize()).url);
  const login = readForm(await response.text());
  return browser.request(new URL(login.action, server.baseUrl).toString(), { form: { ...login.fields, email, password } });
}

function api(path: string, accessToken: string, baseUrl = server.baseUrl, init: RequestInit = {}): Promise<Response> {
  return fetch(`${baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${accessToken}`, ...init.headers } });
}

async function assertAccepted(accessToken: string, baseUrl = server.baseUrl): Promise<void> {
  const response = await api('/v1/orders', accessToken, baseUrl);
  assert.equal(response.status, 200, await response.text());
}

const assertRevoked = (response: Response) => assertRevokedToken(server, response);

const assertRefusedAtApi = async (accessToken: string) => assertRevoked(await api('/v1/orders', accessToken));
const introspect = async (token: string) => (await client.tokenIntrospection(introspector, token)).active;
/**
 * RFC 6749 §5.2: the error of a token or introspection response. A client that authenticated with
 * Basic gets it as a 401 challenge (WWW-Authenticate), which openid-client raises as its own error.
 */
const oauthError = (expected: string) => (error: unknown) =>
  (error instanceof client.ResponseBodyError && error.error === expected) ||
  (error instanceof client.WWWAuthenticateChallengeError && error.status === 401 && error.cause[0]?.parameters.error === expected);

/** A token for the subject signed `secondsAgo` seconds back: as `orderpay tokens issue` signed it then (no grant). */
async function tokenIssuedBefore(subject: { userId: number } | { clientId: string }, secondsAgo: number): Promise<string> {
  const key = await ensureActiveSigningKey(server.db);
  const clientId = 'clientId' in subject ? subject.clientId : 'orderpay-cli';
  return signAccessToken(key, {
    issuer: server.config.issuer,
    audience: server.config.audience,
    subject: 'clientId' in subject ? subject.clientId : String(subject.userId),
    clientId,
    scope: 'orders:read',
    now: new Date(Date.now() - secondsAgo * 1000),
  });
}

async function oidcRowsOfAccount(accountId: number): Promise<string[]> {
  const { rows } = await server.db.query<{ model: string }>(
    `SELECT model FROM oidc_payloads WHERE payload ->> 'accountId' = $1 OR payload #>> '{session,accountId}' = $1 ORDER BY model`,
    [String(accountId)],
  );
  return rows.map((row) => row.model);
}

describe('a disabled user (orderpay users disable)', () => {
  test('its access token is refused at once, its refresh token is invalid_grant, introspection says inactive', async () => {
    const user = await newUser();
    const tokens = await signIn(user.email);
    await assertAccepted(tokens.access_token);
    assert.equal(await introspect(tokens.access_token), true);
    assert.ok((await oidcRowsOfAccount(user.id)).length > 0, 'the sign-in left a session, a grant and a refresh token');

    const change = await disableUser(server.db, { id: user.id });
    assert.equal(change.outcome, 'changed');
    assert.ok(change.outcome === 'changed' && change.revokedGrants >= 1);

    await assertRefusedAtApi(tokens.access_token);
    assert.equal(await introspect(tokens.access_token), false);
    const userinfo = await fetch(`${server.issuer}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(userinfo.status, 401);
    assert.equal(
      userinfo.headers.get('www-authenticate'),
      'Bearer realm="orderpay", error="invalid_token", error_description="the token has been revoked"',
    );
    await userinfo.body?.cancel();
    await assert.rejects(client.refreshTokenGrant(await discover(), tokens.refresh_token!), oauthError('invalid_grant'));
    assert.deepEqual(await oidcRowsOfAccount(user.id), [], 'no session, grant, code or token of the user is left');
  });

  test('the sign-in page refuses it with the right password exactly as it refuses a wrong one', async () => {
    const user = await newUser();
    const bystander = await newUser();
    await disableUser(server.db, { email: user.email.toUpperCase() });

    const disabled = await submitLogin(user.email, PASSWORD);
    const wrongPassword = await submitLogin(bystander.email, 'not the password');
    const unknown = await submitLogin(`nobody-${randomUUID()}@example.test`, PASSWORD);
    const alerts: string[] = [];
    for (const response of [disabled, wrongPassword, unknown]) {
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('retry-after'), null);
      alerts.push(/<p class="error" role="alert">([^<]*)<\/p>/.exec(await response.text())?.[1] ?? '');
    }
    assert.deepEqual(alerts, [REFUSED_SIGN_IN, REFUSED_SIGN_IN, REFUSED_SIGN_IN]);
  });

  test('a browser session it had does not sign it in again: the login page is shown', async () => {
    const user = await newUser();
    const browser = new FormBrowser();
    await signIn(user.email, browser);
    await disableUser(server.db, { id: user.id });

    const { response, url } = await browser.follow((await authorize()).url);
    assert.equal(new URL(url).origin, server.baseUrl, 'no code is sent to the app');
    assert.equal(response.status, 200);
    assert.match(await response.text(), /name="password"/);
  });

  test('tokens without a grant (tokens issue) are refused too, and none are issued while it is disabled', async () => {
    const user = await newUser('staff');
    const earlier = await tokenIssuedBefore({ userId: user.id }, 10);
    await assertAccepted(earlier);
    await disableUser(server.db, { id: user.id });
    await assertRefusedAtApi(earlier);
    await assert.rejects(
      issueTokenFor(server.db, server.config, { email: user.email }),
      (error: unknown) => error instanceof TokenRequestError && error.message === `user ${user.email} is disabled (orderpay users enable)`,
    );
  });

  test('enabled again, it signs in and its new tokens work; what was issued before stays refused', async () => {
    const user = await newUser();
    const first = await signIn(user.email);
    const earlier = await tokenIssuedBefore({ userId: user.id }, 10);
    await disableUser(server.db, { id: user.id });
    const change = await enableUser(server.db, { id: user.id });
    assert.equal(change.outcome, 'changed');

    await assertRefusedAtApi(first.access_token);
    await assertRefusedAtApi(earlier);
    await assert.rejects(client.refreshTokenGrant(await discover(), first.refresh_token!), oauthError('invalid_grant'));

    const second = await signIn(user.email);
    await assertAccepted(second.access_token);
    await assertAccepted(await issueTokenFor(server.db, server.config, { email: user.email }, ['orders:read']));
  });
});

describe('an erased user (orderpay users erase)', () => {
  test('its personal data is gone and it cannot sign in; its order, payment and events stay, naming its id', async () => {
    const user = await newUser();
    const tokens = await signIn(user.email);
    const product = await createProduct(server.db, { price: 1500, currency: 'EUR' });
    const placed = await api('/v2/orders', tokens.access_token, server.baseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ productId: product.id, qty: 1 }] }),
    });
    assert.equal(placed.status, 201, await placed.clone().text());
    const order = (await placed.json()) as { id: number };
    const paid = await api('/v2/payments', tokens.access_token, server.baseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ amount: { value: 1500, currency: 'EUR' }, orderId: order.id }),
    });
    assert.equal(paid.status, 201, await paid.clone().text());
    const payment = (await paid.json()) as { id: number; status: string };
    assert.equal(payment.status, 'succeeded');

    const change = await eraseUser(server.db, { email: user.email });
    assert.equal(change.outcome, 'changed');

    await assertRefusedAtApi(tokens.access_token);
    assert.equal((await submitLogin(user.email, PASSWORD)).status, 401);
    const { rows } = await server.db.query(
      'SELECT email, name, password_hash, disabled_at IS NOT NULL AS disabled FROM users WHERE id = $1',
      [user.id],
    );
    assert.deepEqual(rows, [{ email: `erased-user-${user.id}@erased.invalid`, name: 'Erased user', password_hash: null, disabled: true }]);

    // Staff still account for what the user did, under its id.
    const staff = await newUser('staff');
    const staffToken = await issueTokenFor(server.db, server.config, { email: staff.email });
    const orderRead = (await (await api(`/v2/orders/${order.id}`, staffToken)).json()) as { customerId: number; status: string };
    assert.deepEqual({ customerId: orderRead.customerId, status: orderRead.status }, { customerId: user.id, status: 'paid' });
    const paymentRead = (await (await api(`/v2/payments/${payment.id}`, staffToken)).json()) as { customerId: number };
    assert.equal(paymentRead.customerId, user.id);
    const events = (await (await api('/v2/events', staffToken)).json()) as {
      data: { type: string; data: { object: { id: number; customerId: number } } }[];
    };
    const paymentEvent = events.data.find((event) => event.type === 'payment.succeeded' && event.data.object.id === payment.id);
    assert.equal(paymentEvent?.data.object.customerId, user.id);

    // The address is free: it names no one here any more.
    const again = await server.createUser(user.email, PASSWORD);
    assert.notEqual(again.id, user.id);
  });
});

describe('a disabled client (orderpay clients disable)', () => {
  async function newService() {
    const service = await createConfidentialClient(server.db, { name: `Service ${randomUUID().slice(0, 6)}`, scopes: ['orders:read'] });
    return { ...service, config: await discover(service.clientId, service.clientSecret) };
  }

  for (const [what, change, remaining] of [
    ['disabled', disableClient, [{ disabled: true }]],
    ['deleted', deleteClient, []],
  ] as const) {
    test(`${what}: its access token is refused and inactive; the token endpoint does not know it (invalid_client)`, async () => {
      const service = await newService();
      const { access_token: accessToken } = await client.clientCredentialsGrant(service.config, { scope: 'orders:read' });
      await assertAccepted(accessToken);

      assert.equal((await change(server.db, service.clientId)).outcome, 'changed');

      await assertRefusedAtApi(accessToken);
      assert.equal(await introspect(accessToken), false);
      await assert.rejects(client.clientCredentialsGrant(service.config, { scope: 'orders:read' }), oauthError('invalid_client'));
      await assert.rejects(client.tokenIntrospection(service.config, accessToken), oauthError('invalid_client'));
      const { rows } = await server.db.query('SELECT disabled_at IS NOT NULL AS disabled FROM oauth_clients WHERE client_id = $1', [
        service.clientId,
      ]);
      assert.deepEqual(rows, remaining);
    });
  }

  test("a public client: users' tokens through it are refused, its refresh tokens too, and it cannot start a sign-in", async () => {
    const user = await newUser();
    const tokens = await signIn(user.email);
    await assertAccepted(tokens.access_token);

    await disableClient(server.db, appClientId);
    try {
      await assertRefusedAtApi(tokens.access_token);
      await assert.rejects(client.refreshTokenGrant(await discover(), tokens.refresh_token!), oauthError('invalid_client'));
      const page = await fetch((await authorize()).url, { redirect: 'manual' });
      assert.equal(page.status, 400);
      await page.body?.cancel();
    } finally {
      await enableClient(server.db, appClientId);
    }
    await assertRefusedAtApi(tokens.access_token);
    await assertAccepted((await signIn(user.email)).access_token);
  });

  test('enabled again, it gets tokens that work; a token issued before it was disabled stays refused', async () => {
    const service = await newService();
    const earlier = await tokenIssuedBefore({ clientId: service.clientId }, 10);
    await assertAccepted(earlier);
    await disableClient(server.db, service.clientId);
    await assert.rejects(
      issueTokenFor(server.db, server.config, { clientId: service.clientId }),
      (error: unknown) => error instanceof TokenRequestError && /is disabled/.test(error.message),
    );
    assert.equal((await enableClient(server.db, service.clientId)).outcome, 'changed');

    await assertRefusedAtApi(earlier);
    const { access_token: accessToken } = await client.clientCredentialsGrant(service.config, { scope: 'orders:read' });
    await assertAccepted(accessToken);
    assert.equal(await introspect(accessToken), true);
  });

  test('the /docs page’s built-in client is not changed by these commands', async () => {
    for (const change of [disableClient, enableClient, deleteClient]) {
      assert.deepEqual(await change(server.db, 'orderpay-docs'), { outcome: 'built-in' });
    }
  });
});

describe('every instance refuses a disabled user through the shared database', () => {
  let second: FastifyInstance;

  before(async () => {
    second = await startSecondInstance(server, SECOND_PORT);
  });
  after(async () => {
    await second?.close();
  });

  test('a disable is seen by another instance that has already accepted the token', async (t) => {
    const secondUrl = `http://127.0.0.1:${SECOND_PORT}`;
    const user = await newUser();
    const tokens = await signIn(user.email);
    await assertAccepted(tokens.access_token, secondUrl);

    await disableUser(server.db, { id: user.id });
    const disabledAt = performance.now();

    const response = await untilRefused(() => api('/v1/orders', tokens.access_token, secondUrl), PROPAGATION_DEADLINE_MS);
    t.diagnostic(`refused by the second instance ${Math.round(performance.now() - disabledAt)} ms after the disable`);
    await assertRevoked(response);
  });
});
