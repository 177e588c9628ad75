// Rotating a confidential client's secret (orderpay clients rotate-secret;
// docs/decisions/0113-client-secret-rotation.md), proved with a real OAuth client (openid-client,
// client_secret_basic, RFC 6749 §2.3.1) against the token endpoint: during the grace period the
// previous secret and the new one both authenticate; after it, only the new one. Time moves by an
// injected clock, not by waiting.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { createConfidentialClient, createPublicClient } from '../../src/auth/clients.store.ts';
import { rotateClientSecret } from '../../src/auth/clients.service.ts';
import { parseSecretGrace } from '../../src/auth/clients.rules.ts';
import { discoverClient, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_812;
const DAY_SECONDS = 24 * 3600;

/** The authorization server's clock for a secret's grace, moved on by the tests. */
const clock = { offsetMs: 0 };
let server: AuthServer;

before(async () => {
  server = await startAuthServer(PORT, {}, { now: () => new Date(Date.now() + clock.offsetMs) });
});
after(async () => {
  await server.close();
});

function discover(clientId: string, secret: string): Promise<client.Configuration> {
  return discoverClient(server, clientId, client.ClientSecretBasic(secret), secret);
}

/** The token endpoint's answer to a client-credentials request with this secret: a token, or undefined for invalid_client (RFC 6749 §5.2). */
async function requestToken(clientId: string, secret: string): Promise<string | undefined> {
  try {
    return (await client.clientCredentialsGrant(await discover(clientId, secret), { scope: 'orders:read' })).access_token;
  } catch (error) {
    if (error instanceof client.WWWAuthenticateChallengeError && error.cause[0]?.parameters.error === 'invalid_client') return undefined;
    throw error;
  }
}

const authenticates = async (clientId: string, secret: string) => (await requestToken(clientId, secret)) !== undefined;

async function rotate(clientId: string, grace: string): Promise<string> {
  const rotation = await rotateClientSecret(server.db, clientId, parseSecretGrace(grace));
  assert.equal(rotation.outcome, 'rotated');
  return rotation.outcome === 'rotated' ? rotation.clientSecret : '';
}

describe('clients rotate-secret: both secrets during the grace period, then only the new one', () => {
  test('old and new authenticate for 24 hours; then the old one is invalid_client and the new one goes on', async () => {
    clock.offsetMs = 0;
    const service = await createConfidentialClient(server.db, { name: 'Rotating service', scopes: ['orders:read'] });
    const newSecret = await rotate(service.clientId, '24h');
    assert.notEqual(newSecret, service.clientSecret);

    // The API clock is the injected one too: tokens are tried there while it is still now.
    for (const secret of [service.clientSecret, newSecret]) {
      const accessToken = await requestToken(service.clientId, secret);
      assert.ok(accessToken, secret === newSecret ? 'the new secret' : 'the previous secret, during the grace');
      const response = await fetch(`${server.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${accessToken}` } });
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    assert.equal(await authenticates(service.clientId, 'not-the-secret'), false);

    clock.offsetMs = (DAY_SECONDS - 60) * 1000;
    assert.equal(await authenticates(service.clientId, service.clientSecret), true, 'a minute before the grace ends');

    clock.offsetMs = (DAY_SECONDS + 1) * 1000;
    assert.equal(await authenticates(service.clientId, service.clientSecret), false, 'the grace is over');
    assert.equal(await authenticates(service.clientId, newSecret), true);
  });

  test('a second rotation within the grace retires the oldest secret at once', async () => {
    clock.offsetMs = 0;
    const service = await createConfidentialClient(server.db, { name: 'Twice-rotated service', scopes: ['orders:read'] });
    const second = await rotate(service.clientId, '24h');
    const third = await rotate(service.clientId, '24h');
    assert.equal(await authenticates(service.clientId, service.clientSecret), false, 'the first secret');
    assert.equal(await authenticates(service.clientId, second), true, 'the one the last rotation replaced');
    assert.equal(await authenticates(service.clientId, third), true);
  });

  test('--grace 0 (a leaked secret): the previous secret stops at once', async () => {
    clock.offsetMs = 0;
    const service = await createConfidentialClient(server.db, { name: 'Leaked service', scopes: ['orders:read'] });
    const newSecret = await rotate(service.clientId, '0');
    assert.equal(await authenticates(service.clientId, service.clientSecret), false);
    assert.equal(await authenticates(service.clientId, newSecret), true);
    const { rows } = await server.db.query(
      'SELECT previous_secret_hash, previous_secret_expires_at FROM oauth_clients WHERE client_id = $1',
      [service.clientId],
    );
    assert.deepEqual(rows, [{ previous_secret_hash: null, previous_secret_expires_at: null }]);
  });

  test('a public client has no secret to rotate', async () => {
    const app = await createPublicClient(server.db, { name: 'Public app', redirectUris: ['http://127.0.0.1:29819/callback'] });
    assert.deepEqual(await rotateClientSecret(server.db, app.clientId, DAY_SECONDS), { outcome: 'public', client: app });
  });
});
