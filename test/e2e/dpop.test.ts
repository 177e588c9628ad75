// RFC 9449 DPoP, end to end: openid-client (a certified FAPI 2.0 relying party) obtains a DPoP-bound
// token from the authorization server and calls the API with its own proofs; the proofs it would
// never make are made by hand (test/helpers/dpop.ts). A bound token is accepted only with a valid
// proof by its key on each request; a bearer client's token works as before.
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as client from 'openid-client';
import { createConfidentialClient } from '../../src/auth/clients.store.ts';
import { DPOP_ALGORITHMS } from '../../src/http/dpop.ts';
import { makeProof, signAccessToken, unsecuredProof } from '../helpers/dpop.ts';
import { discoverClient, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_900;
const ALGS = 'algs="ES256 PS256 EdDSA"';
let server: AuthServer;
let service: client.Configuration;
let serviceId: string;
let keyPair: client.CryptoKeyPair;
let boundToken: string;

before(async () => {
  server = await startAuthServer(PORT);
  const registered = await createConfidentialClient(server.db, { name: 'Bound service', scopes: ['orders:read', 'products:write'] });
  serviceId = registered.clientId;
  service = await discoverClient(server, registered.clientId, client.ClientSecretBasic(registered.clientSecret), registered.clientSecret);
  keyPair = await client.randomDPoPKeyPair('ES256');
  const tokens = await client.clientCredentialsGrant(
    service,
    { scope: 'orders:read products:write' },
    { DPoP: client.getDPoPHandle(service, keyPair) },
  );
  boundToken = tokens.access_token;
});
after(async () => {
  await server.close();
});

const ordersUrl = () => `${server.baseUrl}/v2/orders`;

/** GET /v2/orders with these credentials and, if given, a DPoP proof. */
const listOrders = (authorization: string, proof?: string) =>
  fetch(ordersUrl(), { headers: { authorization, ...(proof === undefined ? {} : { dpop: proof }) } });

/** A proof by the token's key for GET /v2/orders, with these changes. */
const proofFor = (changes: { claims?: Record<string, unknown>; header?: Record<string, unknown> } = {}, pair = keyPair) =>
  makeProof(pair, { method: 'GET', url: ordersUrl(), accessToken: boundToken, ...changes });

/** How each RFC 9449 §7.1 error is answered: its catalogue code and the detail's opening words. */
const REFUSALS = {
  invalid_dpop_proof: { code: 'AUTH_DPOP_PROOF_INVALID', detail: 'The DPoP proof is invalid' },
  invalid_token: { code: 'AUTH_TOKEN_INVALID', detail: 'The access token is invalid' },
} as const;

/** A 401 under the DPoP challenge (which names the algorithms), with the problem and its detail. */
async function assertRefused(response: Response, error: keyof typeof REFUSALS, description: string): Promise<void> {
  assert.equal(response.status, 401);
  assert.equal(response.headers.get('www-authenticate'), `DPoP ${ALGS}, error="${error}", error_description="${description}"`);
  const problem = (await response.json()) as { code: string; detail: string };
  assert.equal(problem.code, REFUSALS[error].code);
  assert.equal(problem.detail, `${REFUSALS[error].detail}: ${description}.`);
}

const assertProofRefused = (response: Response, description: string) => assertRefused(response, 'invalid_dpop_proof', description);
const assertTokenRefused = (response: Response, description: string) => assertRefused(response, 'invalid_token', description);

/** A token of our issuer for the service, with these claims besides. */
const signedToken = (extra: Record<string, unknown>) => signAccessToken(server, serviceId, extra);

describe('RFC 9449 DPoP: the authorization server binds tokens to the client key', () => {
  test('discovery advertises the proof algorithms, the API’s own (FAPI 2.0 §5.4.1)', () => {
    assert.deepEqual(service.serverMetadata().dpop_signing_alg_values_supported, [...DPOP_ALGORITHMS]);
  });

  test('with a proof at the token endpoint: token_type DPoP and cnf.jkt, the thumbprint of the client key', async () => {
    const pair = await client.randomDPoPKeyPair('ES256');
    const tokens = await client.clientCredentialsGrant(service, { scope: 'orders:read' }, { DPoP: client.getDPoPHandle(service, pair) });
    assert.equal(tokens.token_type, 'dpop');
    assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt: await calculateJwkThumbprint(await exportJWK(pair.publicKey)) });
  });

  test('without one: a Bearer token, unbound, accepted as Bearer as before', async () => {
    const tokens = await client.clientCredentialsGrant(service, { scope: 'orders:read' });
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(decodeJwt(tokens.access_token).cnf, undefined);
    assert.equal((await listOrders(`Bearer ${tokens.access_token}`)).status, 200);
  });
});

describe('RFC 9449 §7: the API accepts a bound token only with a valid proof by its key', () => {
  test('openid-client’s requests, a fresh proof each: GET several times, and a POST', async () => {
    const dpop = client.getDPoPHandle(service, keyPair);
    for (let i = 0; i < 3; i++) {
      const response = await client.fetchProtectedResource(service, boundToken, new URL(ordersUrl()), 'GET', undefined, undefined, {
        DPoP: dpop,
      });
      assert.equal(response.status, 200);
    }
    const body = JSON.stringify({ name: 'Proofed widget', price: { value: 1250, currency: 'EUR' } });
    const headers = new Headers({ 'content-type': 'application/json' });
    const created = await client.fetchProtectedResource(
      service,
      boundToken,
      new URL(`${server.baseUrl}/v2/products`),
      'POST',
      body,
      headers,
      {
        DPoP: dpop,
      },
    );
    assert.equal(created.status, 201, await created.clone().text());
    assert.equal(((await created.json()) as { name: string }).name, 'Proofed widget');
  });

  test('a proof up to 10 s ahead of this server is accepted (FAPI 2.0 §5.3.2.1)', async () => {
    const response = await listOrders(`DPoP ${boundToken}`, await proofFor({ claims: { iat: Math.floor(Date.now() / 1000) + 10 } }));
    assert.equal(response.status, 200);
  });

  test('the bound token as Bearer → 401 invalid_token, with or without a proof', async () => {
    const description = 'the token is bound to a DPoP key (cnf.jkt): send it as Authorization: DPoP with a DPoP proof';
    await assertTokenRefused(await listOrders(`Bearer ${boundToken}`), description);
    await assertTokenRefused(await listOrders(`Bearer ${boundToken}`, await proofFor()), description);
  });

  test('no proof → 401 invalid_dpop_proof', async () => {
    await assertProofRefused(await listOrders(`DPoP ${boundToken}`), 'no DPoP proof was sent (DPoP header)');
  });

  test('two DPoP headers → 401 (RFC 9449 §4.3: exactly one)', async () => {
    const headers = { authorization: `DPoP ${boundToken}`, dpop: [await proofFor(), await proofFor()] };
    const { status, challenge } = await new Promise<{ status?: number; challenge?: string }>((resolve, reject) => {
      get(ordersUrl(), { headers }, (response) => {
        response.resume();
        resolve({ status: response.statusCode, challenge: response.headers['www-authenticate'] });
      }).on('error', reject);
    });
    assert.equal(status, 401);
    assert.equal(challenge, `DPoP ${ALGS}, error="invalid_dpop_proof", error_description="several DPoP headers were sent"`);
  });

  test('a proof by another key → 401', async () => {
    const other = await client.randomDPoPKeyPair('ES256');
    await assertProofRefused(
      await listOrders(`DPoP ${boundToken}`, await proofFor({}, other)),
      'the DPoP proof is signed by another key than the token is bound to (cnf.jkt)',
    );
  });

  test('a proof for another method → 401', async () => {
    await assertProofRefused(
      await listOrders(`DPoP ${boundToken}`, await proofFor({ claims: { htm: 'POST' } })),
      'the DPoP proof is for another method (htm)',
    );
  });

  test('a proof for another URL: another path, another origin, the Host the request named → 401', async () => {
    for (const htu of [`${server.baseUrl}/v2/products`, `http://localhost:${PORT}/v2/orders`, `https://127.0.0.1:${PORT}/v2/orders`]) {
      await assertProofRefused(
        await listOrders(`DPoP ${boundToken}`, await proofFor({ claims: { htu } })),
        'the DPoP proof is for another URL (htu)',
      );
    }
    // The query and the fragment are not part of htu (RFC 9449 §4.3): a proof that names them still passes.
    const response = await listOrders(`DPoP ${boundToken}`, await proofFor({ claims: { htu: `${ordersUrl()}?page=2#top` } }));
    assert.equal(response.status, 200);
  });

  test('a proof used twice → the second is refused (replayed jti)', async () => {
    const proof = await proofFor();
    assert.equal((await listOrders(`DPoP ${boundToken}`, proof)).status, 200);
    await assertProofRefused(await listOrders(`DPoP ${boundToken}`, proof), 'the DPoP proof was used before (jti)');
  });

  test('a proof whose other check fails does not use up its jti', async () => {
    const jti = `jti-${Date.now()}`;
    await assertProofRefused(
      await listOrders(`DPoP ${boundToken}`, await proofFor({ claims: { jti, htm: 'DELETE' } })),
      'the DPoP proof is for another method (htm)',
    );
    assert.equal((await listOrders(`DPoP ${boundToken}`, await proofFor({ claims: { jti } }))).status, 200);
  });

  test('a stale iat, and one too far ahead → 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    await assertProofRefused(
      await listOrders(`DPoP ${boundToken}`, await proofFor({ claims: { iat: now - 301 } })),
      'the DPoP proof is too old (iat more than 300 s ago)',
    );
    await assertProofRefused(
      await listOrders(`DPoP ${boundToken}`, await proofFor({ claims: { iat: now + 61 } })),
      'the DPoP proof was issued in the future (iat more than 60 s ahead)',
    );
  });

  test('a proof whose ath names another token, or none → 401', async () => {
    const other = await signedToken({});
    await assertProofRefused(
      await listOrders(`DPoP ${boundToken}`, await makeProof(keyPair, { method: 'GET', url: ordersUrl(), accessToken: other })),
      'the DPoP proof is for another access token (ath)',
    );
    await assertProofRefused(
      await listOrders(`DPoP ${boundToken}`, await proofFor({ claims: { ath: undefined } })),
      'the DPoP proof is for another access token (ath)',
    );
  });

  test('malformed proofs, the wrong typ, alg none or HS256, a private or missing jwk → 401 naming the check', async () => {
    const publicJwk = await exportJWK(keyPair.publicKey);
    const extractable = await generateKeyPair('ES256', { extractable: true });
    const claims = { jti: 'x', iat: Math.floor(Date.now() / 1000), htm: 'GET', htu: ordersUrl() };
    const hs256 = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: publicJwk } as never)
      .sign(new Uint8Array(32));
    const cases: [string, string][] = [
      ['not-a-jwt', 'the DPoP proof is not a well-formed JWT'],
      [await proofFor({ header: { typ: 'JWT' } }), 'the DPoP proof is not of type dpop+jwt'],
      [unsecuredProof({ jwk: publicJwk }, claims), 'the DPoP proof is not signed with ES256, PS256 or EdDSA'],
      [hs256, 'the DPoP proof is not signed with ES256, PS256 or EdDSA'],
      [await proofFor({ header: { jwk: undefined } }), 'the DPoP proof header has no jwk'],
      [
        await makeProof(extractable, {
          method: 'GET',
          url: ordersUrl(),
          accessToken: boundToken,
          header: { jwk: await exportJWK(extractable.privateKey) },
        }),
        "the DPoP proof's jwk is not a public key",
      ],
      [`${(await proofFor()).slice(0, -4)}AAAA`, 'the DPoP proof signature does not verify with its jwk'],
      [await proofFor({ claims: { jti: undefined } }), "the DPoP proof's jti claim is missing or invalid"],
      [await proofFor({ claims: { iat: '1' } }), "the DPoP proof's claims are invalid"],
    ];
    for (const [proof, description] of cases) await assertProofRefused(await listOrders(`DPoP ${boundToken}`, proof), description);
  });

  test('an unbound token under the DPoP scheme → 401 invalid_token, even with a proof', async () => {
    const unbound = await signedToken({});
    const proof = await makeProof(keyPair, { method: 'GET', url: ordersUrl(), accessToken: unbound });
    await assertTokenRefused(
      await listOrders(`DPoP ${unbound}`, proof),
      'the token is not bound to a DPoP key: send it as Authorization: Bearer',
    );
  });

  test('an mTLS-bound token (cnf.x5t#S256, RFC 8705) is still refused, under either scheme', async () => {
    const description = 'the token is bound by a method this API does not check (cnf other than jkt, such as mTLS x5t#S256)';
    const token = await signedToken({ cnf: { 'x5t#S256': 'bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2' } });
    const bearer = await listOrders(`Bearer ${token}`);
    assert.equal(bearer.status, 401);
    assert.equal(
      bearer.headers.get('www-authenticate'),
      `Bearer realm="orderpay", error="invalid_token", error_description="${description}"`,
    );
    const proof = await makeProof(keyPair, { method: 'GET', url: ordersUrl(), accessToken: token });
    await assertTokenRefused(await listOrders(`DPoP ${token}`, proof), description);
  });
});

describe('RFC 9449 §6.2 and /oauth/userinfo', () => {
  test('introspection says cnf and token_type DPoP for a bound token, Bearer for another', async () => {
    const bound = await client.tokenIntrospection(service, boundToken);
    assert.equal(bound.active, true);
    assert.equal(bound.token_type, 'DPoP');
    assert.deepEqual(bound.cnf, { jkt: await calculateJwkThumbprint(await exportJWK(keyPair.publicKey)) });
    const unbound = await client.tokenIntrospection(
      service,
      (await client.clientCredentialsGrant(service, { scope: 'orders:read' })).access_token,
    );
    assert.equal(unbound.token_type, 'Bearer');
    assert.equal(unbound.cnf, undefined);
  });

  test('userinfo takes a bound token with a proof for its own URL, and refuses it as Bearer', async () => {
    const user = await server.createUser('dpop-userinfo@example.com', 'correct horse battery');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    const token = await signedToken({ sub: String(user.id), scope: 'openid', cnf: { jkt } });
    const userinfoUrl = `${server.issuer}/userinfo`;
    const proof = await makeProof(keyPair, { method: 'GET', url: userinfoUrl, accessToken: token });
    const accepted = await fetch(userinfoUrl, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
    assert.equal(accepted.status, 200);
    assert.deepEqual(await accepted.json(), { sub: String(user.id) });
    const replayed = await fetch(userinfoUrl, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
    assert.equal(replayed.status, 401);
    assert.equal(
      replayed.headers.get('www-authenticate'),
      `DPoP ${ALGS}, error="invalid_dpop_proof", error_description="the DPoP proof was used before (jti)"`,
    );
    assert.deepEqual(await replayed.json(), { error: 'invalid_dpop_proof', error_description: 'the DPoP proof was used before (jti)' });
    const asBearer = await fetch(userinfoUrl, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(asBearer.status, 401);
    assert.match(String(asBearer.headers.get('www-authenticate')), /^DPoP algs="ES256 PS256 EdDSA", error="invalid_token"/);
  });
});
