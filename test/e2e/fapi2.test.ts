// A FAPI 2.0 client (docs/fapi.md) end to end, with openid-client as the FAPI 2.0 relying party:
// private_key_jwt, a pushed authorization request (RFC 9126) with PKCE S256, `iss` in the
// authorization response (RFC 9207), DPoP-bound access tokens (RFC 9449) the API accepts only with
// a proof, refresh tokens that are not rotated; and each refusal the profile asks for.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import * as client from 'openid-client';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { createConfidentialClient, createFapi2Client } from '../../src/auth/clients.store.ts';
import { replaceKeys } from '../../src/auth/clients.service.ts';
import { createProduct } from '../helpers/factories.ts';
import { discoverClient, FormBrowser, signInWithForms, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_920;
const JWKS_PORT = 29_921;
const REDIRECT_URI = 'https://fapi.example/callback';
const EMAIL = 'fapi-customer@example.com';
const PASSWORD = 'correct horse battery staple';
const SCOPE = 'openid offline_access orders:read orders:write payments:write';

let server: AuthServer;
let signingKey: Awaited<ReturnType<typeof clientKeyPair>>;
let clientId: string;
let fapi: client.Configuration;
let productId: number;

/** An ES256 key pair the client authenticates with, its public half as a JWK with a kid. */
async function clientKeyPair(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, kid, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/** openid-client's view of the FAPI 2.0 client, authenticating with `key` (private_key_jwt). */
const discoverFapiClient = (key: { privateKey: CryptoKey; kid: string }) =>
  discoverClient(server, clientId, client.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }));

before(async () => {
  server = await startAuthServer(PORT);
  await server.createUser(EMAIL, PASSWORD, 'customer');
  productId = (await createProduct(server.db, { price: 1250, currency: 'EUR' })).id;
  const key = await clientKeyPair('fapi-1');
  signingKey = key;
  const registered = await createFapi2Client(server.db, {
    name: 'FAPI app',
    grantTypes: ['authorization_code'],
    redirectUris: [REDIRECT_URI],
    scopes: [SCOPE],
    keys: { jwks: { keys: [key.publicJwk] } },
  });
  clientId = registered.clientId;
  fapi = await discoverFapiClient(key);
});
after(async () => {
  await server.close();
});

interface Authorization {
  callback: URL;
  checks: { pkceCodeVerifier: string; expectedState: string; expectedNonce: string };
}

/** PAR (with the DPoP key when given: the code is then bound to it, RFC 9449 §10) → sign-in → the callback. */
async function authorize(options: { DPoP?: client.DPoPHandle; config?: client.Configuration } = {}): Promise<Authorization> {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  const expectedState = client.randomState();
  // §5.3.2.2 item 14: a nonce of 64 characters is taken (openid-client checks it in the ID token).
  const expectedNonce = client.randomNonce().padEnd(64, 'n').slice(0, 64);
  const url = await client.buildAuthorizationUrlWithPAR(
    options.config ?? fapi,
    {
      redirect_uri: REDIRECT_URI,
      scope: SCOPE,
      state: expectedState,
      nonce: expectedNonce,
      code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: 'S256',
    },
    options.DPoP ? { DPoP: options.DPoP } : undefined,
  );
  // FAPI 2.0 §5.3.3.2 item 6: only client_id and request_uri go to the authorization endpoint.
  assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
  const callback = await signInWithForms(server, url.href, EMAIL, PASSWORD, new FormBrowser());
  return { callback, checks: { pkceCodeVerifier, expectedState, expectedNonce } };
}

/** A DPoP key pair of the client's, and its RFC 7638 thumbprint: what cnf.jkt must name. */
const publicKeys = new WeakMap<client.DPoPHandle, CryptoKey>();
async function newDPoP(config = fapi): Promise<client.DPoPHandle> {
  const pair = await client.randomDPoPKeyPair('ES256');
  const handle = client.getDPoPHandle(config, pair);
  publicKeys.set(handle, pair.publicKey);
  return handle;
}
const thumbprintOf = async (handle: client.DPoPHandle) => calculateJwkThumbprint(await exportJWK(publicKeys.get(handle)!));

const apiUrl = (path: string) => new URL(path, server.baseUrl);

/** A call to the API with the DPoP-bound token, a fresh proof for each (openid-client makes it). */
function callApi(
  token: string,
  DPoP: client.DPoPHandle,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers = new Headers(init.headers);
  if (init.body !== undefined) headers.set('content-type', 'application/json');
  return client.fetchProtectedResource(
    fapi,
    token,
    apiUrl(path),
    init.method ?? 'GET',
    init.body === undefined ? undefined : JSON.stringify(init.body),
    headers,
    { DPoP },
  );
}

/** The OAuth error of a refused openid-client call. */
async function refusal(call: Promise<unknown>): Promise<{ error: string; description: string | undefined }> {
  try {
    await call;
  } catch (error) {
    const { error: code, error_description: description } = error as { error?: string; error_description?: string };
    assert.ok(code, `an OAuth error, not ${String(error)}`);
    return { error: code, description };
  }
  assert.fail('the request was accepted');
}

describe('FAPI 2.0 client: the whole flow', () => {
  test('discovery advertises what the profile uses', () => {
    const metadata = fapi.serverMetadata();
    assert.ok(metadata.token_endpoint_auth_methods_supported?.includes('private_key_jwt'));
    assert.deepEqual(metadata.token_endpoint_auth_signing_alg_values_supported, ['PS256', 'ES256', 'EdDSA']);
    assert.equal(metadata.pushed_authorization_request_endpoint, `${server.issuer}/request`);
    assert.deepEqual(metadata.dpop_signing_alg_values_supported, ['ES256', 'PS256', 'EdDSA']);
    assert.equal(metadata.authorization_response_iss_parameter_supported, true);
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
    assert.ok(metadata.id_token_signing_alg_values_supported?.includes('PS256'));
  });

  test('PAR → sign-in → code + iss → DPoP-bound PS256 tokens → the API with proofs, a payment included', async () => {
    const DPoP = await newDPoP();
    const { callback, checks } = await authorize({ DPoP });
    // RFC 9207: the response names its issuer; openid-client checks it against discovery.
    assert.equal(callback.searchParams.get('iss'), server.issuer);
    const tokens = await client.authorizationCodeGrant(fapi, callback, checks, undefined, { DPoP });
    assert.equal(tokens.token_type, 'dpop');
    // FAPI 2.0 §5.4.1: PS256, not RS256, for what is issued to this client.
    assert.equal(decodeProtectedHeader(tokens.access_token).alg, 'PS256');
    assert.equal(decodeProtectedHeader(tokens.id_token!).alg, 'PS256');
    assert.equal(decodeJwt(tokens.id_token!).nonce, checks.expectedNonce, 'the 64-character nonce');
    const bound = decodeJwt(tokens.access_token).cnf as { jkt: string };
    assert.equal(bound.jkt, await thumbprintOf(DPoP));

    const list = await callApi(tokens.access_token, DPoP, '/v3/orders');
    assert.equal(list.status, 200, await list.clone().text());
    const order = await callApi(tokens.access_token, DPoP, '/v3/orders', { method: 'POST', body: { items: [{ productId, qty: 2 }] } });
    assert.equal(order.status, 201, await order.clone().text());
    const { id: orderId } = (await order.json()) as { id: number };
    const payment = await callApi(tokens.access_token, DPoP, '/v3/payments', {
      method: 'POST',
      body: { orderId, amount: { value: 2500, currency: 'EUR' } },
      headers: { 'idempotency-key': randomUUID() },
    });
    assert.equal(payment.status, 201, await payment.clone().text());

    // The same token without its proof is refused: a stolen bound token is worth nothing.
    const asBearer = await fetch(apiUrl('/v3/orders'), { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(asBearer.status, 401);
  });

  test('refresh with the DPoP key: a new bound token, the same refresh token, which works again (§5.3.2.1 item 9)', async () => {
    const DPoP = await newDPoP();
    const { callback, checks } = await authorize({ DPoP });
    const tokens = await client.authorizationCodeGrant(fapi, callback, checks, undefined, { DPoP });
    const refreshToken = tokens.refresh_token!;
    const refreshed = await client.refreshTokenGrant(fapi, refreshToken, undefined, { DPoP });
    assert.equal(refreshed.token_type, 'dpop');
    assert.equal(refreshed.refresh_token, refreshToken, 'not rotated');
    assert.notEqual(refreshed.access_token, tokens.access_token);
    // A client that lost that response retries with the same refresh token.
    const retried = await client.refreshTokenGrant(fapi, refreshToken, undefined, { DPoP });
    assert.equal(retried.token_type, 'dpop');
    assert.equal((await callApi(retried.access_token, DPoP, '/v3/orders')).status, 200);
  });

  test('the refresh of a bound token without a DPoP proof → invalid_grant, and the grant survives', async () => {
    const DPoP = await newDPoP();
    const { callback, checks } = await authorize({ DPoP });
    const tokens = await client.authorizationCodeGrant(fapi, callback, checks, undefined, { DPoP });
    assert.equal((await refusal(client.refreshTokenGrant(fapi, tokens.refresh_token!))).error, 'invalid_grant');
    assert.equal((await client.refreshTokenGrant(fapi, tokens.refresh_token!, undefined, { DPoP })).token_type, 'dpop');
  });
});

describe('FAPI 2.0 client: refusals', () => {
  test('the authorization endpoint without PAR → invalid_request, sent back to the client with iss (§5.3.2.2 item 3)', async () => {
    const url = client.buildAuthorizationUrl(fapi, {
      redirect_uri: REDIRECT_URI,
      scope: SCOPE,
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const response = await fetch(url, { redirect: 'manual' });
    assert.equal(response.status, 303);
    const location = new URL(response.headers.get('location')!);
    assert.equal(location.origin + location.pathname, REDIRECT_URI);
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.equal(location.searchParams.get('error_description'), 'Pushed Authorization Request must be used');
    assert.equal(location.searchParams.get('iss'), server.issuer);
  });

  test('the authorization endpoint answers no CORS, preflight or not (§5.2.3 item 3), where the JWKS does', async () => {
    const origin = 'https://fapi.example';
    const jwks = await fetch(`${server.issuer}/jwks`, { headers: { origin } });
    assert.equal(jwks.headers.get('access-control-allow-origin'), '*', 'the contrast: an endpoint open to every origin');
    const authorizeUrl = `${server.issuer}/authorize?client_id=${clientId}`;
    const preflight = await fetch(authorizeUrl, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    const get = await fetch(authorizeUrl, { headers: { origin }, redirect: 'manual' });
    assert.equal(get.headers.get('access-control-allow-origin'), null);
    for (const response of [jwks, preflight, get]) await response.body?.cancel();
  });

  test('a pushed request without redirect_uri → invalid_request (§5.3.2.2 item 6)', async () => {
    const outcome = await refusal(
      client.buildAuthorizationUrlWithPAR(fapi, {
        scope: SCOPE,
        code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      }),
    );
    assert.equal(outcome.error, 'invalid_request');
    assert.match(outcome.description ?? '', /redirect_uri/);
  });

  test('a pushed request without PKCE → invalid_request (§5.3.2.2 item 5)', async () => {
    const outcome = await refusal(client.buildAuthorizationUrlWithPAR(fapi, { redirect_uri: REDIRECT_URI, scope: SCOPE }));
    assert.equal(outcome.error, 'invalid_request');
    assert.equal(outcome.description, 'Authorization Server policy requires PKCE to be used for this request');
  });

  test('client_secret_basic, or no client authentication, for a FAPI 2.0 client → invalid_client (§5.3.2.1 item 6)', async () => {
    const body = new URLSearchParams({ redirect_uri: REDIRECT_URI, scope: SCOPE, response_type: 'code', code_challenge_method: 'S256' });
    body.set('code_challenge', await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()));
    for (const authorization of [`Basic ${Buffer.from(`${clientId}:a-guessed-secret`).toString('base64')}`, undefined]) {
      const form = new URLSearchParams(body);
      if (!authorization) form.set('client_id', clientId);
      const response = await fetch(`${server.issuer}/request`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
        body: form,
      });
      assert.equal(response.status, 401, authorization ?? 'no authentication');
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_client');
    }
  });

  test('a client assertion whose aud is an array, or signed RS256, or by an unregistered key → invalid_client (§5.3.2.1 item 8, §5.4.1)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: clientId, sub: clientId, jti: randomUUID(), iat: now, exp: now + 60 };
    const rsa = await generateKeyPair('RS256');
    const stranger = await clientKeyPair('fapi-1');
    const assertions = {
      'aud as an array': await new SignJWT({ ...claims, aud: [server.issuer] })
        .setProtectedHeader({ alg: 'ES256', kid: signingKey.kid })
        .sign(signingKey.privateKey),
      RS256: await new SignJWT({ ...claims, aud: server.issuer })
        .setProtectedHeader({ alg: 'RS256', kid: signingKey.kid })
        .sign(rsa.privateKey),
      'an unregistered key': await new SignJWT({ ...claims, aud: server.issuer })
        .setProtectedHeader({ alg: 'ES256', kid: 'fapi-1' })
        .sign(stranger.privateKey),
    };
    const control = await new SignJWT({ ...claims, jti: randomUUID(), aud: server.issuer })
      .setProtectedHeader({ alg: 'ES256', kid: signingKey.kid })
      .sign(signingKey.privateKey);
    const push = (assertion: string) =>
      fetch(`${server.issuer}/request`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: clientId,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: assertion,
          redirect_uri: REDIRECT_URI,
          scope: SCOPE,
          response_type: 'code',
          code_challenge_method: 'S256',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        }),
      });
    assert.equal((await push(control)).status, 201, 'the same request with a proper assertion is accepted');
    for (const [what, assertion] of Object.entries(assertions)) {
      const response = await push(assertion);
      assert.equal(response.status, 401, what);
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_client', what);
    }
  });

  test('JWTs from the future: 10 s ahead accepted, over 60 s refused, a client assertion as a DPoP proof (§5.3.2.1 item 13)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const assertion = (iat: number) =>
      new SignJWT({ iss: clientId, sub: clientId, aud: server.issuer, jti: randomUUID(), iat, exp: iat + 60 })
        .setProtectedHeader({ alg: 'ES256', kid: signingKey.kid })
        .sign(signingKey.privateKey);
    const dpopKey = await client.randomDPoPKeyPair('ES256');
    const proof = async (iat: number) =>
      new SignJWT({ jti: randomUUID(), htm: 'POST', htu: `${server.issuer}/request`, iat })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(dpopKey.publicKey) })
        .sign(dpopKey.privateKey);
    const push = async (clientAssertion: string, dpop: string) => {
      const response = await fetch(`${server.issuer}/request`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop },
        body: new URLSearchParams({
          client_id: clientId,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: clientAssertion,
          redirect_uri: REDIRECT_URI,
          scope: SCOPE,
          response_type: 'code',
          code_challenge_method: 'S256',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        }),
      });
      return { status: response.status, body: (await response.json()) as { error?: string; error_description?: string } };
    };
    assert.equal((await push(await assertion(now + 10), await proof(now + 10))).status, 201, '10 s ahead');
    const lateAssertion = await push(await assertion(now + 120), await proof(now));
    assert.deepEqual([lateAssertion.status, lateAssertion.body.error], [401, 'invalid_client']);
    const lateProof = await push(await assertion(now), await proof(now + 120));
    assert.deepEqual(lateProof, {
      status: 400,
      body: { error: 'invalid_dpop_proof', error_description: 'DPoP proof iat is more than 60 s in the future' },
    });
  });

  test('the token endpoint without a DPoP proof → invalid_grant: this client gets bound tokens only (§5.3.2.1 item 4)', async () => {
    const { callback, checks } = await authorize();
    const outcome = await refusal(client.authorizationCodeGrant(fapi, callback, checks));
    assert.equal(outcome.error, 'invalid_grant');
  });

  test('a code bound to a DPoP key at PAR, exchanged with another key → invalid_grant (§5.3.2.1 item 12, RFC 9449 §10)', async () => {
    const { callback, checks } = await authorize({ DPoP: await newDPoP() });
    const outcome = await refusal(client.authorizationCodeGrant(fapi, callback, checks, undefined, { DPoP: await newDPoP() }));
    assert.equal(outcome.error, 'invalid_grant');
  });

  test('a code used twice → invalid_grant (§5.3.2.2 item 9)', async () => {
    const DPoP = await newDPoP();
    const { callback, checks } = await authorize({ DPoP });
    await client.authorizationCodeGrant(fapi, callback, checks, undefined, { DPoP });
    assert.equal((await refusal(client.authorizationCodeGrant(fapi, callback, checks, undefined, { DPoP }))).error, 'invalid_grant');
  });
});

describe('FAPI 2.0 client: its keys', () => {
  test('set-keys: the next assertion must be signed by a new key; the old one is refused', async () => {
    const next = await clientKeyPair('fapi-2');
    // Both for the switch, then the new one alone.
    await replaceKeys(server.db, clientId, { jwks: { keys: [(await clientKeyPair('unused')).publicJwk, next.publicJwk] } });
    const withNew = await discoverFapiClient(next);
    await client.buildAuthorizationUrlWithPAR(withNew, {
      redirect_uri: REDIRECT_URI,
      scope: SCOPE,
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const outcome = await refusal(
      client.buildAuthorizationUrlWithPAR(fapi, {
        redirect_uri: REDIRECT_URI,
        scope: SCOPE,
        code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      }),
    );
    assert.equal(outcome.error, 'invalid_client');
    // The registration the other tests use, again.
    await replaceKeys(server.db, clientId, { jwks: { keys: [signingKey.publicJwk] } });
  });

  test('a service on the profile: client credentials with private_key_jwt get DPoP-bound tokens; without a proof, none', async () => {
    const key = await clientKeyPair('svc-1');
    const service = await createFapi2Client(server.db, {
      name: 'FAPI service',
      grantTypes: ['client_credentials'],
      scopes: ['orders:read'],
      keys: { jwks: { keys: [key.publicJwk] } },
    });
    const config = await discoverClient(server, service.clientId, client.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }));
    const DPoP = await newDPoP(config);
    const tokens = await client.clientCredentialsGrant(config, { scope: 'orders:read' }, { DPoP });
    assert.equal(tokens.token_type, 'dpop');
    assert.equal(decodeProtectedHeader(tokens.access_token).alg, 'PS256');
    assert.ok((decodeJwt(tokens.access_token).cnf as { jkt?: string }).jkt);
    assert.equal((await refusal(client.clientCredentialsGrant(config, { scope: 'orders:read' }))).error, 'invalid_grant');
  });

  test('keys by reference: a jwks_uri the server reads, on a loopback host here (https elsewhere)', async () => {
    const key = await clientKeyPair('published-1');
    const published = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.publicJwk] }));
    });
    await new Promise<void>((resolve) => published.listen(JWKS_PORT, '127.0.0.1', resolve));
    try {
      const service = await createFapi2Client(server.db, {
        name: 'FAPI service by reference',
        grantTypes: ['client_credentials'],
        scopes: ['orders:read'],
        keys: { jwksUri: `http://127.0.0.1:${JWKS_PORT}/jwks.json` },
      });
      const config = await discoverClient(server, service.clientId, client.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }));
      const tokens = await client.clientCredentialsGrant(config, { scope: 'orders:read' }, { DPoP: await newDPoP(config) });
      assert.equal(tokens.token_type, 'dpop');
    } finally {
      await new Promise((resolve) => published.close(resolve));
    }
  });

  test('a client on the baseline profile is unchanged: a secret, Bearer tokens signed RS256, unbound', async () => {
    const service = await createConfidentialClient(server.db, { name: 'Baseline service', scopes: ['orders:read'] });
    const config = await discoverClient(server, service.clientId, client.ClientSecretBasic(service.clientSecret), service.clientSecret);
    const tokens = await client.clientCredentialsGrant(config, { scope: 'orders:read' });
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(decodeProtectedHeader(tokens.access_token).alg, 'RS256');
    assert.equal(decodeJwt(tokens.access_token).cnf, undefined);
  });
});
