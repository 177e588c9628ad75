// A stored idempotent result is replayed only to a caller who still authenticates: after the
// grant behind the access token is revoked (RFC 7009), a retry with the same Idempotency-Key is a
// 401, not the stored 201. Real sockets, a real OAuth client (openid-client).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as client from 'openid-client';
import { createPublicClient } from '../../src/auth/clients.store.ts';
import { FormBrowser, signInWithForms, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_603;
const REDIRECT_URI = 'http://127.0.0.1:29618/callback';
const SCOPE = 'openid offline_access payments:read payments:write';
const USER = { email: 'replay-revoked@example.test', password: 'replay horse battery' };

let server: AuthServer;
let config: client.Configuration;

before(async () => {
  // revocationCheckIntervalMs 0: every request reads revoked_grants, so the refusal is immediate.
  server = await startAuthServer(PORT, {}, { revocationCheckIntervalMs: 0 });
  await server.createUser(USER.email, USER.password);
  const { clientId } = await createPublicClient(server.db, {
    name: 'Replay app',
    redirectUris: [REDIRECT_URI],
    scopes: ['openid', 'offline_access', 'payments:read', 'payments:write'],
  });
  config = await client.discovery(new URL(server.issuer), clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
});
after(() => server.close());

async function signIn(): Promise<client.TokenEndpointResponse> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    state,
    prompt: 'consent',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const callback = await signInWithForms(server, url.toString(), USER.email, USER.password, new FormBrowser());
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
}

const pay = (accessToken: string, key: string) =>
  fetch(`${server.baseUrl}/v1/payments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ amount: 1234, currency: 'EUR' }),
  });

test('after the grant is revoked, a retry with the same key is a 401 and never the stored payment', async () => {
  const tokens = await signIn();
  const key = randomUUID();

  const first = await pay(tokens.access_token, key);
  assert.equal(first.status, 201);
  const stored = await first.text();
  const replay = await pay(tokens.access_token, key);
  assert.equal(replay.status, 201);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(await replay.text(), stored);

  await client.tokenRevocation(config, tokens.refresh_token!);

  const refused = await pay(tokens.access_token, key);
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get('idempotent-replayed'), null);
  assert.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.equal(
    refused.headers.get('www-authenticate'),
    'Bearer realm="orderpay", error="invalid_token", error_description="the token has been revoked"',
  );
  const problem = (await refused.json()) as Record<string, unknown>;
  assert.equal(problem.code, 'AUTH_TOKEN_INVALID');
  assert.equal(problem.detail, 'The access token is invalid: the token has been revoked.');

  // The payment was made once, and its stored response is still there for a caller who may see it.
  const { id } = JSON.parse(stored) as { id: number };
  const { rows } = await server.db.query<{ n: number }>(
    `SELECT count(*) AS n FROM payments p JOIN idempotency_keys k ON k.response_body = $2
      WHERE p.id = $1 AND k.key = $3 AND k.state = 'completed'`,
    [id, stored, key],
  );
  assert.equal(rows[0]!.n, 1);
});
