// RFC 9449 §4.3: the pure checks of a DPoP proof at the resource server (src/http/dpop.ts), without
// a server: the header, the claims against the request, and the URL a proof must name.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  accessTokenHash,
  checkProofClaims,
  checkProofHeader,
  DpopProofRejectedError,
  expectedHtu,
  type ProofExpectations,
} from '../../src/http/dpop.ts';

const JWK = { kty: 'EC', crv: 'P-256', x: 'l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs', y: '9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA' };
const NOW = 1_700_000_000;
const TOKEN = 'Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU';
const EXPECTED: ProofExpectations = {
  method: 'GET',
  url: 'https://api.example.com/v2/orders/7',
  accessToken: TOKEN,
  jkt: 'unused by the claim checks',
  nowSeconds: NOW,
};
const CLAIMS = { jti: 'e1j3V_bKic8-LAEB', iat: NOW, htm: 'GET', htu: 'https://api.example.com/v2/orders/7', ath: accessTokenHash(TOKEN) };

const refusal = (description: string) => (error: unknown) => error instanceof DpopProofRejectedError && error.description === description;

describe('RFC 9449 §4.3: the proof header', () => {
  test('typ dpop+jwt, ES256, PS256 or EdDSA, and a public jwk pass', () => {
    for (const alg of ['ES256', 'PS256', 'EdDSA']) assert.doesNotThrow(() => checkProofHeader({ typ: 'dpop+jwt', alg, jwk: JWK }));
  });

  test('another typ, another alg (none, HS256, RS256, ES512), no jwk or a private one are refused', () => {
    assert.throws(() => checkProofHeader({ typ: 'JWT', alg: 'ES256', jwk: JWK }), refusal('the DPoP proof is not of type dpop+jwt'));
    for (const alg of ['none', 'HS256', 'RS256', 'ES512', undefined]) {
      assert.throws(
        () => checkProofHeader({ typ: 'dpop+jwt', alg, jwk: JWK }),
        refusal('the DPoP proof is not signed with ES256, PS256 or EdDSA'),
      );
    }
    for (const jwk of [undefined, 'key', null, [JWK]]) {
      assert.throws(() => checkProofHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk }), refusal('the DPoP proof header has no jwk'));
    }
    for (const member of ['d', 'p', 'k']) {
      assert.throws(
        () => checkProofHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: { ...JWK, [member]: 'secret' } }),
        refusal("the DPoP proof's jwk is not a public key"),
      );
    }
  });
});

describe('RFC 9449 §4.3: the claims against the request', () => {
  test('a proof for this request passes, and says its jti and iat', () => {
    assert.deepEqual(checkProofClaims(CLAIMS, EXPECTED), { jti: CLAIMS.jti, iat: NOW });
  });

  test('iat: up to 300 s old and up to 60 s ahead pass; older or further ahead do not', () => {
    for (const iat of [NOW - 300, NOW + 10, NOW + 60])
      assert.doesNotThrow(() => checkProofClaims({ ...CLAIMS, iat }, EXPECTED), String(iat));
    assert.throws(
      () => checkProofClaims({ ...CLAIMS, iat: NOW - 301 }, EXPECTED),
      refusal('the DPoP proof is too old (iat more than 300 s ago)'),
    );
    assert.throws(
      () => checkProofClaims({ ...CLAIMS, iat: NOW + 61 }, EXPECTED),
      refusal('the DPoP proof was issued in the future (iat more than 60 s ahead)'),
    );
    for (const iat of [undefined, '1700000000', Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(
        () => checkProofClaims({ ...CLAIMS, iat } as never, EXPECTED),
        refusal("the DPoP proof's iat claim is missing or invalid"),
      );
    }
  });

  test('jti: a string of 1 to 256 characters', () => {
    assert.doesNotThrow(() => checkProofClaims({ ...CLAIMS, jti: 'x'.repeat(256) }, EXPECTED));
    for (const jti of [undefined, '', 'x'.repeat(257), 42]) {
      assert.throws(
        () => checkProofClaims({ ...CLAIMS, jti } as never, EXPECTED),
        refusal("the DPoP proof's jti claim is missing or invalid"),
      );
    }
  });

  test('htm is the method, case and all', () => {
    for (const htm of ['get', 'POST', undefined]) {
      assert.throws(() => checkProofClaims({ ...CLAIMS, htm }, EXPECTED), refusal('the DPoP proof is for another method (htm)'));
    }
  });

  test('htu: the same URL after normalisation, its query and fragment left out; another scheme, host, port or path is refused', () => {
    for (const htu of [
      'https://API.example.com:443/v2/orders/7',
      'https://api.example.com/v2/orders/7?x=1#f',
      'https://api.example.com/v2/./orders/7',
    ]) {
      assert.doesNotThrow(() => checkProofClaims({ ...CLAIMS, htu }, EXPECTED), htu);
    }
    for (const htu of [
      'http://api.example.com/v2/orders/7',
      'https://api.example.com:8443/v2/orders/7',
      'https://other.example.com/v2/orders/7',
      'https://api.example.com/v2/orders/8',
      'https://api.example.com/v2/orders/7/',
      '/v2/orders/7',
      'not a url',
      undefined,
    ]) {
      assert.throws(() => checkProofClaims({ ...CLAIMS, htu }, EXPECTED), refusal('the DPoP proof is for another URL (htu)'), String(htu));
    }
  });

  test('ath: the RFC 9449 §7.1 example token hashes to its example ath; another token, or none, is refused', () => {
    assert.equal(accessTokenHash(TOKEN), 'fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo');
    for (const ath of [accessTokenHash(`${TOKEN}x`), undefined]) {
      assert.throws(() => checkProofClaims({ ...CLAIMS, ath }, EXPECTED), refusal('the DPoP proof is for another access token (ath)'));
    }
  });
});

describe('RFC 9449 §4.3 item 11: the URL a proof names, as PUBLIC_URL spells the request', () => {
  test("PUBLIC_URL's origin and path, then the request's path without its query", () => {
    assert.equal(expectedHtu('https://api.example.com', '/v2/orders?status=paid'), 'https://api.example.com/v2/orders');
    assert.equal(expectedHtu('https://example.com/orderpay', '/v2/orders/7'), 'https://example.com/orderpay/v2/orders/7');
    assert.equal(expectedHtu('http://127.0.0.1:3000', '/oauth/userinfo'), 'http://127.0.0.1:3000/oauth/userinfo');
  });
});
