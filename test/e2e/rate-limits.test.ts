// Brute-force protection of the sign-in form (per account and per IP) and the request limit of
// every /oauth endpoint, counted in the database so that all processes share them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { createPublicClient } from '../../src/auth/clients.store.ts';
import { LOGIN_FAILURES_PER_ACCOUNT, OAUTH_REQUESTS_PER_IP } from '../../src/auth/rate-limits.ts';
import { FormBrowser, readForm, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_141;
const REDIRECT_URI = 'http://127.0.0.1:29199/callback';

let server: AuthServer;
let clientId: string;

// The limits' clock is frozen in the middle of a 15-minute window (a whole number of every
// window length used here), so no window boundary falls inside the test.
const WINDOW_MS = 15 * 60_000;
const FROZEN = new Date(Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS + WINDOW_MS / 2);

before(async () => {
  server = await startAuthServer(PORT, {}, { rateLimitNow: () => FROZEN });
  await server.createUser('grace@example.test', 'the right password', 'customer');
  ({ clientId } = await createPublicClient(server.db, { name: 'Limits app', redirectUris: [REDIRECT_URI] }));
});
after(async () => {
  await server.close();
});

/** Opens a fresh login page; returns a function that submits it. */
async function openLogin() {
  const config = await client.discovery(new URL(server.issuer), clientId, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
  });
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid orders:read',
    state: client.randomState(),
    code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  });
  const browser = new FormBrowser();
  const { response } = await browser.follow(url.toString());
  const form = readForm(await response.text());
  return (email: string, password: string) =>
    browser.request(new URL(form.action, server.baseUrl).toString(), { form: { ...form.fields, email, password } });
}

describe('sign-in brute force limits', () => {
  // All requests come from 127.0.0.1: the order keeps the per-IP budget (20) from deciding a test.
  test('a successful sign-in does not use up the budget', async () => {
    await server.createUser('often@example.test', 'signs in a lot', 'customer');
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT.limit + 2; i++) {
      const response = await (await openLogin())('often@example.test', 'signs in a lot');
      assert.equal(response.status, 303, `sign-in ${i + 1} goes through`);
    }
  });

  test(`after ${LOGIN_FAILURES_PER_ACCOUNT.limit} failures an account is blocked, even for the right password`, async () => {
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT.limit; i++) {
      const response = await (await openLogin())('grace@example.test', `wrong ${i}`);
      assert.equal(response.status, 401);
      assert.match(await response.text(), /The email or password is not correct/);
    }
    const blocked = await (await openLogin())('grace@example.test', 'the right password');
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    assert.match(await blocked.text(), /Too many failed sign-in attempts/);
  });

  test('an unknown email is limited the same way, so the answer reveals nothing', async () => {
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT.limit; i++) {
      const response = await (await openLogin())('nobody@example.test', 'whatever it is');
      assert.equal(response.status, 401);
      assert.match(await response.text(), /The email or password is not correct/);
    }
    const blocked = await (await openLogin())('nobody@example.test', 'whatever it is');
    assert.equal(blocked.status, 429);
  });
  test('parallel guesses cannot outrun the limit: attempts are counted before the password is checked', async () => {
    const submits = await Promise.all(Array.from({ length: 12 }, () => openLogin()));
    const statuses = await Promise.all(submits.map(async (submit, i) => (await submit('parallel@example.test', `guess ${i}`)).status));
    // At most the account's budget of passwords is ever checked. Not exactly that many: earlier tests
    // used part of the per-IP budget, and with parallel connections (PostgreSQL) one of the first
    // five attempts on the account can be the one past the IP's limit.
    const checked = statuses.filter((s) => s === 401).length;
    assert.ok(checked >= 1 && checked <= LOGIN_FAILURES_PER_ACCOUNT.limit, `statuses ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 429).length, 12 - checked, `statuses ${statuses.join(',')}`);
  });
});

describe('/oauth request limit per client IP', () => {
  test(`request ${OAUTH_REQUESTS_PER_IP.limit + 1} in a window gets 429 with an RFC 6749 error body`, async () => {
    let limited: Response | undefined;
    // One frozen window: the limit is reached within limit + 1 requests (earlier tests used some).
    for (let i = 0; i <= OAUTH_REQUESTS_PER_IP.limit && !limited; i++) {
      const response = await fetch(`${server.issuer}/.well-known/openid-configuration`);
      if (response.status === 429) limited = response;
      else {
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('ratelimit-policy'), `"oauth";q=${OAUTH_REQUESTS_PER_IP.limit};w=60`);
        assert.match(String(response.headers.get('ratelimit')), /^"oauth";r=\d+;t=\d+$/);
        await response.arrayBuffer();
      }
    }
    assert.ok(limited, 'the limit was reached');
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal(limited.headers.get('cache-control'), 'no-store');
    assert.match(String(limited.headers.get('ratelimit')), /^"oauth";r=0;t=\d+$/);
    const body = (await limited.json()) as Record<string, unknown>;
    assert.equal(body.error, 'temporarily_unavailable');
    assert.match(String(body.error_description), /Too many requests/);
  });
});
