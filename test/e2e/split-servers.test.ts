// The two servers apart (ORDERPAY_SERVERS): an authorization-server-only process issues tokens,
// and a resource-server-only process with its own database trusts it by URL (ORDERPAY_ISSUER,
// ORDERPAY_JWKS_URL), fetching its JWKS over HTTP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { createConfidentialClient } from '../../src/auth/clients.store.ts';
import { startAuthServer, type AuthServer } from '../helpers/oauth.ts';
import { EMPTY_FIRST_PAGE_META } from '../helpers/paging.ts';

const AUTH_PORT = 29_171;
const API_PORT = 29_172;
const API_URL = `http://127.0.0.1:${API_PORT}`;

let auth: AuthServer;
let api: AuthServer;

before(async () => {
  auth = await startAuthServer(AUTH_PORT, { ORDERPAY_SERVERS: 'authorization', ORDERPAY_AUDIENCE: API_URL });
  api = await startAuthServer(API_PORT, {
    ORDERPAY_SERVERS: 'resource',
    ORDERPAY_ISSUER: auth.issuer,
    ORDERPAY_JWKS_URL: `${auth.issuer}/jwks`,
  });
});
after(async () => {
  await Promise.allSettled([api?.close(), auth?.close()]);
});

describe('ORDERPAY_SERVERS: authorization and resource servers in separate processes', () => {
  test('each process serves only its own part', async () => {
    assert.equal((await fetch(`${auth.baseUrl}/v1/orders`)).status, 404);
    assert.equal((await fetch(`${api.baseUrl}/oauth/.well-known/openid-configuration`)).status, 404);
    assert.equal((await fetch(`${auth.issuer}/.well-known/openid-configuration`)).status, 200);
    assert.equal((await fetch(`${api.baseUrl}/v1/orders`)).status, 401);
  });

  test("a token from the authorization server works on the resource server, verified through the issuer's JWKS URL", async () => {
    const service = await createConfidentialClient(auth.db, { name: 'Split', scopes: ['orders:read'] });
    const config = await client.discovery(
      new URL(auth.issuer),
      service.clientId,
      service.clientSecret,
      client.ClientSecretBasic(service.clientSecret),
      { execute: [client.allowInsecureRequests] },
    );
    const { access_token: token } = await client.clientCredentialsGrant(config, { scope: 'orders:read' });
    const response = await fetch(`${API_URL}/v1/orders`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 200);
    assert.deepEqual(((await response.json()) as { meta: unknown }).meta, EMPTY_FIRST_PAGE_META);
  });

  test('a token of the same issuer for another audience is refused', async () => {
    // The authorization server's own tokens name API_URL; one minted for the auth server's URL is not for this API.
    const other = await startAuthServer(29_173, { ORDERPAY_SERVERS: 'authorization' });
    try {
      const service = await createConfidentialClient(other.db, { name: 'Elsewhere', scopes: ['orders:read'] });
      const config = await client.discovery(
        new URL(other.issuer),
        service.clientId,
        service.clientSecret,
        client.ClientSecretBasic(service.clientSecret),
        { execute: [client.allowInsecureRequests] },
      );
      const { access_token: token } = await client.clientCredentialsGrant(config, { scope: 'orders:read' });
      const response = await fetch(`${API_URL}/v1/orders`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    } finally {
      await other.close();
    }
  });
});
