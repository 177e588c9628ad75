// offline_access (OpenID Connect Core §11) is asked for on the consent page as "stay signed in",
// and granted only there: the grant then outlives the user's session at the authorization server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { createConfidentialClient, createPublicClient } from '../../src/auth/clients.store.ts';
import { FormBrowser, readForm, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_283;
const REDIRECT_URI = 'http://127.0.0.1:29284/callback';
const EMAIL = 'otto@example.test';
const PASSWORD = 'another fine passphrase';

let server: AuthServer;
let app: client.Configuration;
let introspector: client.Configuration;

before(async () => {
  server = await startAuthServer(PORT);
  await server.createUser(EMAIL, PASSWORD, 'customer');
  const { clientId } = await createPublicClient(server.db, {
    name: 'Mobile app',
    redirectUris: [REDIRECT_URI],
    scopes: ['openid', 'offline_access', 'orders:read'],
  });
  const options = { execute: [client.allowInsecureRequests] };
  app = await client.discovery(new URL(server.issuer), clientId, undefined, client.None(), options);
  const service = await createConfidentialClient(server.db, { name: 'Introspector', scopes: ['orders:read'] });
  introspector = await client.discovery(
    new URL(server.issuer),
    service.clientId,
    service.clientSecret,
    client.ClientSecretBasic(service.clientSecret),
    options,
  );
});
after(async () => {
  await server.close();
});

/** The list items of a consent page, as text. */
function listedScopes(html: string): string[] {
  const list = /<ul>([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '';
  return [...list.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((item) => item[1]!.replace(/<[^>]+>/g, '').trim());
}

/**
 * authorize (no prompt parameter) → login when there is no session → the consent page, whose list
 * is returned with the tokens once it is submitted.
 */
async function signIn(browser: FormBrowser, scope: string) {
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(app, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  let { response, url: at } = await browser.follow(url.toString());
  let html = await response.text();
  if (html.includes('name="password"')) {
    const login = readForm(html);
    ({ response, url: at } = await browser.follow(new URL(login.action, server.baseUrl).toString(), {
      form: { ...login.fields, email: EMAIL, password: PASSWORD },
    }));
    html = await response.text();
  }
  assert.equal(response.status, 200, `consent page expected at ${at}`);
  const consent = readForm(html, 0);
  const { url: callback } = await browser.follow(new URL(consent.action, server.baseUrl).toString(), { form: consent.fields });
  const tokens = await client.authorizationCodeGrant(app, new URL(callback), { pkceCodeVerifier: verifier });
  return { listed: listedScopes(html), tokens };
}

/** RP-Initiated Logout through its confirmation page, as a person would. */
async function signOut(browser: FormBrowser): Promise<void> {
  const html = await (await browser.request(`${server.issuer}/logout`)).text();
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(action && xsrf, 'the logout form is on the page');
  const { response } = await browser.follow(new URL(action, server.baseUrl).toString(), { form: { xsrf, logout: 'yes' } });
  assert.match(await response.text(), /You are signed out/);
}

const STAY_SIGNED_IN = 'Stay signed in: keep access after you sign out of orderpay (offline_access)';

describe('OpenID Connect Core §11: offline_access', () => {
  test('asked for without prompt=consent: the consent page says "stay signed in", and the grant keeps it', async () => {
    const browser = new FormBrowser();
    const first = await signIn(browser, 'openid offline_access orders:read');
    assert.deepEqual(first.listed, ['Confirm who you are (openid)', STAY_SIGNED_IN, 'See your orders and their items (orders:read)']);
    const introspected = await client.tokenIntrospection(introspector, first.tokens.refresh_token!);
    assert.equal(introspected.scope, 'openid offline_access orders:read');

    // Asked again by a signed-in user: the page lists what the app asks for, not nothing.
    const second = await signIn(browser, 'openid offline_access orders:read');
    assert.deepEqual(second.listed, first.listed);

    // The grant outlives the session: the app stays signed in.
    await signOut(browser);
    const refreshed = await client.refreshTokenGrant(app, second.tokens.refresh_token!);
    assert.ok(refreshed.access_token);
  });

  test('without offline_access the page does not offer it, and signing out ends the grant', async () => {
    const browser = new FormBrowser();
    const { listed, tokens } = await signIn(browser, 'openid orders:read');
    assert.deepEqual(listed, ['Confirm who you are (openid)', 'See your orders and their items (orders:read)']);
    await signOut(browser);
    await assert.rejects(
      client.refreshTokenGrant(app, tokens.refresh_token!),
      (error: client.ResponseBodyError) => error.error === 'invalid_grant',
    );
  });
});
