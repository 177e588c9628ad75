// /docs in a real browser (Debian's Chromium through playwright-core): Swagger UI renders under its
// own Content-Security-Policy (src/http/openapi.ts) without a single violation, and "Try it out"
// reaches the API.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { EXAMPLE_KEY_PREFIX } from '../../src/http/idempotency.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { launchChromium, withChromium } from '../helpers/browser.ts';

const PORT = 29730;
const ORIGIN = `http://127.0.0.1:${PORT}`;

withChromium('Swagger UI in a real browser', () => {
  describe('/docs: Swagger UI under its Content-Security-Policy, in a real browser', () => {
    let t: TestApp;
    let browser: Browser;
    before(async () => {
      // "Try it out" calls the API at PUBLIC_URL: here, the server the browser talks to.
      t = await startTestApp({ publicUrl: ORIGIN });
      await t.app.listen({ host: '127.0.0.1', port: PORT });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await t.close();
    });

    test('renders the latest version, lists its operations, and tries one out, with no CSP violation or error', async () => {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      await page.addInitScript({
        content:
          "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
      });
      const response = await page.goto(`${ORIGIN}/docs`, { waitUntil: 'networkidle' });
      assert.match(response?.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
      await page.locator('.swagger-ui .info .title').first().waitFor();
      assert.match(await page.locator('.swagger-ui .info .title').first().innerText(), /^orderpay/);
      assert.ok((await page.locator('.opblock').count()) > 5, 'the operations are listed');

      const listOrders = page.locator('.opblock-get', { hasText: '/orders' }).first();
      await listOrders.locator('.opblock-summary').click();
      await listOrders.locator('button.try-out__btn').click();
      await listOrders.locator('button.execute').click();
      // No token was given: the API's own 401 comes back and is shown.
      await listOrders.locator('.live-responses-table .response-col_status', { hasText: '401' }).first().waitFor();
      assert.deepEqual(
        problems.filter((text) => !/status of 401/.test(text)),
        [],
      );
      await page.close();
    });

    test('"Try it out" sends a fresh Idempotency-Key on every try, never the example the form shows', async () => {
      const page = await browser.newPage();
      const keys: string[] = [];
      page.on('request', (request) => {
        const key = request.headers()['idempotency-key'];
        if (request.method() === 'POST' && key !== undefined) keys.push(key);
      });
      await page.goto(`${ORIGIN}/docs`, { waitUntil: 'networkidle' });
      const pay = page.locator('.opblock-post', { has: page.locator('.opblock-summary-path', { hasText: /^\/payments$/ }) }).first();
      await pay.locator('.opblock-summary').click();
      await pay.locator('button.try-out__btn').click();
      const shown = await pay.locator('tr[data-param-name="idempotency-key"] input').inputValue();
      assert.ok(shown.startsWith(EXAMPLE_KEY_PREFIX), `the form shows the example: ${shown}`);
      for (let attempt = 1; attempt <= 2; attempt++) {
        const answered = page.waitForEvent(
          'requestfinished',
          (request) => request.method() === 'POST' && request.url().endsWith('/payments'),
        );
        await pay.locator('button.execute').click();
        await answered;
      }
      assert.equal(keys.length, 2, keys.join(', '));
      assert.notEqual(keys[0], keys[1]);
      for (const key of keys) assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.ok(!keys.some((key) => key.startsWith(EXAMPLE_KEY_PREFIX)));
      await page.close();
    });
  });
});
