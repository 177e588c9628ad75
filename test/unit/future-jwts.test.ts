// FAPI 2.0 §5.3.2.1 item 13, pure: which JWTs are from too far ahead (src/auth/future-jwts.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isDpopProofFromTheFuture, isFromTheFuture } from '../../src/auth/future-jwts.ts';

const NOW = 1_800_000_000;
const jwtWith = (claims: object) =>
  `${Buffer.from('{"alg":"ES256","typ":"dpop+jwt"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

describe('JWTs from the future', () => {
  test('iat or nbf up to 60 s ahead pass; further is refused', () => {
    assert.equal(isFromTheFuture({ iat: NOW + 10 }, NOW), false);
    assert.equal(isFromTheFuture({ iat: NOW + 60, nbf: NOW + 60 }, NOW), false);
    assert.equal(isFromTheFuture({ iat: NOW + 61 }, NOW), true);
    assert.equal(isFromTheFuture({ iat: NOW, nbf: NOW + 61 }, NOW), true);
    assert.equal(isFromTheFuture({}, NOW), false);
  });

  test("a DPoP header's proof, and nothing else: a malformed or missing one is the provider's to refuse", () => {
    assert.equal(isDpopProofFromTheFuture(jwtWith({ iat: NOW + 120 }), NOW), true);
    assert.equal(isDpopProofFromTheFuture(jwtWith({ iat: NOW }), NOW), false);
    assert.equal(isDpopProofFromTheFuture('not a jwt', NOW), false);
    assert.equal(isDpopProofFromTheFuture(undefined, NOW), false);
    assert.equal(isDpopProofFromTheFuture(['a', 'b'], NOW), false);
  });
});
