// Signing key rotation (orderpay keys rotate): the new key is published at once, the
// authorization server signs with it, the old key stays published until everything it signed has
// expired, and the resource server accepts tokens from both (JWKS reload on an unknown kid).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { decodeProtectedHeader } from 'jose';
import { createConfidentialClient } from '../../src/auth/clients.store.ts';
import { findActiveSigningKey, MAX_SIGNED_TOKEN_LIFETIME_SECONDS, rotateSigningKeys } from '../../src/auth/keys.store.ts';
import { startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_161;
let server: AuthServer;

before(async () => {
  // Check the key set on every request, so the test sees rotation without waiting.
  server = await startAuthServer(PORT, {}, { keyCheckIntervalMs: 0 });
});
after(async () => {
  await server.close();
});

async function serviceToken(): Promise<string> {
  const service = await createConfidentialClient(server.db, { name: `svc ${Math.random()}`, scopes: ['orders:read'] });
  const config = await client.discovery(
    new URL(server.issuer),
    service.clientId,
    service.clientSecret,
    client.ClientSecretBasic(service.clientSecret),
    { execute: [client.allowInsecureRequests] },
  );
  return (await client.clientCredentialsGrant(config, { scope: 'orders:read' })).access_token;
}

async function publishedKids(): Promise<string[]> {
  const response = await fetch(`${server.issuer}/jwks`);
  assert.equal(response.status, 200);
  return ((await response.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
}

const callApi = (token: string) => fetch(`${server.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${token}` } });

describe('signing key rotation', () => {
  test('rotate: published at once, signs with the new key, old tokens keep working', async () => {
    const oldKey = (await findActiveSigningKey(server.db))!;
    const oldPs256 = (await findActiveSigningKey(server.db, 'PS256'))!;
    const before = await serviceToken();
    assert.equal(decodeProtectedHeader(before).kid, oldKey.kid);
    assert.equal((await callApi(before)).status, 200);

    const rotated = await rotateSigningKeys(server.db);
    const newKids = rotated.active.map((k) => k.kid);
    const newKid = rotated.active.find((k) => k.alg === 'RS256')!.kid;
    assert.deepEqual(rotated.retired.map((k) => k.kid).sort(), [oldKey.kid, oldPs256.kid].sort());
    assert.notEqual(newKid, oldKey.kid);
    assert.deepEqual(
      (await publishedKids()).sort(),
      [oldKey.kid, oldPs256.kid, ...newKids].sort(),
      'the old and the new keys are published',
    );

    const after = await serviceToken();
    assert.equal(decodeProtectedHeader(after).kid, newKid, 'new tokens are signed with the new key');
    assert.equal((await callApi(after)).status, 200, 'the resource server follows the rotation');
    assert.equal((await callApi(before)).status, 200, 'tokens signed with the old key still verify');

    const { rows } = await server.db.query<{ retired: boolean; seconds: number }>(
      'SELECT retired_at IS NOT NULL AS retired, extract(epoch FROM expires_at - retired_at)::int AS seconds FROM signing_keys WHERE kid = $1',
      [oldKey.kid],
    );
    assert.deepEqual(rows[0], { retired: true, seconds: MAX_SIGNED_TOKEN_LIFETIME_SECONDS });
  });

  test('a retired key past its expiry is no longer published', async () => {
    const current = (await findActiveSigningKey(server.db))!;
    await rotateSigningKeys(server.db);
    await server.db.query("UPDATE signing_keys SET expires_at = now() - interval '1 second' WHERE kid = $1", [current.kid]);
    assert.ok(!(await publishedKids()).includes(current.kid));
  });
});
