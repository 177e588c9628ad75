// /docs signs in (RFC 6749 §4.1 with RFC 7636 PKCE) and tries requests, in Debian's Chromium: its
// Authorize button opens the authorization server's login and consent pages as the public client
// orderpay-docs, whose redirect URI is the page's own; a demo user signs in, and "Try it out" on
// GET /orders answers 200 with her orders. A token pasted into the page works as well, and the
// page a browser gets at / links to it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import type { Browser, Page, Request } from 'playwright-core';
import { LATEST_API_VERSION } from '../../src/core/api-versions.ts';
import { issueTokenFor } from '../../src/auth/access-token.ts';
import { DEMO_CUSTOMER_EMAILS, DEMO_PASSWORD, seedDemoData } from '../../src/seed.ts';
import { findUserByEmail } from '../../src/users/users.store.ts';
import { launchChromium, withChromium } from '../helpers/browser.ts';
import { startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_240;
const ORIGIN = `http://127.0.0.1:${PORT}`;
const EMAIL = DEMO_CUSTOMER_EMAILS[0]!;

withChromium('/docs signs in and tries requests in a real browser', () => {
  describe('/docs: Authorize (authorization code + PKCE) and a pasted token, in a real browser', () => {
    let server: AuthServer;
    let browser: Browser;
    let userId: number;

    before(async () => {
      server = await startAuthServer(PORT);
      await seedDemoData(server.db);
      userId = (await findUserByEmail(server.db, EMAIL))!.id;
      browser = await launchChromium();
    });
    after(async () => {
      const closed = await Promise.allSettled([browser?.close(), server?.close()]);
      const failure = closed.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    });

    /** A fresh context (no session cookie) with /docs open, its requests and any page errors recorded. */
    async function openDocs(run: (page: Page, requests: Request[], errors: string[]) => Promise<void>): Promise<void> {
      const context = await browser.newContext();
      try {
        const requests: Request[] = [];
        const errors: string[] = [];
        context.on('request', (request) => requests.push(request));
        context.on('page', (page) => {
          page.on('pageerror', (error) => errors.push(error.message));
          page.on('console', (message) => {
            if (message.type() === 'error') errors.push(message.text());
          });
        });
        const page = await context.newPage();
        page.setDefaultTimeout(20_000);
        await page.goto(`${ORIGIN}/docs`, { waitUntil: 'networkidle' });
        await page.locator('.swagger-ui .info .title').first().waitFor();
        await run(page, requests, errors);
      } finally {
        await context.close();
      }
    }

    /** Try it out → Execute on GET /orders; the status shown and the request the page sent. */
    async function tryListOrders(page: Page, requests: Request[]): Promise<{ status: string; sent: Request }> {
      const listOrders = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path', { hasText: /^\/orders$/ }) });
      await listOrders.locator('.opblock-summary').click();
      await listOrders.locator('button.try-out__btn').click();
      await listOrders.locator('button.execute').click();
      const status = listOrders.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor();
      const sent = requests.filter((request) => new URL(request.url()).pathname === `/v${LATEST_API_VERSION}/orders`).at(-1);
      assert.ok(sent, `the page called GET /v${LATEST_API_VERSION}/orders`);
      return { status: (await status.innerText()).trim(), sent };
    }

    test('Authorize → login as a demo user → consent → back on the page; Try it out on GET /orders → 200', async () => {
      await openDocs(async (page, requests, errors) => {
        await page.locator('.auth-wrapper button.authorize').click();
        const oauth = page.locator('.auth-container', { hasText: 'authorizationCode with PKCE' });
        assert.equal(await oauth.locator('input#client_id_authorizationCode').inputValue(), 'orderpay-docs', 'the client id is filled in');
        const popup = page.waitForEvent('popup');
        await oauth.locator('button.authorize').click();
        const signIn = await popup;

        await signIn.getByRole('heading', { name: 'Sign in to continue to the orderpay API reference' }).waitFor();
        await signIn.getByLabel('Email').fill(EMAIL);
        await signIn.getByLabel('Password').fill(DEMO_PASSWORD);
        await signIn.getByRole('button', { name: 'Sign in', exact: true }).click();
        await signIn.getByRole('heading', { name: 'the orderpay API reference would like to' }).waitFor();
        // The redirect page hands the code to the opener, which redeems it, and closes itself: the
        // wait starts before the click, since the page may close before the click's promise settles
        // (a wait begun on a closed page would never end).
        const closed = signIn.waitForEvent('close');
        await signIn.getByRole('button', { name: 'Allow', exact: true }).click();
        await closed;
        await oauth.locator('button', { hasText: 'Logout' }).waitFor();

        const authorize = requests.find((request) => new URL(request.url()).pathname === '/oauth/authorize');
        assert.ok(authorize, 'the page sent the browser to the authorization endpoint');
        const query = new URL(authorize.url()).searchParams;
        assert.equal(query.get('client_id'), 'orderpay-docs');
        assert.equal(query.get('response_type'), 'code');
        assert.equal(query.get('redirect_uri'), `${ORIGIN}/docs/static/oauth2-redirect.html`);
        assert.equal(query.get('code_challenge_method'), 'S256');
        assert.match(query.get('code_challenge') ?? '', /^[\w-]{43}$/);
        assert.deepEqual(query.get('scope')?.split(' ').sort(), ['orders:read', 'orders:write', 'payments:read', 'payments:write']);

        const token = requests.find((request) => new URL(request.url()).pathname === '/oauth/token');
        assert.ok(token, 'the page redeemed the code');
        const exchange = new URLSearchParams(token.postData() ?? '');
        assert.equal(exchange.get('grant_type'), 'authorization_code');
        assert.match(exchange.get('code_verifier') ?? '', /^[\w.~-]{43,128}$/);
        const tokenResponse = await token.response();
        assert.equal(tokenResponse?.status(), 200);
        const issued = (await tokenResponse!.json()) as Record<string, unknown>;
        assert.equal(issued.refresh_token, undefined, 'no refresh token for a page that only tries requests');

        await page.locator('.modal-ux button.close-modal').click();
        const { status, sent } = await tryListOrders(page, requests);
        assert.equal(status, '200');
        const claims = decodeJwt(String((await sent.allHeaders()).authorization).replace(/^Bearer /, ''));
        assert.equal(claims.client_id, 'orderpay-docs');
        assert.equal(claims.sub, String(userId), "the demo user's own token");
        assert.equal(claims.aud, ORIGIN);
        const body = (await (await sent.response())!.json()) as { data: { customerId: number }[]; meta: { total: number } };
        assert.ok(body.meta.total > 0, 'the demo user has orders');
        assert.ok(body.data.every((order) => order.customerId === userId));
        assert.deepEqual(errors, []);
      });
    });

    test('/ in a browser is a page of links; its API reference link opens /docs', async () => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        const response = await page.goto(`${ORIGIN}/`);
        assert.equal(response?.headers()['content-type'], 'text/html; charset=utf-8');
        await page.getByRole('link', { name: 'API reference' }).click();
        await page.locator('.swagger-ui .info .title').first().waitFor();
        assert.equal(page.url(), `${ORIGIN}/docs`);
      } finally {
        await context.close();
      }
    });

    test('a pasted access token (as npm start prints) → Try it out on GET /orders → 200', async () => {
      const pasted = await issueTokenFor(server.db, server.config, { email: EMAIL }, [], 3600);
      await openDocs(async (page, requests, errors) => {
        await page.locator('.auth-wrapper button.authorize').click();
        const bearer = page.locator('.auth-container', { hasText: '(http, Bearer)' });
        await bearer.locator('input#auth-bearer-value').fill(pasted);
        await bearer.locator('button.authorize').click();
        await bearer.locator('button', { hasText: 'Logout' }).waitFor();
        await page.locator('.modal-ux button.close-modal').click();

        const { status, sent } = await tryListOrders(page, requests);
        assert.equal(status, '200');
        assert.equal((await sent.allHeaders()).authorization, `Bearer ${pasted}`);
        assert.deepEqual(errors, []);
      });
    });
  });
});
