// The staff console (/console, docs/console.md) walked in Debian's Chromium against a real server
// and database: a staff user signs in through the login and consent pages (authorization code +
// PKCE, as orderpay-console), filters and sorts orders (the back button brings the controls back
// too), opens one, edits it with a stale ETag and sees the conflict, refunds a payment with a
// double click (one refund), sees a failed webhook delivery and sends it again to a local receiver
// that then succeeds, and signs out. On an endpoint's page: ping, rotate the secret, disable and
// enable it. The browser offline, then online again; a server with a small read budget answering
// the console 429 until its window ends. A customer is told "staff only". On every page checked:
// axe-core finds nothing serious or critical, no page or console error, no CSP violation; a
// screenshot of each goes to test-artifacts/console/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Response } from 'playwright-core';
import { issueTokenFor } from '../../src/auth/access-token.ts';
import { DEMO_CUSTOMER_EMAILS, DEMO_PASSWORD, DEMO_STAFF_EMAIL, seedDemoData } from '../../src/seed.ts';
import { launchChromium, withChromium } from '../helpers/browser.ts';
import { apiClient, checkPage, signInToConsole, watchPage, type WatchedPage } from '../helpers/console-pages.ts';
import { startAuthServer, type AuthServer } from '../helpers/oauth.ts';
import { type ReceivedRequest, startReceiver, verifyDelivery, type Receiver } from '../helpers/webhooks.ts';

const PORT = 29_371;
const RECEIVER_PORT = 29_372;
const ACTIONS_RECEIVER_PORT = 29_373;
/** A second server, whose read budget the console's own requests exceed. */
const LIMITED_PORT = 29_374;
const ORIGIN = `http://127.0.0.1:${PORT}`;
const CUSTOMER = DEMO_CUSTOMER_EMAILS[0]!;
/** Where the console keeps its tokens (console/src/auth/session.ts). */
const TOKENS_KEY = 'orderpay-console.tokens';

interface Order {
  id: number;
  status: string;
  total: { value: number; currency: string };
}

withChromium('the staff console in a real browser', () => {
  let browser: Browser;
  before(async () => {
    // The build `npm install` made, made again only where a source is newer (no-op otherwise).
    execFileSync(process.execPath, [new URL('../../scripts/build-console.ts', import.meta.url).pathname, '--if-stale'], {
      stdio: 'inherit',
    });
    browser = await launchChromium();
  });
  after(() => browser?.close());

  describe('/console: the staff walk, the actions on an endpoint, offline, and a customer refused', () => {
    let server: AuthServer;
    let receiver: Receiver;
    /** The receiver of the endpoint whose actions are tried: it answers 200. */
    let actionsReceiver: Receiver;
    let order: Order;
    let paymentId: number;
    let endpointId: number;

    /** The API as a test client (not the console): a staff token by default. */
    let call: ReturnType<typeof apiClient>;

    before(async () => {
      server = await startAuthServer(PORT, { ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true', ORDERPAY_WEBHOOKS_RETRY_SCHEDULE: '1' });
      await seedDemoData(server.db);
      const staffToken = await issueTokenFor(server.db, server.config, { email: DEMO_STAFF_EMAIL }, [], 3600);
      call = apiClient(ORIGIN, staffToken);
      const customerToken = await issueTokenFor(server.db, server.config, { email: CUSTOMER }, [], 3600);
      // A receiver that fails until told otherwise, subscribed to refunds.
      receiver = await startReceiver(RECEIVER_PORT, (_request, response) =>
        response.writeHead(503, { 'content-type': 'text/plain' }).end('receiver down for maintenance'),
      );
      endpointId = (
        await call<{ id: number }>('POST', '/webhook-endpoints', {
          url: receiver.url,
          enabledEvents: ['refund.succeeded'],
          description: 'Accounting',
        })
      ).body.id;
      // An order the customer placed and paid, through the API (so its events name who acted).
      const products = (await call<{ data: { id: number; price: { currency: string } }[] }>('GET', '/products?active=true&pageSize=100'))
        .body.data;
      const product = products.find((p) => p.price.currency === 'EUR')!;
      order = (await call<Order>('POST', '/orders', { items: [{ productId: product.id, qty: 3 }] }, {}, customerToken)).body;
      paymentId = (
        await call<{ id: number; status: string }>(
          'POST',
          '/payments',
          { orderId: order.id, amount: order.total },
          { 'idempotency-key': crypto.randomUUID() },
          customerToken,
        )
      ).body.id;
      actionsReceiver = await startReceiver(ACTIONS_RECEIVER_PORT);
    });
    after(async () => {
      const closed = await Promise.allSettled([receiver?.close(), actionsReceiver?.close(), server?.close()]);
      const failure = closed.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    });

    /** A new window, its page watched, signed in to the console as email (closed by the caller). */
    async function signedIn(email: string, screenshots = false): Promise<{ context: BrowserContext; watched: WatchedPage }> {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const watched = await watchPage(context);
      await signInToConsole(watched, ORIGIN, email, DEMO_PASSWORD, screenshots);
      return { context, watched };
    }

    test('staff: sign in, orders, a stale edit, a refund, a failed delivery sent again, sign out', async () => {
      // Sign-in: authorization code + PKCE S256 with state, as orderpay-console, to its own callback.
      const { context, watched } = await signedIn(DEMO_STAFF_EMAIL, true);
      try {
        const { page, requests } = watched;
        await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
        const authorize = requests.find((request) => new URL(request.url()).pathname === '/oauth/authorize');
        assert.ok(authorize, 'the console sent the browser to the authorization endpoint');
        const query = new URL(authorize.url()).searchParams;
        assert.equal(query.get('client_id'), 'orderpay-console');
        assert.equal(query.get('redirect_uri'), `${ORIGIN}/console/callback`);
        assert.equal(query.get('response_type'), 'code');
        assert.equal(query.get('code_challenge_method'), 'S256');
        assert.match(query.get('code_challenge') ?? '', /^[\w-]{43}$/);
        assert.match(query.get('state') ?? '', /^[\w-]{20,}$/);
        const tokenRequest = requests.find((request) => new URL(request.url()).pathname === '/oauth/token');
        const issued = (await (await tokenRequest!.response())!.json()) as Record<string, unknown>;
        assert.equal(typeof issued.refresh_token, 'string', 'a refresh token for the console');
        assert.ok(String(issued.scope).split(' ').includes('payments:refund'), 'staff are granted the staff scopes');
        await page.locator('.panel').first().waitFor();
        await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
        // The charts count what the daily reports count: the seeded orders and payments of today.
        const sumOf = (rows: { orders?: number; payments?: number }[], field: 'orders' | 'payments') =>
          rows.reduce((n, row) => n + (row[field] ?? 0), 0);
        const placed = sumOf((await call<{ data: { orders: number }[] }>('GET', '/daily-order-totals')).body.data, 'orders');
        const paid = sumOf((await call<{ data: { payments: number }[] }>('GET', '/daily-payment-outcomes')).body.data, 'payments');
        assert.ok(placed > 0 && paid > 0, 'the demo data placed and paid orders in these days');
        await page.getByRole('img', { name: `Orders per day: ${placed} orders from`, exact: false }).waitFor();
        await page.getByRole('img', { name: `Payments per day by outcome: ${paid} payments, by status.` }).waitFor();
        await checkPage(watched, 'overview');

        // Orders: filter by status, sort by total descending then id ascending; the URL keeps it.
        await page.getByRole('link', { name: 'Orders', exact: true }).click();
        await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
        await page.getByLabel('Status').selectOption('paid');
        await page.getByRole('button', { name: 'Add sort key' }).click();
        await page.getByLabel('Sort key 1', { exact: true }).selectOption('total');
        await page.getByLabel('Direction of sort key 1').selectOption('desc');
        await page.getByRole('button', { name: 'Add sort key' }).click();
        await page.getByLabel('Sort key 2', { exact: true }).selectOption('id');
        await page.getByRole('button', { name: 'Apply' }).click();
        await page.waitForURL((url) => url.searchParams.get('sort') === '-total,id' && url.searchParams.get('status') === 'paid');
        const expected = (await call<{ data: Order[]; meta: { total: number } }>('GET', '/orders?status=paid&sort=-total,id')).body;
        await page.getByRole('heading', { name: `${expected.meta.total} orders` }).waitFor();
        const rows = page.locator('section[aria-labelledby="orders-found"] tbody tr');
        assert.deepEqual(
          await rows.locator('td:first-child').allInnerTexts(),
          expected.data.map((o) => `Order ${o.id}`),
          'the console lists what the API answers, in its order',
        );
        assert.ok((await rows.locator('td:nth-child(2)').allInnerTexts()).every((status) => status === 'paid'));
        await checkPage(watched, 'orders');

        // The controls follow the address: another filter applied, then back, shows the one before.
        /** Waits until the select labelled so shows value (the Status label holds its options' names too). */
        const shown = (label: string, value: string) =>
          page
            .getByLabel(label, { exact: label !== 'Status' })
            .locator(`option[value="${value}"]:checked`)
            .waitFor({ state: 'attached' });
        await page.getByLabel('Status').selectOption('shipped');
        await page.getByRole('button', { name: 'Remove sort key 2' }).click();
        await page.getByRole('button', { name: 'Apply' }).click();
        await page.waitForURL((url) => url.searchParams.get('sort') === '-total' && url.searchParams.get('status') === 'shipped');
        await page.goBack();
        await page.waitForURL((url) => url.searchParams.get('sort') === '-total,id' && url.searchParams.get('status') === 'paid');
        await shown('Status', 'paid');
        await shown('Sort key 1', 'total');
        await shown('Direction of sort key 1', 'desc');
        await shown('Sort key 2', 'id');
        await page.getByRole('heading', { name: `${expected.meta.total} orders` }).waitFor();
        await page.goBack();
        await page.waitForURL((url) => url.pathname === '/console/orders' && url.search === '');
        await shown('Status', '');
        await page.getByText("The collection's default order.").waitFor();
        await page.goForward();
        await page.waitForURL((url) => url.searchParams.get('sort') === '-total,id' && url.searchParams.get('status') === 'paid');
        await shown('Status', 'paid');
        await shown('Sort key 2', 'id');

        // An access token about to expire is refreshed before the request (the refresh token rotates);
        // one the API refuses (401) is refreshed once and the request sent again.
        const refreshOn = async (change: string) => {
          await page.evaluate(
            `(() => { const t = JSON.parse(sessionStorage.getItem('${TOKENS_KEY}')); ${change}; sessionStorage.setItem('${TOKENS_KEY}', JSON.stringify(t)); })()`,
          );
          const refresh = page.waitForResponse(
            (response) =>
              new URL(response.url()).pathname === '/oauth/token' && /grant_type=refresh_token/.test(response.request().postData() ?? ''),
          );
          await page.reload();
          const answered = await refresh;
          assert.equal(answered.status(), 200);
          await page.getByRole('heading', { name: `${expected.meta.total} orders` }).waitFor();
          return (await answered.json()) as { refresh_token: string };
        };
        const before = (await page.evaluate(`JSON.parse(sessionStorage.getItem('${TOKENS_KEY}')).refreshToken`)) as string;
        const rotated = await refreshOn('t.expiresAt = Date.now()');
        assert.notEqual(rotated.refresh_token, before, 'the refresh token rotated');
        watched.expect({ status: 401, path: /^\/v3\/orders$/ });
        await refreshOn("t.accessToken = 'not-a-token'; t.expiresAt = Date.now() + 3600000");

        // The order: items, payments, events with who acted.
        await page.getByRole('link', { name: `Order ${order.id}`, exact: true }).click();
        await page.getByRole('heading', { name: `Order ${order.id}`, level: 1 }).waitFor();
        await page.getByRole('link', { name: `Payment ${paymentId}`, exact: true }).waitFor();
        const history = page.locator('section[aria-labelledby="order-events"] tbody');
        await history.getByRole('cell', { name: 'order.paid' }).waitFor();
        assert.match(await history.innerText(), /User \d+ via orderpay-cli/);

        // Someone else ships it meanwhile; the console's change carries the ETag it read: 412.
        await call('PATCH', `/orders/${order.id}`, { status: 'shipped' }, { 'content-type': 'application/merge-patch+json' });
        watched.expect({ status: 412, path: new RegExp(`^/v3/orders/${order.id}$`) });
        await page.getByLabel('New status').selectOption('cancelled');
        await page.getByRole('button', { name: 'Save status' }).click();
        const conflict = page.locator('.conflict');
        await conflict.getByRole('heading', { name: 'Someone changed this order after you opened it' }).waitFor();
        assert.deepEqual(
          await conflict
            .getByRole('row', { name: /^Status/ })
            .locator('td')
            .allInnerTexts(),
          ['paid', 'shipped'],
        );
        await page.getByRole('alert').filter({ hasText: '412' }).waitFor();
        await checkPage(watched, 'order-conflict');
        await conflict.getByRole('button', { name: 'Reload the order' }).click();
        await page.locator('.facts').getByText('shipped', { exact: true }).waitFor();
        await page.getByLabel('New status').selectOption('delivered');
        await page.getByRole('button', { name: 'Save status' }).click();
        await page
          .getByRole('status')
          .filter({ hasText: `Order ${order.id} is now delivered.` })
          .waitFor();
        assert.equal((await call<Order>('GET', `/orders/${order.id}`)).body.status, 'delivered');
        // Its history names who made each change: the staff user through the console this time.
        await history
          .getByRole('row', { name: /order\.delivered/ })
          .getByRole('cell', { name: /^User \d+ via orderpay-console$/ })
          .waitFor();
        await checkPage(watched, 'order');

        // A partial refund, double-clicked: one Idempotency-Key for the intent, one refund.
        await page.getByRole('link', { name: `Payment ${paymentId}`, exact: true }).click();
        await page.getByRole('heading', { name: `Payment ${paymentId}`, level: 1 }).waitFor();
        await page.getByLabel('Part of it').check();
        await page.getByLabel(/^Amount to refund/).fill('1.50');
        await page.getByRole('button', { name: /^Refund €1\.50$/ }).dblclick();
        await page
          .getByRole('status')
          .filter({ hasText: /Refund \d+ of €1\.50: succeeded/ })
          .waitFor();
        const refunds = (await call<{ data: { amount: { value: number } }[] }>('GET', `/payments/${paymentId}/refunds`)).body.data;
        assert.deepEqual(
          refunds.map((r) => r.amount.value),
          [150],
          'one refund, whatever the clicks',
        );
        const sent = requests.filter((r) => r.method() === 'POST' && new URL(r.url()).pathname === `/v3/payments/${paymentId}/refunds`);
        assert.ok(sent.length >= 1);
        assert.equal(new Set(sent.map((r) => r.headers()['idempotency-key'])).size, 1, 'every send of the refund carried the same key');
        await page.locator('section[aria-labelledby="payment-refunds"]').getByRole('cell', { name: '€1.50' }).waitFor();
        await checkPage(watched, 'payment');

        // The refund in the payments list.
        await page.getByRole('link', { name: 'Payments', exact: true }).click();
        await page.getByLabel('Order id').fill(String(order.id));
        await page.getByRole('button', { name: 'Apply' }).click();
        const paymentRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: `Payment ${paymentId}`, exact: true }) });
        await paymentRow.getByRole('cell', { name: '€1.50' }).waitFor();
        await checkPage(watched, 'payments');
        // Back to the unfiltered list: the order id leaves its control too; forward brings it again.
        await page.goBack();
        await page.waitForURL((url) => url.pathname === '/console/payments' && url.search === '');
        await page.getByLabel('Order id').and(page.locator('[value=""]')).waitFor();
        await page.goForward();
        await page
          .getByLabel('Order id')
          .and(page.locator(`[value="${order.id}"]`))
          .waitFor();

        // The refund's webhook failed (503 twice: the retry schedule here is one second); send it again.
        await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
        await page.getByRole('link', { name: `Endpoint ${endpointId}`, exact: true }).waitFor();
        await checkPage(watched, 'webhooks');
        await page.getByRole('link', { name: `Endpoint ${endpointId}`, exact: true }).click();
        const deliveries = page.locator('ol.deliveries > li');
        await deliveries.first().locator('.state-failed').waitFor();
        assert.match(await deliveries.first().innerText(), /refund\.succeeded[\s\S]*503[\s\S]*receiver down for maintenance/);
        await checkPage(watched, 'webhook-endpoint');
        receiver.answer((_request, response) => response.writeHead(204).end());
        const failedEvent = (await deliveries.first().locator('code').first().innerText()).trim();
        await deliveries
          .first()
          .getByRole('button', { name: /^Send again/ })
          .click();
        await page
          .getByRole('status')
          .filter({ hasText: `Event ${failedEvent} is queued again` })
          .waitFor();
        await deliveries.first().locator('.state-succeeded').waitFor();
        assert.equal(receiver.requests.at(-1)?.headers['webhook-id'], failedEvent, 'the receiver got the same event again');

        // Sign out: the refresh token revoked, the session ended at the authorization server.
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('heading', { name: 'Sign out of orderpay?' }).waitFor();
        await page.getByRole('button', { name: 'Sign out', exact: true }).click();
        await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
        assert.equal(new URL(page.url()).pathname, '/console/signed-out');
        const revocation = requests.find((request) => new URL(request.url()).pathname === '/oauth/revoke');
        assert.equal((await revocation?.response())?.status(), 200, 'the refresh token was revoked');
        assert.equal(await page.evaluate('sessionStorage.length'), 0, 'nothing kept in the tab');
        await checkPage(watched, 'signed-out');
      } finally {
        await context.close();
      }
    });

    test('staff: an endpoint pinged, its secret rotated (shown once, signing what follows), disabled and enabled', async () => {
      const created = (
        await call<{ id: number; secret: string }>('POST', '/webhook-endpoints', {
          url: actionsReceiver.url,
          enabledEvents: ['product.created'],
          description: 'Fulfilment',
        })
      ).body;
      const { context, watched } = await signedIn(DEMO_STAFF_EMAIL);
      try {
        const { page, requests } = watched;
        await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
        await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
        await page.getByRole('link', { name: `Endpoint ${created.id}`, exact: true }).click();
        await page.getByRole('heading', { name: `Webhook endpoint ${created.id}`, level: 1 }).waitFor();
        const facts = page.locator('.facts');
        const notice = page.getByRole('status').filter({ hasText: /./ });

        /** Ping from the page: its delivery succeeds in the log, and the receiver has it. */
        async function ping(): Promise<{ deliveryId: number; received: ReceivedRequest }> {
          const before = actionsReceiver.requests.length;
          await page.getByRole('button', { name: 'Ping', exact: true }).click();
          const sent = await notice.filter({ hasText: /^Ping sent as delivery \d+/ }).innerText();
          const deliveryId = Number(/delivery (\d+)/.exec(sent)![1]);
          const delivery = page.getByRole('article', { name: `Delivery ${deliveryId}`, exact: true });
          await delivery.locator('.state-succeeded').waitFor();
          assert.match(await delivery.locator('header').innerText(), /webhook_endpoint\.ping/);
          const received = (await actionsReceiver.waitForRequests(before + 1))[before]!;
          return { deliveryId, received };
        }

        // Ping: a webhook_endpoint.ping delivery, signed with the secret the endpoint was made with.
        const first = await ping();
        assert.equal((verifyDelivery(created.secret, first.received) as { type: string }).type, 'webhook_endpoint.ping');

        // Rotate the secret: shown once; what is signed from now on verifies with it.
        await page.getByRole('button', { name: 'Rotate the secret' }).click();
        await notice.filter({ hasText: 'The secret was rotated.' }).waitFor();
        const secret = await page.getByLabel('New secret').inputValue();
        assert.match(secret, /^whsec_/);
        assert.notEqual(secret, created.secret);
        const endpoint = (await call<Record<string, unknown>>('GET', `/webhook-endpoints/${created.id}`)).body;
        assert.equal('secret' in endpoint, false, 'a read never shows the secret');
        assert.equal(typeof endpoint.previousSecretExpiresAt, 'string', 'the previous secret still signs for a while');
        await checkPage(watched, 'webhook-endpoint-secret');
        await page.getByRole('button', { name: 'I have stored it' }).click();
        await page.getByLabel('New secret').waitFor({ state: 'detached' });
        const second = await ping();
        assert.equal((verifyDelivery(secret, second.received) as { type: string }).type, 'webhook_endpoint.ping');
        assert.throws(
          () => verifyDelivery(secret, first.received),
          /signature/i,
          'the new secret is new: it did not sign before the rotation',
        );

        // Disable, then enable: each a PUT with If-Match of the ETag as the page read it; the page and the API agree.
        const puts = () =>
          requests.filter((r) => r.method() === 'PUT' && new URL(r.url()).pathname === `/v3/webhook-endpoints/${created.id}`);
        const etagNow = async () => (await call('GET', `/webhook-endpoints/${created.id}`)).response.headers.get('etag');
        const enabledEtag = await etagNow();
        await page.getByRole('button', { name: 'Disable', exact: true }).click();
        await notice.filter({ hasText: 'The endpoint is disabled: nothing is sent to it.' }).waitFor();
        await facts.getByText('Disabled (requested)', { exact: true }).waitFor();
        assert.equal(await page.getByRole('button', { name: 'Ping', exact: true }).isDisabled(), true, 'a disabled endpoint is not pinged');
        assert.equal(puts().at(-1)?.headers()['if-match'], enabledEtag);
        const disabled = await call<{ disabled: boolean; disabledReason: string | null }>('GET', `/webhook-endpoints/${created.id}`);
        assert.deepEqual([disabled.body.disabled, disabled.body.disabledReason], [true, 'requested']);
        const disabledEtag = disabled.response.headers.get('etag');
        assert.notEqual(disabledEtag, enabledEtag);
        await checkPage(watched, 'webhook-endpoint-disabled');
        await page.getByRole('button', { name: 'Enable', exact: true }).click();
        await notice.filter({ hasText: 'The endpoint is enabled again.' }).waitFor();
        await facts.getByText('Enabled', { exact: true }).waitFor();
        assert.equal(puts().at(-1)?.headers()['if-match'], disabledEtag, 'the second PUT carried the ETag read after the first');
        assert.equal(puts().length, 2);
        const enabled = (await call<{ disabled: boolean; disabledReason: string | null }>('GET', `/webhook-endpoints/${created.id}`)).body;
        assert.deepEqual([enabled.disabled, enabled.disabledReason], [false, null]);
        await page.getByRole('button', { name: 'Ping', exact: true }).and(page.locator(':enabled')).waitFor();
        assert.deepEqual(watched.problems, []);
      } finally {
        await context.close();
      }
    });

    test('offline: an action shows "no connection"; back online, the banner goes and the next request gets through', async () => {
      const { context, watched } = await signedIn(DEMO_STAFF_EMAIL);
      try {
        const { page } = watched;
        await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
        await page.getByRole('link', { name: 'Orders', exact: true }).click();
        const total = (await call<{ meta: { total: number } }>('GET', '/orders')).body.meta.total;
        await page.getByRole('heading', { name: `${total} orders` }).waitFor();
        const banner = page.getByRole('alert').filter({ hasText: 'You are offline, or the server cannot be reached.' });
        assert.equal(await banner.count(), 0);

        await context.setOffline(true);
        watched.expect({ status: 'ERR_INTERNET_DISCONNECTED', path: /^\/v3\/orders$/ });
        await page.getByLabel('Status').selectOption('pending');
        await page.getByRole('button', { name: 'Apply' }).click();
        const failure = page.locator('.failure').filter({ hasText: 'No connection' });
        await failure.waitFor();
        await banner.waitFor();
        await checkPage(watched, 'offline');

        await context.setOffline(false);
        await banner.waitFor({ state: 'detached' });
        const pending = (await call<{ meta: { total: number } }>('GET', '/orders?status=pending')).body.meta.total;
        await failure.getByRole('button', { name: 'Try again' }).click();
        await page.getByRole('heading', { name: `${pending} ${pending === 1 ? 'order' : 'orders'}` }).waitFor();
        await failure.waitFor({ state: 'detached' });
        assert.equal(await banner.count(), 0);
        assert.deepEqual(watched.problems, []);
      } finally {
        await context.close();
      }
    });

    test('a customer who signs in is told the console is for staff only, and can sign out', async () => {
      const { context, watched } = await signedIn(CUSTOMER);
      try {
        await watched.page.getByRole('heading', { name: 'Staff only' }).waitFor();
        assert.equal(await watched.page.getByRole('link', { name: 'Orders' }).count(), 0, 'no navigation for a customer');
        await checkPage(watched, 'staff-only');
        await watched.page.getByRole('button', { name: 'Sign out' }).first().click();
        await watched.page.getByRole('heading', { name: 'Sign out of orderpay?' }).waitFor();
      } finally {
        await context.close();
      }
    });
  });

  describe('/console: a rate limit the console waits out', () => {
    // Two reads a window; the overview alone reads four collections at once. The window's clock is
    // the test's: it stands 8 s before a window's end (the test then has 8 s, and 8 more at the
    // console's second try, to move it on before the console gives up), and moves on when the test says.
    const WINDOW_MS = 60_000;
    const LIMITED_ORIGIN = `http://127.0.0.1:${LIMITED_PORT}`;
    let rateLimitAt = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS + WINDOW_MS - 8000;
    let limited: AuthServer;

    before(async () => {
      limited = await startAuthServer(
        LIMITED_PORT,
        { ORDERPAY_RATE_LIMIT_READS: '2', ORDERPAY_RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_MS / 1000) },
        { rateLimitNow: () => new Date(rateLimitAt) },
      );
      await limited.createUser(DEMO_STAFF_EMAIL, DEMO_PASSWORD, 'staff');
    });
    after(() => limited?.close());

    test('429: a banner says how long the console waits, then the refused reads are sent again and load', async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      try {
        const watched = await watchPage(context);
        const { page } = watched;
        watched.expect({ status: 429, path: /^\/v3\// });
        const answers: Response[] = [];
        page.on('response', (response) => {
          if (new URL(response.url()).pathname.startsWith('/v3/')) answers.push(response);
        });
        const refused = page.waitForResponse((response) => response.status() === 429);
        await signInToConsole(watched, LIMITED_ORIGIN, DEMO_STAFF_EMAIL, DEMO_PASSWORD);
        const first = await refused;
        assert.equal(first.headers()['retry-after'], '8');
        assert.equal(first.headers()['ratelimit-policy'], '"reads";q=2;w=60');
        const waiting = page.getByRole('status').filter({ hasText: 'Too many requests: waiting 8 seconds, then trying again.' });
        await waiting.waitFor();

        // The window ends; nobody touches the page: the console sends what was refused again.
        rateLimitAt += WINDOW_MS;
        await waiting.waitFor({ state: 'detached' });
        await page.locator('section.panel[aria-busy="true"]').first().waitFor({ state: 'detached' });
        await page.getByRole('img', { name: 'Payments per day by outcome: 0 payments, by status.' }).waitFor();
        await page.getByRole('img', { name: 'Deliveries per day: 0 delivered and 0 failed.' }).waitFor();
        assert.equal(await page.locator('.failure').count(), 0, 'no refusal shown');
        const pathOf = (response: Response) => new URL(response.url()).pathname;
        const refusedPaths = answers.filter((r) => r.status() === 429).map(pathOf);
        assert.ok(refusedPaths.length >= 1);
        for (const path of refusedPaths) {
          assert.ok(
            answers.some((r) => r.status() === 200 && pathOf(r) === path),
            `${path} was sent again and answered`,
          );
        }
        assert.deepEqual(
          new Set(answers.filter((r) => r.status() === 200).map(pathOf)),
          new Set(['/v3/daily-order-totals', '/v3/daily-payment-outcomes', '/v3/daily-webhook-deliveries', '/v3/webhook-endpoints']),
          'every collection of the overview loaded',
        );
        assert.deepEqual(watched.problems, []);
      } finally {
        await context.close();
      }
    });
  });
});
