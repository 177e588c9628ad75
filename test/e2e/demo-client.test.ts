// The development walkthrough of the README works as written: after seeding, the demo client and
// a demo user complete the authorization code flow and the token reads the user's orders.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { decodeJwt } from 'jose';
import { LATEST_API_VERSION } from '../../src/core/api-versions.ts';
import { DEMO_CLIENT_ID, DEMO_CUSTOMER_EMAILS, DEMO_PASSWORD, DEMO_REDIRECT_URI, seedDemoData } from '../../src/seed.ts';
import { signInWithForms, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_151;
let server: AuthServer;

before(async () => {
  server = await startAuthServer(PORT);
  assert.equal((await seedDemoData(server.db)).seeded, true);
});
after(async () => {
  await server.close();
});

describe('the seeded demo client (development convenience)', () => {
  test('alice signs in with the demo password and sees her five orders, one in every status', async () => {
    const config = await client.discovery(new URL(server.issuer), DEMO_CLIENT_ID, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: DEMO_REDIRECT_URI,
      scope: 'openid profile orders:read orders:write',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await signInWithForms(server, url.toString(), DEMO_CUSTOMER_EMAILS[0]!, DEMO_PASSWORD);
    assert.equal(callback.origin + callback.pathname, DEMO_REDIRECT_URI);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    assert.equal(decodeJwt(tokens.access_token).api_version, LATEST_API_VERSION, 'the demo client is pinned to the latest version');
    const response = await fetch(`${server.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { data: { status: string }[]; meta: { total: number } };
    assert.equal(body.meta.total, 5);
    assert.deepEqual(body.data.map((o) => o.status).sort(), ['cancelled', 'delivered', 'paid', 'pending', 'shipped']);
  });

  test('the demo client is public and registered for the loopback redirect URI only', async () => {
    const { rows } = await server.db.query<{ metadata: Record<string, unknown> }>(
      'SELECT metadata FROM oauth_clients WHERE client_id = $1',
      [DEMO_CLIENT_ID],
    );
    assert.equal(rows[0]?.metadata.token_endpoint_auth_method, 'none');
    assert.deepEqual(rows[0]?.metadata.redirect_uris, [DEMO_REDIRECT_URI]);
  });
});
