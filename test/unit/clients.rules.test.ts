// Client registration rules, pure: redirect URIs (RFC 6749 §3.1.2, RFC 8252 §7.3, RFC 9700
// §2.1), scopes per client type, the pinned API version, and the oidc-provider metadata of each type.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  buildConfidentialClientMetadata,
  buildPublicClientMetadata,
  checkClientApiVersion,
  checkRedirectUri,
  ClientMetadataError,
  CLIENT_SCOPES,
  parseClientScopes,
  SERVICE_CLIENT_SCOPES,
} from '../../src/auth/clients.rules.ts';
import { API_VERSION_NUMBERS, LATEST_API_VERSION } from '../../src/core/api-versions.ts';

describe('checkRedirectUri (RFC 6749 §3.1.2, RFC 8252 §7.3)', () => {
  test('accepts https anywhere and http on loopback hosts, exactly as written', () => {
    for (const uri of [
      'https://app.example/callback',
      'https://app.example:8443/cb?tenant=1',
      'https://app.example',
      'http://127.0.0.1/cb',
      'http://127.0.0.1:49152/callback',
      'http://[::1]:8080/cb',
      'http://localhost:3000/callback',
    ]) {
      assert.equal(checkRedirectUri(uri), uri);
    }
  });

  test('refuses plain http elsewhere, other schemes, fragments, credentials and relative URIs', () => {
    const refused: [string, RegExp][] = [
      ['http://app.example/cb', /must use https/],
      ['http://192.168.1.10/cb', /must use https/],
      ['http://127.0.0.1.evil.example/cb', /must use https/],
      ['https://app.example/cb#fragment', /must not contain a fragment/],
      ['https://app.example/cb#', /must not contain a fragment/],
      ['https://user:pass@app.example/cb', /must not contain credentials/],
      ['/callback', /not an absolute URI/],
      ['app.example/cb', /not an absolute URI/],
      ['https:app.example/cb', /not an absolute URI/],
      ['https:///cb', /not an absolute URI/],
      ['', /not an absolute URI/],
      ['javascript:alert(1)', /must use https .* not javascript/],
      ['com.example.app:/callback', /must use https/],
      ['ftp://app.example/cb', /must use https/],
    ];
    for (const [uri, message] of refused) {
      assert.throws(
        () => checkRedirectUri(uri),
        (error: unknown) => error instanceof ClientMetadataError && message.test(error.message),
        uri,
      );
    }
  });
});

describe('parseClientScopes', () => {
  test('splits on spaces, drops duplicates, refuses scopes outside the allowed set', () => {
    assert.deepEqual(parseClientScopes(['openid orders:read', 'orders:read  email'], CLIENT_SCOPES, 'x'), [
      'openid',
      'orders:read',
      'email',
    ]);
    assert.throws(
      () => parseClientScopes(['orders:read orders:delete'], CLIENT_SCOPES, 'a public client'),
      /a public client cannot have scope orders:delete/,
    );
    assert.throws(
      () => parseClientScopes(['openid offline_access orders:read'], SERVICE_CLIENT_SCOPES, 'svc'),
      /svc cannot have scope openid, offline_access/,
    );
  });
});

describe('buildPublicClientMetadata', () => {
  test('an authorization-code client without a secret', () => {
    assert.deepEqual(
      buildPublicClientMetadata('op_abc', {
        name: ' Shop app ',
        redirectUris: ['http://127.0.0.1:8080/cb', 'https://shop.example/cb'],
        scopes: ['openid orders:read'],
      }),
      {
        client_id: 'op_abc',
        client_name: 'Shop app',
        redirect_uris: ['http://127.0.0.1:8080/cb', 'https://shop.example/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'openid orders:read',
      },
    );
  });

  test('defaults to every scope but the staff-only products:write; needs a redirect URI and a name', () => {
    const metadata = buildPublicClientMetadata('op_abc', { name: 'App', redirectUris: ['https://a.example/cb'] });
    assert.equal(metadata.scope, 'openid profile email offline_access orders:read orders:write payments:read payments:write');
    assert.throws(() => buildPublicClientMetadata('op_abc', { name: 'App', redirectUris: [] }), /at least one redirect URI/);
    assert.throws(() => buildPublicClientMetadata('op_abc', { name: '  ', redirectUris: ['https://a.example/cb'] }), /client name/);
  });
});

describe('buildConfidentialClientMetadata', () => {
  test('a client-credentials client whose client_secret is the hash it is given', () => {
    assert.deepEqual(
      buildConfidentialClientMetadata('op_svc', 'scrypt$…', {
        name: 'Shipping',
        grantTypes: ['client_credentials'],
        scopes: ['orders:read', 'orders:write'],
      }),
      {
        client_id: 'op_svc',
        client_secret: 'scrypt$…',
        client_name: 'Shipping',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'orders:read orders:write',
      },
    );
  });

  test('client credentials: API scopes only, at least one, no redirect URIs', () => {
    const build = (input: { grantTypes?: string[]; scopes: string[]; redirectUris?: string[] }) => () =>
      buildConfidentialClientMetadata('op_svc', 'h', { name: 'S', ...input });
    assert.throws(build({ scopes: ['openid'] }), /a client-credentials client cannot have scope openid/);
    assert.throws(build({ scopes: ['profile email'] }), /cannot have scope profile, email/);
    assert.throws(build({ scopes: ['offline_access orders:read'] }), /cannot have scope offline_access/);
    assert.throws(build({ scopes: [] }), /at least one API scope/);
    assert.throws(build({ scopes: ['orders:read'], redirectUris: ['https://a.example/cb'] }), /has no redirect URIs/);
    assert.throws(build({ grantTypes: ['client_credentials', 'refresh_token'], scopes: ['orders:read'] }), /not refresh_token/);
    assert.throws(build({ grantTypes: ['password'], scopes: ['orders:read'] }), /not password/);
    assert.equal(buildConfidentialClientMetadata('op_svc', 'h', { name: 'S', scopes: ['products:write'] }).scope, 'products:write');
  });

  test('authorization code: a server-side app acting for users, with redirect URIs, identity scopes and refresh tokens', () => {
    const metadata = buildConfidentialClientMetadata('op_web', 'h', {
      name: 'Web shop',
      grantTypes: ['authorization_code', 'client_credentials'],
      redirectUris: ['https://shop.example/cb'],
      scopes: ['openid offline_access orders:read'],
    });
    assert.deepEqual(metadata.grant_types, ['authorization_code', 'client_credentials', 'refresh_token']);
    assert.deepEqual(metadata.response_types, ['code']);
    assert.deepEqual(metadata.redirect_uris, ['https://shop.example/cb']);
    assert.equal(metadata.token_endpoint_auth_method, 'client_secret_basic');
    assert.equal(metadata.scope, 'openid offline_access orders:read');
    const build = (input: { scopes: string[]; redirectUris?: string[] }) => () =>
      buildConfidentialClientMetadata('op_web', 'h', { name: 'W', grantTypes: ['authorization_code'], ...input });
    assert.throws(build({ scopes: ['orders:read'] }), /needs a redirect URI/);
    assert.throws(build({ scopes: ['orders:read'], redirectUris: ['http://shop.example/cb'] }), /must use https/);
    assert.throws(build({ scopes: ['openid'], redirectUris: ['https://shop.example/cb'] }), /at least one API scope/);
  });
});

describe('checkClientApiVersion: what a client is pinned to', () => {
  test('a version the server speaks, as a number or decimal digits; none named is the latest', () => {
    for (const version of API_VERSION_NUMBERS) {
      assert.equal(checkClientApiVersion(version), version);
      assert.equal(checkClientApiVersion(String(version)), version);
    }
    assert.equal(checkClientApiVersion(), LATEST_API_VERSION);
    assert.equal(checkClientApiVersion(undefined), LATEST_API_VERSION);
  });

  test('anything else is refused with the supported versions named', () => {
    const supported = `supported: ${API_VERSION_NUMBERS.join(', ')}`;
    for (const version of [0, -1, 1.5, Math.max(...API_VERSION_NUMBERS) + 1, Number.NaN, '', 'v2', '2.0', ' 2', '0x2', '1e0']) {
      assert.throws(
        () => checkClientApiVersion(version),
        (error: unknown) =>
          error instanceof ClientMetadataError && error.message === `API version ${version} is not supported; ${supported}`,
        String(version),
      );
    }
  });
});
