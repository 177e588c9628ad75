// OpenID Connect RP-Initiated Logout 1.0 at /oauth/logout: a confirmation page of ours (no-store,
// framing forbidden) whose form, once submitted, ends the session at the authorization server.
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { createPublicClient } from '../../src/auth/clients.store.ts';
import { FormBrowser, signInWithForms, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const REDIRECT_URI = 'http://127.0.0.1:29199/callback';

const PORT = 29_181;
let server: AuthServer;

let clientId: string;

before(async () => {
  server = await startAuthServer(PORT);
  await server.createUser('lin@example.test', 'a fine password', 'customer');
  ({ clientId } = await createPublicClient(server.db, { name: 'Logout app', redirectUris: [REDIRECT_URI] }));
});

/** A browser with a session at the authorization server. */
async function signedInBrowser(): Promise<FormBrowser> {
  const config = await client.discovery(new URL(server.issuer), clientId, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
  });
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state: client.randomState(),
    code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  });
  const browser = new FormBrowser();
  const callback = await signInWithForms(server, url.toString(), 'lin@example.test', 'a fine password', browser);
  assert.ok(callback.searchParams.get('code'));
  return browser;
}
after(async () => {
  await server.close();
});

describe('RP-Initiated Logout 1.0', () => {
  test('GET /oauth/logout asks a signed-in user for confirmation; submitting the form signs out', async () => {
    const browser = await signedInBrowser();
    const page = await browser.request(`${server.issuer}/logout`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    const html = await page.text();
    assert.match(html, /<h1>Sign out of orderpay\?<\/h1>/);
    const action =
      /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"/.exec(html)?.[1] ??
      /<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"/.exec(html)?.[1];
    assert.ok(action, 'the logout form is on the page');
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
    assert.ok(xsrf, 'the form carries its xsrf token');
    const { response } = await browser.follow(new URL(action, server.baseUrl).toString(), { form: { xsrf, logout: 'yes' } });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /You are signed out/);
    // The session is gone: /oauth/logout has nobody left to ask.
    const again = await browser.request(`${server.issuer}/logout`);
    assert.doesNotMatch(await again.text(), /Sign out of orderpay\?/);
  });

  test('GET /oauth/logout without a session: the self-submitting form is framed by nobody and runs only its own script', async () => {
    const page = await new FormBrowser().request(`${server.issuer}/logout`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    const script = /<script>([\s\S]*?)<\/script>/.exec(await page.text())?.[1];
    assert.ok(script, 'the page submits its form by an inline script');
    const hash = createHash('sha256').update(script).digest('base64');
    assert.match(csp, new RegExp(`script-src 'self' 'sha256-${hash.replace(/[+/]/g, '\\$&')}'`), 'that script, and only it, by its hash');
  });

  test('a logout POST without the xsrf token is refused', async () => {
    const response = await new FormBrowser().request(`${server.issuer}/logout/confirm`, { form: { logout: 'yes' } });
    assert.ok(response.status >= 400 && response.status < 500, `status ${response.status}`);
  });
});
