// The negative half of the OpenID conformance suite, ported to a real socket: each describe names
// the conformance module it ports (FAPI 2.0 modules keep their full name; cases no module covers
// name the RFC section), each test asserts the exact protocol answer — status, the RFC 6749
// §4.1.2.1 / §5.2 error code, no token issued — and the stored state where it matters.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hash, randomBytes } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createConfidentialClient, createPublicClient } from '../../src/auth/clients.store.ts';
import { digestOidcIdentifier } from '../../src/auth/oidc.adapter.ts';
import { TOKEN_TTL } from '../../src/auth/provider.ts';
import { FormBrowser, readForm, signInWithForms, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_121;
const REDIRECT_URI = 'http://127.0.0.1:29198/callback';
const OTHER_REDIRECT_URI = 'http://127.0.0.1:29198/other-app/callback';
const CUSTOMER = { email: 'negative-customer@example.test', password: 'customer horse battery' };
const STAFF = { email: 'negative-staff@example.test', password: 'staff horse battery' };
const TOKEN_FIELDS = ['access_token', 'refresh_token', 'id_token', 'code'] as const;

let server: AuthServer;
/** Client A: the app under test, registered for staff-only scopes too. */
let appA: string;
/** Client B: another public client, the would-be thief of A's codes and refresh tokens. */
let appB: string;
/** A confidential client (a resource server) that may introspect any token (RFC 7662 §4). */
let introspector: { clientId: string; clientSecret: string };

before(async () => {
  server = await startAuthServer(PORT);
  await server.createUser(CUSTOMER.email, CUSTOMER.password, 'customer');
  await server.createUser(STAFF.email, STAFF.password, 'staff');
  ({ clientId: appA } = await createPublicClient(server.db, {
    name: 'Conformance app A',
    redirectUris: [REDIRECT_URI],
    scopes: ['openid', 'profile', 'email', 'offline_access', 'orders:read', 'orders:write', 'products:write', 'payments:refund'],
  }));
  ({ clientId: appB } = await createPublicClient(server.db, {
    name: 'Conformance app B',
    redirectUris: [OTHER_REDIRECT_URI],
    scopes: ['openid', 'orders:read'],
  }));
  introspector = await createConfidentialClient(server.db, { name: 'Conformance introspector', scopes: ['orders:read'] });
});
after(async () => {
  await server.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

function createPkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: hash('sha256', verifier, 'base64url') };
}

function authorizationUrl(params: Record<string, string | undefined>): string {
  const defined = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return `${server.issuer}/authorize?${new URLSearchParams(defined)}`;
}

/** A well-formed code request for app A; `overrides` set (or, with undefined, drop) parameters. */
function codeRequest(challenge: string, overrides: Record<string, string | undefined> = {}): string {
  return authorizationUrl({
    response_type: 'code',
    client_id: appA,
    redirect_uri: REDIRECT_URI,
    scope: 'openid orders:read',
    state: randomBytes(12).toString('base64url'),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  });
}

/** The authorization endpoint's immediate answer, redirects not followed. */
async function authorizeOnce(url: string) {
  const response = await fetch(url, { redirect: 'manual' });
  return { status: response.status, headers: response.headers, location: response.headers.get('location'), body: await response.text() };
}

/** The parameters of a redirect to the client: the query, or the fragment for fragment mode. */
function callbackParams(location: string): URLSearchParams {
  const url = new URL(location);
  return new URLSearchParams(url.hash ? url.hash.slice(1) : url.search);
}

function assertNoTokens(params: URLSearchParams | Record<string, unknown>): void {
  for (const field of TOKEN_FIELDS) {
    const value = params instanceof URLSearchParams ? params.get(field) : params[field];
    assert.ok(value === null || value === undefined, `${field} must not be issued`);
  }
}

/** Signs `user` in through app A's login and consent pages; returns the code and its verifier. */
async function obtainCode({ scope = 'openid orders:read', user = CUSTOMER, state = randomBytes(12).toString('base64url') } = {}) {
  const { verifier, challenge } = createPkcePair();
  const callback = await signInWithForms(server, codeRequest(challenge, { scope, state }), user.email, user.password);
  assert.equal(callback.origin + callback.pathname, REDIRECT_URI, `expected the callback, got ${callback}`);
  const code = callback.searchParams.get('code');
  assert.ok(code, `no code in ${callback}`);
  return { code, verifier, callback, state };
}

async function requestTokens(params: Record<string, string>, authorization?: string): Promise<Answer> {
  const response = await fetch(`${server.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
    body: new URLSearchParams(params),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

function redeemCode(code: string, verifier: string | undefined, clientId = appA): Promise<Answer> {
  const params: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: clientId };
  if (verifier !== undefined) params.code_verifier = verifier;
  return requestTokens(params);
}

function refresh(refreshToken: string, clientId = appA): Promise<Answer> {
  return requestTokens({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
}

/** RFC 6749 §5.2: a JSON error with this code, never cached, and no token of any kind. */
function assertTokenError(answer: Answer, error: string, status = 400): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.equal(answer.headers.get('cache-control'), 'no-store');
  assert.equal(answer.body.error, error, JSON.stringify(answer.body));
  assertNoTokens(answer.body);
}

function basicAuthorization(clientId: string, secret: string): string {
  // RFC 6749 §2.3.1: both parts form-urlencoded before base64.
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

async function introspect(token: string): Promise<Answer> {
  const response = await fetch(`${server.issuer}/introspect`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basicAuthorization(introspector.clientId, introspector.clientSecret),
    },
    body: new URLSearchParams({ token }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

function tokensOf(answer: Answer): { accessToken: string; refreshToken: string; idToken?: string } {
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const { access_token: accessToken, refresh_token: refreshToken, id_token: idToken } = answer.body;
  assert.ok(typeof accessToken === 'string' && typeof refreshToken === 'string');
  return { accessToken, refreshToken, idToken: typeof idToken === 'string' ? idToken : undefined };
}

/** The models stored for a grant: its Grant row and every row bound to it. */
async function storedModelsOfGrant(grantId: string): Promise<string[]> {
  const { rows } = await server.db.query<{ model: string }>(
    'SELECT model FROM oidc_payloads WHERE grant_id = $1 OR (model = $2 AND id = $3) ORDER BY model',
    [grantId, 'Grant', digestOidcIdentifier(grantId)],
  );
  return rows.map((row) => row.model);
}

async function grantIdOfRefreshToken(refreshToken: string): Promise<string> {
  const { rows } = await server.db.query<{ grant_id: string }>(
    "SELECT grant_id FROM oidc_payloads WHERE model = 'RefreshToken' AND id = $1",
    [digestOidcIdentifier(refreshToken)],
  );
  assert.ok(rows[0]?.grant_id);
  return rows[0].grant_id;
}

describe('oidcc-codereuse (RFC 6749 §4.1.2, §10.5; RFC 9700 §4.2.4)', () => {
  test('a code redeemed twice is invalid_grant, and the tokens of the first exchange are revoked', async () => {
    const { code, verifier } = await obtainCode();
    const { accessToken, refreshToken } = tokensOf(await redeemCode(code, verifier));
    assert.equal((await introspect(refreshToken)).body.active, true);
    const grantId = await grantIdOfRefreshToken(refreshToken);
    assert.deepEqual(await storedModelsOfGrant(grantId), ['AuthorizationCode', 'Grant', 'RefreshToken']);

    assertTokenError(await redeemCode(code, verifier), 'invalid_grant');

    assert.deepEqual((await introspect(refreshToken)).body, { active: false });
    assertTokenError(await refresh(refreshToken), 'invalid_grant');
    // The whole grant is gone: its code, its refresh token and the Grant itself.
    assert.deepEqual(await storedModelsOfGrant(grantId), []);
    assertTokenError(await redeemCode(code, verifier), 'invalid_grant');

    // The access token is an RFC 9068 JWT: introspection reads its grant from revoked_grants, as
    // the resource server does (test/e2e/token-revocation.test.ts); its lifetime, asserted here,
    // bounds it whatever happens.
    const introspection = await introspect(accessToken);
    assert.equal(introspection.status, 200);
    assert.deepEqual(introspection.body, { active: false });
    const claims = decodeJwt(accessToken);
    assert.equal(claims.exp! - claims.iat!, TOKEN_TTL.AccessToken);
  });
});

describe('oidcc-ensure-registered-redirect-uri (RFC 6749 §3.1.2.4, §4.1.2.1; RFC 9700 §4.1.3)', () => {
  const unregistered = [
    'http://127.0.0.1:29198/elsewhere',
    `${REDIRECT_URI}/`,
    `${REDIRECT_URI}?next=1`,
    'http://127.0.0.1:29197/callback',
    'http://localhost:29198/callback',
    OTHER_REDIRECT_URI, // registered, but for another client
  ];
  for (const redirectUri of unregistered) {
    test(`an unregistered redirect_uri ${redirectUri} gets an error page, never a redirect`, async () => {
      const { challenge } = createPkcePair();
      const answer = await authorizeOnce(codeRequest(challenge, { redirect_uri: redirectUri }));
      assert.equal(answer.status, 400);
      assert.equal(answer.location, null);
      assert.equal(answer.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      assert.match(answer.body, /invalid_redirect_uri/);
    });
  }

  test('an unregistered redirect_uri wins over any other error in the request: still no redirect', async () => {
    const answer = await authorizeOnce(
      codeRequest('', { redirect_uri: 'http://127.0.0.1:29198/elsewhere', code_challenge: undefined, scope: 'openid payments:write' }),
    );
    assert.equal(answer.status, 400);
    assert.equal(answer.location, null);
    assert.match(answer.body, /invalid_redirect_uri/);
  });

  test("RFC 6749 §4.1.3: the token request must repeat the authorization request's redirect_uri", async () => {
    const { code, verifier } = await obtainCode();
    assertTokenError(
      await requestTokens({
        grant_type: 'authorization_code',
        code,
        redirect_uri: `${REDIRECT_URI}/`,
        client_id: appA,
        code_verifier: verifier,
      }),
      'invalid_grant',
    );
  });
});

describe('RFC 7636 + RFC 9700 §2.1.1: PKCE with S256 is required', () => {
  function assertRedirectedError(answer: Awaited<ReturnType<typeof authorizeOnce>>, state: string, description: RegExp): void {
    assert.equal(answer.status, 303);
    const location = new URL(answer.location!);
    assert.equal(location.origin + location.pathname, REDIRECT_URI);
    const params = callbackParams(answer.location!);
    assert.equal(params.get('error'), 'invalid_request');
    assert.match(params.get('error_description') ?? '', description);
    assert.equal(params.get('state'), state);
    assert.equal(params.get('iss'), server.issuer); // RFC 9207
    assertNoTokens(params);
  }

  test('fapi2-security-profile-final-par-ensure-pkce-required (front channel): no code_challenge → invalid_request at the redirect_uri', async () => {
    const answer = await authorizeOnce(
      codeRequest('', { code_challenge: undefined, code_challenge_method: undefined, state: 'no-challenge' }),
    );
    assertRedirectedError(answer, 'no-challenge', /requires PKCE/);
  });

  test('fapi2-security-profile-final-par-plain-pkce-rejected: code_challenge_method=plain → invalid_request', async () => {
    const { verifier } = createPkcePair();
    const answer = await authorizeOnce(codeRequest(verifier, { code_challenge_method: 'plain', state: 'plain' }));
    assertRedirectedError(answer, 'plain', /code_challenge_method/);
  });

  test('a code_challenge without code_challenge_method (plain by default, RFC 7636 §4.3) → invalid_request', async () => {
    const { challenge } = createPkcePair();
    const answer = await authorizeOnce(codeRequest(challenge, { code_challenge_method: undefined, state: 'implicit-plain' }));
    assertRedirectedError(answer, 'implicit-plain', /code_challenge_method/);
  });

  test('fapi2-security-profile-final-ensure-pkce-code-verifier-required: no code_verifier → invalid_grant', async () => {
    const { code } = await obtainCode();
    assertTokenError(await redeemCode(code, undefined), 'invalid_grant');
  });

  test('fapi2-security-profile-final-incorrect-pkce-code-verifier-rejected: a wrong code_verifier → invalid_grant', async () => {
    const { code } = await obtainCode();
    assertTokenError(await redeemCode(code, createPkcePair().verifier), 'invalid_grant');
  });

  test('RFC 7636 §4.1: a malformed code_verifier (under 43 characters) → invalid_request', async () => {
    const { code } = await obtainCode();
    assertTokenError(await redeemCode(code, 'short'), 'invalid_request');
  });
});

describe('fapi2-security-profile-final-ensure-token-endpoint-fails-with-expired-auth-code (RFC 6749 §4.1.2: 60 s)', () => {
  test('a code redeemed after its lifetime is invalid_grant', async () => {
    const { code, verifier } = await obtainCode();
    await server.backdateOidcPayload('AuthorizationCode', code, TOKEN_TTL.AuthorizationCode + 1);
    assertTokenError(await redeemCode(code, verifier), 'invalid_grant');
  });

  test('a code redeemed just before the end of its lifetime still works', async () => {
    const { code, verifier } = await obtainCode();
    await server.backdateOidcPayload('AuthorizationCode', code, TOKEN_TTL.AuthorizationCode - 5);
    tokensOf(await redeemCode(code, verifier));
  });
});

describe('fapi2-security-profile-final-ensure-authorization-code-is-bound-to-client (RFC 6749 §4.1.3, §10.5)', () => {
  test("client B redeeming client A's code (with the right verifier) → invalid_grant; the code stays A's", async () => {
    const { code, verifier } = await obtainCode();
    assertTokenError(await redeemCode(code, verifier, appB), 'invalid_grant');
    // The failed attempt neither consumed nor revoked it: B cannot burn A's code either.
    tokensOf(await redeemCode(code, verifier));
  });
});

describe('RFC 6749 §6, §10.4: a refresh token is bound to its client', () => {
  test("client B refreshing with client A's refresh token → invalid_grant; A's token still works", async () => {
    const { code, verifier } = await obtainCode();
    const { refreshToken } = tokensOf(await redeemCode(code, verifier));
    assertTokenError(await refresh(refreshToken, appB), 'invalid_grant');
    const rotated = tokensOf(await refresh(refreshToken));
    assert.notEqual(rotated.refreshToken, refreshToken);
  });
});

describe('fapi2-security-profile-final-ensure-authorization-request-with-long-state (RFC 6749 §4.1.2: state echoed exactly)', () => {
  test('a 2,000-character state comes back byte for byte', async () => {
    const state = randomBytes(1500).toString('base64url');
    assert.equal(state.length, 2000);
    const { callback } = await obtainCode({ state });
    assert.equal(callback.searchParams.get('state'), state);
  });

  test('a state of unusual characters comes back byte for byte', async () => {
    const state = ' !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~ é 中文 😀 %20 &amp;';
    const { callback } = await obtainCode({ state });
    assert.equal(callback.searchParams.get('state'), state);
  });
});

describe('RFC 6749 §3.3: scopes', () => {
  test('an unknown scope is dropped, never granted nor carried by a token', async () => {
    const { code, verifier, callback } = await obtainCode({ scope: 'openid orders:read urn:example:unknown' });
    assert.equal(callback.searchParams.get('error'), null);
    const answer = await redeemCode(code, verifier);
    const { accessToken, refreshToken } = tokensOf(answer);
    assert.equal(answer.body.scope, 'openid orders:read');
    assert.equal(decodeJwt(accessToken).scope, 'openid orders:read');
    assert.equal((await introspect(refreshToken)).body.scope, 'openid orders:read');
  });

  test('a scope the client is not registered for → invalid_scope at the redirect_uri', async () => {
    const { challenge } = createPkcePair();
    const answer = await authorizeOnce(codeRequest(challenge, { scope: 'openid payments:write', state: 'scope' }));
    assert.equal(answer.status, 303);
    const params = callbackParams(answer.location!);
    assert.equal(params.get('error'), 'invalid_scope');
    assert.equal(params.get('state'), 'scope');
    assertNoTokens(params);
  });

  test('a customer asking for the staff-only products:write and payments:refund is never granted them; the consent page does not offer them', async () => {
    const { challenge } = createPkcePair();
    const browser = new FormBrowser();
    const url = codeRequest(challenge, { scope: 'openid orders:read products:write payments:refund' });
    let { response } = await browser.follow(url);
    const login = readForm(await response.text());
    ({ response } = await browser.follow(new URL(login.action, server.baseUrl).toString(), {
      form: { ...login.fields, email: CUSTOMER.email, password: CUSTOMER.password },
    }));
    assert.equal(response.status, 200);
    const consentHtml = await response.text();
    assert.match(consentHtml, /\(orders:read\)/);
    assert.doesNotMatch(consentHtml, /products:write/);
    assert.doesNotMatch(consentHtml, /payments:refund/);

    const { code, verifier } = await obtainCode({ scope: 'openid orders:read products:write payments:refund', user: CUSTOMER });
    const answer = await redeemCode(code, verifier);
    const { accessToken, refreshToken } = tokensOf(answer);
    assert.equal(answer.body.scope, 'openid orders:read');
    const claims = decodeJwt(accessToken);
    assert.equal(claims.scope, 'openid orders:read');
    assert.equal(claims.roles, undefined);
    assert.equal((await introspect(refreshToken)).body.scope, 'openid orders:read');
    // Refreshing cannot widen it either (RFC 6749 §6: no scope beyond the original grant).
    const widened = await requestTokens({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: appA,
      scope: 'orders:read products:write',
    });
    assertTokenError(widened, 'invalid_scope');
    assert.equal(decodeJwt(tokensOf(await refresh(refreshToken)).accessToken).scope, 'openid orders:read');
  });

  test('a staff user asking for products:write and payments:refund is granted them', async () => {
    const { code, verifier } = await obtainCode({ scope: 'openid orders:read products:write payments:refund', user: STAFF });
    const answer = await redeemCode(code, verifier);
    const claims = decodeJwt(tokensOf(answer).accessToken);
    assert.equal(answer.body.scope, 'openid orders:read products:write payments:refund');
    assert.equal(claims.scope, 'openid orders:read products:write payments:refund');
    assert.deepEqual(claims.roles, ['staff']);
  });
});

describe('oidcc-idtoken-unsigned, oidcc-idtoken-rs256 (RFC 8725 §3.1, §3.2): alg none is never issued', () => {
  test('id_token and access_token are RS256, signed by a published RSA key', async () => {
    const { code, verifier } = await obtainCode();
    const { accessToken, idToken } = tokensOf(await redeemCode(code, verifier));
    const jwks = (await (await fetch(`${server.issuer}/jwks`)).json()) as { keys: Array<Record<string, unknown>> };
    assert.ok(jwks.keys.length > 0);
    for (const key of jwks.keys) {
      assert.equal(key.kty, 'RSA');
      assert.equal(key.d, undefined, 'no private part is published');
    }
    for (const token of [accessToken, idToken!]) {
      const header = decodeProtectedHeader(token);
      assert.equal(header.alg, 'RS256');
      assert.ok(
        jwks.keys.some((key) => key.kid === header.kid),
        `kid ${header.kid} is in the JWKS`,
      );
    }
    assert.equal(decodeProtectedHeader(accessToken).typ, 'at+jwt');
  });

  test('discovery offers no none and no HS* for id tokens, request objects or userinfo', async () => {
    const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    // RS256 by default; PS256 for FAPI 2.0 clients (FAPI 2.0 §5.4.1).
    assert.deepEqual(metadata.id_token_signing_alg_values_supported, ['RS256', 'PS256']);
    // Request objects and signed userinfo are not enabled: no algorithms are advertised at all.
    assert.equal(metadata.request_object_signing_alg_values_supported, undefined);
    assert.equal(metadata.userinfo_signing_alg_values_supported, undefined);
    assert.notEqual(metadata.request_parameter_supported, true);
    for (const [name, values] of Object.entries(metadata).filter(([name]) => name.endsWith('_alg_values_supported'))) {
      for (const alg of values as string[]) assert.ok(alg !== 'none' && !alg.startsWith('HS'), `${name} offers ${alg}`);
    }
  });

  test('oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported: request=alg none → request_not_supported', async () => {
    const { challenge } = createPkcePair();
    const claims = {
      client_id: appA,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'openid orders:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
    const answer = await authorizeOnce(codeRequest(challenge, { request: unsigned, state: 'jar' }));
    assert.equal(answer.status, 303);
    const params = callbackParams(answer.location!);
    assert.equal(params.get('error'), 'request_not_supported');
    assert.equal(params.get('state'), 'jar');
    assertNoTokens(params);
  });
});

describe('oidcc-discovery-endpoint-verification (OpenID Discovery §3, RFC 8414 §2, §3)', () => {
  test('the metadata advertises only the code flow with S256, and no implicit or password grant', async () => {
    const response = await fetch(`${server.issuer}/.well-known/openid-configuration`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    const metadata = (await response.json()) as Record<string, unknown>;
    assert.equal(metadata.issuer, server.issuer);
    assert.deepEqual(metadata.response_types_supported, ['code']);
    assert.deepEqual(metadata.grant_types_supported, ['authorization_code', 'refresh_token', 'client_credentials']);
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
    // Only what a registered client can use: public clients (none), confidential ones (Basic),
    // FAPI 2.0 clients (private_key_jwt, with FAPI 2.0 §5.4.1's algorithms only).
    assert.deepEqual(metadata.token_endpoint_auth_methods_supported, ['client_secret_basic', 'private_key_jwt', 'none']);
    assert.deepEqual(metadata.token_endpoint_auth_signing_alg_values_supported, ['PS256', 'ES256', 'EdDSA']);
    assert.equal(metadata.authorization_response_iss_parameter_supported, true); // RFC 9207
    assert.deepEqual(metadata.subject_types_supported, ['public']);
  });

  test('RFC 8414 §3.1: /.well-known/oauth-authorization-server/oauth is the same document', async () => {
    const oidc = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    const response = await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server/oauth`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    const oauth = (await response.json()) as Record<string, unknown>;
    // RFC 8414 §3.3: the issuer must be the one the metadata URL was built from.
    assert.equal(oauth.issuer, server.issuer);
    for (const endpoint of [
      'authorization_endpoint',
      'token_endpoint',
      'jwks_uri',
      'introspection_endpoint',
      'revocation_endpoint',
      'userinfo_endpoint',
    ]) {
      assert.equal(oauth[endpoint], oidc[endpoint], endpoint);
    }
    assert.deepEqual(oauth, oidc);
    assert.equal(oauth.authorization_endpoint, `${server.issuer}/authorize`);
    assert.equal(oauth.token_endpoint, `${server.issuer}/token`);
  });
});

describe('fapi2-security-profile-final-ensure-response-type-token-fails, …-code-idtoken-fails (OAuth 2.1: code only)', () => {
  for (const responseType of ['token', 'id_token', 'id_token token', 'code id_token', 'code token']) {
    test(`response_type=${responseType} → unsupported_response_type, no token in the redirect`, async () => {
      const { challenge } = createPkcePair();
      const answer = await authorizeOnce(codeRequest(challenge, { response_type: responseType, nonce: 'n-0S6_WzA2Mj', state: 'rt' }));
      assert.equal(answer.status, 303);
      const location = new URL(answer.location!);
      assert.equal(location.origin + location.pathname, REDIRECT_URI);
      const params = callbackParams(answer.location!);
      assert.equal(params.get('error'), 'unsupported_response_type');
      assert.equal(params.get('state'), 'rt');
      assertNoTokens(params);
      assertNoTokens(new URLSearchParams(location.search));
    });
  }

  test('oidcc-response-type-missing: no response_type → an error at the redirect_uri, no code', async () => {
    const { challenge } = createPkcePair();
    const answer = await authorizeOnce(codeRequest(challenge, { response_type: undefined, state: 'missing' }));
    assert.equal(answer.status, 303);
    const params = callbackParams(answer.location!);
    assert.equal(params.get('error'), 'invalid_request');
    assert.equal(params.get('state'), 'missing');
    assertNoTokens(params);
  });
});

describe('RFC 6749 §5.2 + OAuth 2.1 §10: no password grant', () => {
  for (const grantType of ['password', 'implicit']) {
    test(`grant_type=${grantType} → unsupported_grant_type`, async () => {
      const answer = await requestTokens({
        grant_type: grantType,
        username: CUSTOMER.email,
        password: CUSTOMER.password,
        client_id: appA,
        scope: 'openid orders:read',
      });
      assertTokenError(answer, 'unsupported_grant_type');
    });
  }
});

describe('RFC 6749 §4.4: client credentials are for API scopes only', () => {
  const authorization = () => basicAuthorization(introspector.clientId, introspector.clientSecret);

  for (const scope of ['openid', 'openid orders:read', 'offline_access orders:read', 'orders:write', 'products:write']) {
    test(`scope "${scope}" → invalid_scope`, async () => {
      assertTokenError(await requestTokens({ grant_type: 'client_credentials', scope }, authorization()), 'invalid_scope');
    });
  }

  test('an allowed scope gets an access token and nothing else; an unknown scope is dropped', async () => {
    const answer = await requestTokens({ grant_type: 'client_credentials', scope: 'orders:read urn:example:unknown' }, authorization());
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(Object.keys(answer.body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(answer.body.scope, 'orders:read');
    assert.equal(decodeJwt(answer.body.access_token as string).scope, 'orders:read');
  });
});

describe('Login and consent pages (RFC 6749 §10.12 CSRF, §10.13 clickjacking; RFC 9700 §4.7)', () => {
  async function openLoginPage() {
    const browser = new FormBrowser();
    const { response } = await browser.follow(codeRequest(createPkcePair().challenge));
    assert.equal(response.status, 200);
    const html = await response.text();
    return { browser, response, html, form: readForm(html) };
  }

  function assertPageHeaders(response: Response): void {
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.match(response.headers.get('content-security-policy') ?? '', /(^|;)\s*frame-ancestors 'none'\s*(;|$)/);
  }

  test('a wrong password and an unknown email get the same status and the same page', async () => {
    const { browser, form } = await openLoginPage();
    const action = new URL(form.action, server.baseUrl).toString();
    const wrongPassword = await browser.request(action, { form: { ...form.fields, email: CUSTOMER.email, password: 'not the password' } });
    const unknownEmail = await browser.request(action, {
      form: { ...form.fields, email: 'nobody@example.test', password: 'not the password' },
    });
    assert.equal(wrongPassword.status, 401);
    assert.equal(unknownEmail.status, wrongPassword.status);
    assertPageHeaders(wrongPassword);
    assertPageHeaders(unknownEmail);
    // The page echoes the email typed into its field; apart from that, not a byte differs.
    const wrongPasswordPage = (await wrongPassword.text()).replace(`value="${CUSTOMER.email}"`, 'value=""');
    const unknownEmailPage = (await unknownEmail.text()).replace('value="nobody@example.test"', 'value=""');
    assert.equal(unknownEmailPage, wrongPasswordPage);
    assert.match(wrongPasswordPage, /The email or password is not correct, or the account cannot sign in\./);
  });

  test('the login form needs its CSRF token: without or with a wrong one → 403 page, no redirect', async () => {
    const { browser, form } = await openLoginPage();
    const action = new URL(form.action, server.baseUrl).toString();
    const credentials = { email: CUSTOMER.email, password: CUSTOMER.password };
    for (const fields of [credentials, { ...credentials, csrf: '' }, { ...credentials, csrf: randomBytes(32).toString('base64url') }]) {
      const response = await browser.request(action, { form: fields });
      assert.equal(response.status, 403);
      assert.equal(response.headers.get('location'), null);
      assertPageHeaders(response);
      assert.match(await response.text(), /The form could not be verified/);
    }
    // The real form still works: the 403s were about the token, nothing else.
    const response = await browser.request(action, { form: { ...form.fields, ...credentials } });
    assert.equal(response.status, 303);
  });

  test('the consent form needs its CSRF token too; login and consent pages are no-store and unframeable', async () => {
    const { browser, response: loginResponse, form } = await openLoginPage();
    assertPageHeaders(loginResponse);
    const { response } = await browser.follow(new URL(form.action, server.baseUrl).toString(), {
      form: { ...form.fields, email: CUSTOMER.email, password: CUSTOMER.password },
    });
    assert.equal(response.status, 200);
    assertPageHeaders(response);
    const consent = readForm(await response.text());
    const action = new URL(consent.action, server.baseUrl).toString();
    for (const csrf of [undefined, 'forged']) {
      const forged = await browser.request(action, { method: 'POST', form: csrf === undefined ? {} : { csrf } });
      assert.equal(forged.status, 403);
      assert.equal(forged.headers.get('location'), null);
      assertPageHeaders(forged);
    }
  });
});
