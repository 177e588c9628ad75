// Signing in through a real browser (RFC 6749 §4.1 with RFC 7636 PKCE): Debian's Chromium, driven
// by playwright-core, fills the login and consent pages as a person would; openid-client is the
// relying party, and a callback server of our own is where the browser finally lands.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as client from 'openid-client';
import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import { createPublicClient } from '../../src/auth/clients.store.ts';
import { launchChromium, withChromium } from '../helpers/browser.ts';
import { startAuthServer, type AuthServer } from '../helpers/oauth.ts';
import { EMPTY_FIRST_PAGE_META } from '../helpers/paging.ts';

const PORT = 29_131;
const CALLBACK_PORT = 29_132;
const CALLBACK_ORIGIN = `http://127.0.0.1:${CALLBACK_PORT}`;
const REDIRECT_URI = `${CALLBACK_ORIGIN}/callback`;
const SCOPE = 'openid profile email orders:read orders:write';
const EMAIL = 'grace@example.test';
const PASSWORD = 'correct horse battery staple';

withChromium('signing in with a real browser', () => {
  describe('RFC 6749 §4.1 + RFC 7636: signing in with a real browser', () => {
    let server: AuthServer;
    let clientId: string;
    let config: client.Configuration;
    let browser: Browser;
    let callbackServer: Server;
    let screenshots: string;
    const callbacks: URL[] = [];

    before(async () => {
      server = await startAuthServer(PORT);
      await server.createUser(EMAIL, PASSWORD, 'customer');
      ({ clientId } = await createPublicClient(server.db, { name: 'Browser app', redirectUris: [REDIRECT_URI], scopes: SCOPE.split(' ') }));
      config = await client.discovery(new URL(server.issuer), clientId, undefined, client.None(), {
        execute: [client.allowInsecureRequests],
      });
      callbackServer = await startCallbackServer(callbacks);
      screenshots = await mkdtemp(join(tmpdir(), 'orderpay-browser-'));
      browser = await launchChromium();
    });

    after(async () => {
      // Each is closed even when another fails (or before() stopped half way).
      const closed = await Promise.allSettled([
        browser?.close(),
        callbackServer && closeServer(callbackServer),
        server?.close(),
        screenshots && rm(screenshots, { recursive: true, force: true }),
      ]);
      const failure = closed.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    });

    /** A fresh browser context (no cookies, so no session) for each test, always closed. */
    async function withPage(run: (page: Page, consoleErrors: string[]) => Promise<void>): Promise<void> {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(15_000);
        const consoleErrors: string[] = [];
        page.on('console', (message: ConsoleMessage) => {
          if (message.type() === 'error') consoleErrors.push(message.text());
        });
        page.on('pageerror', (error) => consoleErrors.push(error.message));
        await run(page, consoleErrors);
      } finally {
        await context.close();
      }
    }

    async function startAuthorization() {
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: SCOPE,
        state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      return { verifier, state, url };
    }

    async function signIn(page: Page, email: string, password: string): Promise<void> {
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    }

    async function waitForCallback(page: Page, state: string): Promise<URL> {
      await page.waitForURL((url) => url.origin === CALLBACK_ORIGIN);
      const landed = new URL(page.url());
      assert.equal(landed.origin + landed.pathname, REDIRECT_URI);
      const recorded = callbacks.find((url) => url.searchParams.get('state') === state);
      assert.equal(recorded?.toString(), landed.toString(), 'the callback server saw the URL the browser is on');
      return landed;
    }

    test('authorize → login → consent → callback → code exchange → GET /v1/orders', async () => {
      await withPage(async (page) => {
        const { verifier, state, url } = await startAuthorization();
        await page.goto(url.toString());
        await page.getByRole('heading', { name: 'Sign in to continue to Browser app' }).waitFor();
        await signIn(page, EMAIL, PASSWORD);

        await page.getByRole('heading', { name: 'Browser app would like to' }).waitFor();
        await page.getByRole('button', { name: 'Allow', exact: true }).click();

        const callback = await waitForCallback(page, state);
        assert.equal(callback.searchParams.get('state'), state, 'state is echoed byte for byte');
        assert.equal(callback.searchParams.get('iss'), server.issuer, 'RFC 9207 iss in the authorization response');
        assert.ok(callback.searchParams.get('code'));
        assert.equal(callback.searchParams.get('error'), null);

        const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
        assert.ok(tokens.access_token && tokens.refresh_token && tokens.id_token);
        // The token response's scope is the access token's (RFC 8707 §2.2): every scope granted,
        // the OpenID Connect ones too, since the token is also for userinfo.
        assert.deepEqual(String(tokens.scope).split(' ').sort(), ['email', 'openid', 'orders:read', 'orders:write', 'profile']);

        const api = await fetch(`${server.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
        assert.equal(api.status, 200);
        assert.deepEqual(((await api.json()) as { meta: unknown }).meta, EMPTY_FIRST_PAGE_META);
      });
    });

    test('Deny sends the browser to the callback with error=access_denied and the same state', async () => {
      await withPage(async (page) => {
        const { verifier, state, url } = await startAuthorization();
        await page.goto(url.toString());
        await signIn(page, EMAIL, PASSWORD);
        await page.getByRole('button', { name: 'Deny', exact: true }).click();

        const callback = await waitForCallback(page, state);
        assert.equal(callback.searchParams.get('error'), 'access_denied');
        assert.equal(callback.searchParams.get('state'), state);
        assert.equal(callback.searchParams.get('code'), null);
        await assert.rejects(
          client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
          (error: unknown) => error instanceof client.AuthorizationResponseError && error.error === 'access_denied',
        );
      });
    });

    test('a wrong password shows an alert and stays on the login page; the right one then continues', async () => {
      await withPage(async (page) => {
        const { state, url } = await startAuthorization();
        await page.goto(url.toString());
        await signIn(page, EMAIL, 'not the password');

        await page.getByRole('alert').waitFor();
        assert.equal(await page.getByRole('alert').innerText(), 'The email or password is not correct, or the account cannot sign in.');
        assert.match(new URL(page.url()).pathname, /^\/oauth\/interaction\/[^/]+\/login$/);
        assert.equal(await page.title(), 'Sign in · orderpay');
        assert.equal(await page.getByLabel('Email').inputValue(), EMAIL, 'the email is kept');
        assert.equal(await page.getByLabel('Password').inputValue(), '', 'the password is not echoed back');
        assert.ok(!callbacks.some((callback) => callback.searchParams.get('state') === state));

        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.getByRole('heading', { name: 'Browser app would like to' }).waitFor();
      });
    });

    test('signing out without a session: the self-submitting form runs under its CSP and ends on the signed-out page', async () => {
      await withPage(async (page, consoleErrors) => {
        await page.goto(`${server.issuer}/logout`);
        await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
        assert.deepEqual(consoleErrors, [], 'no script or style refused by the CSP');
      });
    });

    test('the login and consent pages: accessible, styled under their CSP, plain-word scopes, screenshots', async () => {
      await withPage(async (page, consoleErrors) => {
        const { url } = await startAuthorization();
        const login = await page.goto(url.toString());
        assert.equal(login?.status(), 200);
        assert.equal(login?.headers()['cache-control'], 'no-store');
        assert.match(login?.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
        assert.deepEqual(await page.evaluate(auditPage), {
          lang: 'en',
          title: 'Sign in · orderpay',
          headings: 1,
          unlabelledControls: [],
          nonButtonControls: [],
          buttons: ['submit Sign in'],
        });
        await assertStylesheetApplied(page);
        await assertScreenshot(page, join(screenshots, 'login.png'));

        await signIn(page, EMAIL, PASSWORD);
        await page.getByRole('heading', { name: 'Browser app would like to' }).waitFor();
        assert.deepEqual(await page.getByRole('listitem').allInnerTexts(), [
          'Confirm who you are (openid)',
          'See your name (profile)',
          'See your email address (email)',
          'See your orders and their items (orders:read)',
          'Place, change and cancel orders for you (orders:write)',
        ]);
        assert.deepEqual(await page.evaluate(auditPage), {
          lang: 'en',
          title: 'Allow access · orderpay',
          headings: 1,
          unlabelledControls: [],
          nonButtonControls: [],
          buttons: ['submit Allow', 'submit Deny'],
        });
        await assertStylesheetApplied(page);
        await assertScreenshot(page, join(screenshots, 'consent.png'));

        assert.deepEqual(consoleErrors, [], 'no CSP violation or other error in the console');
      });
    });
  });
});

/** Answers every request with a small page and records its URL: the client's redirect_uri. */
async function startCallbackServer(seen: URL[]): Promise<Server> {
  const callbackServer = createServer(function recordCallback(request, response) {
    seen.push(new URL(request.url ?? '/', CALLBACK_ORIGIN));
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><html lang="en"><title>Callback</title><p>Back at the application.</p></html>');
  });
  await new Promise<void>((resolve, reject) => {
    callbackServer.once('error', reject);
    callbackServer.listen(CALLBACK_PORT, '127.0.0.1', resolve);
  });
  return callbackServer;
}

async function closeServer(httpServer: Server): Promise<void> {
  httpServer.closeAllConnections();
  await new Promise<void>((resolve, reject) => httpServer.close((error) => (error ? reject(error) : resolve())));
}

// The project's TypeScript has no DOM library; these are the few DOM shapes the audit reads.
interface AuditElement {
  outerHTML: string;
  textContent: string | null;
  type?: string;
  labels?: { length: number } | null;
  getAttribute(name: string): string | null;
}
interface AuditDocument {
  documentElement: { lang: string };
  title: string;
  querySelectorAll(selectors: string): Iterable<AuditElement>;
}

/** Runs in the page (Playwright sends its source): a basic accessibility audit. */
function auditPage() {
  const doc = (globalThis as unknown as { document: AuditDocument }).document;
  const controls = [...doc.querySelectorAll('input:not([type=hidden]), select, textarea')];
  return {
    lang: doc.documentElement.lang,
    title: doc.title,
    headings: [...doc.querySelectorAll('h1')].length,
    unlabelledControls: controls
      .filter((control) => !control.labels?.length && !control.getAttribute('aria-label') && !control.getAttribute('aria-labelledby'))
      .map((control) => control.outerHTML),
    // Anything clickable that is not a real <button>.
    nonButtonControls: [
      ...doc.querySelectorAll(
        '[role=button], input[type=submit], input[type=button], input[type=image], input[type=reset], a:not([href]), [onclick]',
      ),
    ].map((element) => element.outerHTML),
    buttons: [...doc.querySelectorAll('button')].map((button) => `${button.type} ${(button.textContent ?? '').trim()}`),
  };
}

/** The page's one inline stylesheet is allowed by its CSP hash: the styles really apply. */
async function assertStylesheetApplied(page: Page): Promise<void> {
  assert.equal(await page.evaluate('getComputedStyle(document.body).backgroundColor'), 'rgb(245, 245, 247)');
  assert.equal(await page.evaluate(`getComputedStyle(document.querySelector('button.primary')).backgroundColor`), 'rgb(0, 87, 184)');
}

async function assertScreenshot(page: Page, path: string): Promise<void> {
  await page.screenshot({ path, fullPage: true });
  const png = await readFile(path);
  assert.ok(png.length > 1000, `${path} is a real image (${png.length} bytes)`);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
}
