// The FAPI 2.0 client profile's rules, pure: the metadata a fapi2 client is registered with, the
// public keys it may authenticate with (FAPI 2.0 §5.4), and the money scopes
// ORDERPAY_FAPI2_FOR_PAYMENTS withholds from other confidential clients.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { buildConfidentialClientMetadata, buildPublicClientMetadata } from '../../src/auth/clients.rules.ts';
import {
  buildFapi2ClientMetadata,
  checkClientJwks,
  checkClientProfile,
  checkJwksUri,
  clientProfileOf,
  withheldMoneyScopes,
} from '../../src/auth/fapi2-profile.ts';

const publicJwk = async (alg: string, options: { modulusLength?: number; crv?: string } = {}) =>
  exportJWK((await generateKeyPair(alg, { extractable: true, ...options })).publicKey);

/** jose makes no RSA key under 2048 bits: node:crypto does. */
const weakRsa = () => generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });

describe('buildFapi2ClientMetadata', () => {
  test('private_key_jwt with its keys, DPoP-bound tokens, PAR required, PS256 ID tokens, the profile named', async () => {
    const key = { ...(await publicJwk('ES256')), kid: 'k1' };
    const metadata = buildFapi2ClientMetadata('op_fapi', {
      name: 'Bank app',
      grantTypes: ['authorization_code'],
      redirectUris: ['https://bank.example/cb'],
      scopes: ['openid payments:write'],
      keys: { jwks: { keys: [key] } },
    });
    assert.deepEqual(metadata, {
      client_id: 'op_fapi',
      client_name: 'Bank app',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['https://bank.example/cb'],
      scope: 'openid payments:write',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [key] },
      dpop_bound_access_tokens: true,
      require_pushed_authorization_requests: true,
      id_token_signed_response_alg: 'PS256',
      orderpay_profile: 'fapi2',
    });
    assert.equal(clientProfileOf(metadata), 'fapi2');
  });

  test('a service on the profile: client credentials, keys by reference, no PAR (it has no authorization requests)', () => {
    const metadata = buildFapi2ClientMetadata('op_svc', {
      name: 'Payouts',
      scopes: ['payments:write'],
      keys: { jwksUri: 'https://payouts.example/jwks.json' },
    });
    assert.deepEqual(metadata.grant_types, ['client_credentials']);
    assert.equal(metadata.jwks_uri, 'https://payouts.example/jwks.json');
    assert.equal(metadata.jwks, undefined);
    assert.equal(metadata.require_pushed_authorization_requests, undefined);
    assert.equal(metadata.dpop_bound_access_tokens, true);
  });

  test('other clients are on the baseline profile', () => {
    assert.equal(clientProfileOf(buildPublicClientMetadata('op_p', { name: 'P', redirectUris: ['https://a.example/cb'] })), 'oauth2.1');
    assert.equal(clientProfileOf(buildConfidentialClientMetadata('op_c', 'h', { name: 'C', scopes: ['orders:read'] })), 'oauth2.1');
    assert.equal(checkClientProfile('fapi2'), 'fapi2');
    assert.throws(() => checkClientProfile('fapi1'), /not a client profile; known: oauth2.1, fapi2/);
  });
});

describe('checkClientJwks (FAPI 2.0 §5.4)', () => {
  test('public signing keys of RSA ≥ 2048 bits, P-256 or Ed25519', async () => {
    const keys = [
      { ...(await publicJwk('PS256', { modulusLength: 2048 })), kid: 'rsa', alg: 'PS256', use: 'sig' },
      { ...(await publicJwk('ES256')), kid: 'ec' },
      { ...(await publicJwk('EdDSA', { crv: 'Ed25519' })), kid: 'ed', alg: 'EdDSA' },
    ];
    assert.deepEqual(checkClientJwks({ keys }), { keys });
  });

  test('refuses private members, weak or unknown keys, other algorithms, encryption keys and a kid used twice', async () => {
    const ec = { ...(await publicJwk('ES256')), kid: 'ec' };
    const privateEc = { ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey)), kid: 'p' };
    const refused: [unknown, RegExp][] = [
      [{}, /at least one key/],
      [{ keys: [] }, /at least one key/],
      [[ec], /at least one key/],
      [{ keys: [privateEc] }, /private members \(d\)/],
      [{ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }, /private members \(k\)/],
      [{ keys: [{ ...weakRsa(), kid: 'weak' }] }, /RSA key of 1024 bits; FAPI 2.0 needs at least 2048/],
      [{ keys: [{ ...(await publicJwk('ES384')), kid: 'p384' }] }, /curve P-384; ES256 needs P-256/],
      [{ keys: [{ ...ec, alg: 'RS256' }] }, /alg RS256; FAPI 2.0 allows PS256, ES256, EdDSA/],
      [{ keys: [{ ...ec, use: 'enc' }] }, /use "enc"; it must sign/],
      [{ keys: [ec, { ...(await publicJwk('ES256')), kid: 'ec' }] }, /kid "ec" is used by two keys/],
    ];
    for (const [jwks, message] of refused) assert.throws(() => checkClientJwks(jwks), message, JSON.stringify(jwks).slice(0, 80));
  });

  test('a jwks_uri is https (plain http on a loopback host only)', () => {
    assert.equal(checkJwksUri('https://a.example/jwks'), 'https://a.example/jwks');
    assert.equal(checkJwksUri('http://127.0.0.1:8080/jwks'), 'http://127.0.0.1:8080/jwks');
    assert.throws(() => checkJwksUri('http://a.example/jwks'), /must use https/);
    assert.throws(() => checkJwksUri('ftp://a.example/jwks'), /not an https URL/);
    assert.throws(() => checkJwksUri('jwks.json'), /not an https URL/);
  });
});

describe('withheldMoneyScopes (ORDERPAY_FAPI2_FOR_PAYMENTS)', () => {
  const confidential = buildConfidentialClientMetadata('op_c', 'h', { name: 'C', scopes: ['orders:read payments:write payments:refund'] });

  test('off: every client keeps its scopes', () => {
    assert.equal(withheldMoneyScopes(confidential, false), confidential);
  });

  test('on: a confidential client off the profile loses the scopes that move money, and keeps the rest', () => {
    assert.equal(withheldMoneyScopes(confidential, true).scope, 'orders:read');
    const reader = buildConfidentialClientMetadata('op_r', 'h', { name: 'R', scopes: ['orders:read'] });
    assert.equal(withheldMoneyScopes(reader, true), reader, 'nothing to withhold: the same metadata');
  });

  test('on: FAPI 2.0 clients and public clients keep theirs', () => {
    const fapi = buildFapi2ClientMetadata('op_f', { name: 'F', scopes: ['payments:write'], keys: { jwksUri: 'https://f.example/jwks' } });
    const app = buildPublicClientMetadata('op_p', { name: 'P', redirectUris: ['https://a.example/cb'], scopes: ['payments:write'] });
    assert.equal(withheldMoneyScopes(fapi, true), fapi);
    assert.equal(withheldMoneyScopes(app, true), app);
  });
});
