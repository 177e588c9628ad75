// CORS in a real browser (Debian's Chromium through playwright-core): a page served on one origin
// calls the API on another with fetch. From an origin on ORDERPAY_CORS_ORIGINS it places an order
// with an Idempotency-Key, reads the exposed headers (Location, ETag, Idempotent-Replayed, …) and
// reads the order back with its bearer token; from an origin not on the list the browser refuses
// every call, and a preflighted write never reaches the server. /oauth/token follows the same list.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createPublicClient } from '../../src/auth/clients.store.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createCustomer } from '../helpers/actors.ts';
import { launchChromium, withChromium } from '../helpers/browser.ts';
import { createProduct } from '../helpers/factories.ts';

const API_PORT = 29290;
const SHOP_PORT = 29291;
const STRANGER_PORT = 29292;
const API = `http://127.0.0.1:${API_PORT}`;
// Same host, other ports: other origins (RFC 6454), as a browser counts them.
const SHOP = `http://127.0.0.1:${SHOP_PORT}`;
const STRANGER = `http://127.0.0.1:${STRANGER_PORT}`;

/** A static page on its own origin: the browser app. */
function startPageServer(port: number): Promise<Server> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><meta charset="utf-8"><title>A browser app</title><p>A browser app.</p>');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const closeServer = (server: Server) =>
  new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));

/** What the page's script could read of a response. */
interface Seen {
  status: number;
  headers: Record<string, string | null>;
  body: unknown;
}

withChromium('CORS in a real browser', () => {
  describe('CORS in a real browser: pages on other origins call the API with fetch', () => {
    let t: TestApp;
    let browser: Browser;
    let pageServers: Server[] = [];

    before(async () => {
      t = await startTestApp({ publicUrl: API, cors: { origins: [SHOP], anyLoopbackOrigin: false } });
      await t.app.listen({ host: '127.0.0.1', port: API_PORT });
      pageServers = [await startPageServer(SHOP_PORT), await startPageServer(STRANGER_PORT)];
      browser = await launchChromium();
    });
    after(async () => {
      // Each is closed even when another fails (or before() stopped half way).
      const closed = await Promise.allSettled([browser?.close(), ...pageServers.map(closeServer), t?.close()]);
      const failure = closed.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    });

    async function openPage(origin: string): Promise<Page> {
      const page = await browser.newPage();
      await page.goto(`${origin}/`);
      return page;
    }

    test('an allowed origin places an order with an Idempotency-Key, reads Location, ETag and the other exposed headers, and reads it back', async () => {
      const { user, token } = await createCustomer(t);
      const product = await createProduct(t.db, { price: 1500 });
      const page = await openPage(SHOP);
      const seen = await page.evaluate(
        async ({ api, token, productId }) => {
          const exposed = [
            'location',
            'etag',
            'idempotent-replayed',
            'api-version',
            'ratelimit',
            'ratelimit-policy',
            'x-request-id',
            'www-authenticate',
          ];
          const see = async (response: Response) => ({
            status: response.status,
            headers: Object.fromEntries(exposed.map((name) => [name, response.headers.get(name)])),
            body: response.status === 304 ? null : await response.json(),
          });
          const authorization = `Bearer ${token}`;
          const place = () =>
            fetch(`${api}/v2/orders`, {
              method: 'POST',
              headers: { authorization, 'content-type': 'application/json', 'idempotency-key': 'browser-order-1' },
              body: JSON.stringify({ items: [{ productId, qty: 2 }] }),
            });
          const placed = await see(await place());
          const replayed = await see(await place());
          const location = placed.headers.location ?? '';
          const read = await see(await fetch(location, { headers: { authorization, accept: 'application/vnd.orderpay.v2+json' } }));
          const revalidated = await see(await fetch(location, { headers: { authorization, 'if-none-match': placed.headers.etag ?? '' } }));
          const unauthenticated = await see(await fetch(`${api}/v2/orders`));
          return { placed, replayed, read, revalidated, unauthenticated };
        },
        { api: API, token, productId: product.id },
      );
      await page.close();

      const placed: Seen = seen.placed;
      assert.equal(placed.status, 201, JSON.stringify(placed));
      const id = (placed.body as { id: number }).id;
      assert.equal(placed.headers.location, `${API}/v2/orders/${id}`);
      assert.match(String(placed.headers.etag), /^"/);
      assert.equal(placed.headers['api-version'], '2');
      assert.match(String(placed.headers.ratelimit), /^"writes";r=\d+;t=\d+$/);
      assert.match(String(placed.headers['ratelimit-policy']), /^"writes";q=\d+;w=\d+$/);
      assert.match(String(placed.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      assert.equal(placed.headers['idempotent-replayed'], null);

      assert.equal(seen.replayed.status, 201);
      assert.equal(seen.replayed.headers['idempotent-replayed'], 'true');
      assert.deepEqual(seen.replayed.body, placed.body);

      assert.equal(seen.read.status, 200);
      assert.deepEqual(seen.read.body, placed.body);
      assert.equal(seen.read.headers.etag, placed.headers.etag);
      assert.equal(seen.revalidated.status, 304);

      // A problem is readable too, and the challenge with it.
      assert.equal(seen.unauthenticated.status, 401);
      assert.equal((seen.unauthenticated.body as { code: string }).code, 'AUTH_TOKEN_MISSING');
      assert.match(String(seen.unauthenticated.headers['www-authenticate']), /^Bearer /);

      // One order, the customer's: the retry was replayed, not placed again.
      const { rows } = await t.db.query<{ id: number; total: string }>('SELECT id, total FROM orders WHERE customer_id = $1', [user.id]);
      assert.deepEqual(
        rows.map((row) => [Number(row.id), Number(row.total)]),
        [[id, 3000]],
      );
    });

    test('an origin not on the list: the browser refuses every call, and a preflighted write never reaches the server', async () => {
      const { user, token } = await createCustomer(t);
      const product = await createProduct(t.db);
      const page = await openPage(STRANGER);
      const outcomes = await page.evaluate(
        async ({ api, token, productId }) => {
          const attempt = (request: Promise<Response>) =>
            request.then(
              (response) => `answered ${response.status}`,
              (error: Error) => `${error.name}: ${error.message}`,
            );
          return {
            write: await attempt(
              fetch(`${api}/v2/orders`, {
                method: 'POST',
                headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'stranger-1' },
                body: JSON.stringify({ items: [{ productId, qty: 1 }] }),
              }),
            ),
            read: await attempt(fetch(`${api}/v2/orders`, { headers: { authorization: `Bearer ${token}` } })),
            // No preflight for a simple GET: the server answers, the browser hides the answer.
            simple: await attempt(fetch(`${api}/v2/products`)),
          };
        },
        { api: API, token, productId: product.id },
      );
      await page.close();
      assert.deepEqual(outcomes, {
        write: 'TypeError: Failed to fetch',
        read: 'TypeError: Failed to fetch',
        simple: 'TypeError: Failed to fetch',
      });
      const { rows } = await t.db.query('SELECT id FROM orders WHERE customer_id = $1', [user.id]);
      assert.deepEqual(rows, []);
    });

    test('/oauth/token answers a browser client on its own allowed origin; another origin cannot read it', async () => {
      const { clientId } = await createPublicClient(t.db, {
        name: 'Shop',
        redirectUris: [`${SHOP}/callback`],
        scopes: ['openid', 'orders:read'],
      });
      const refresh = async (origin: string) => {
        const page = await openPage(origin);
        const outcome = await page.evaluate(
          async ({ api, clientId }) => {
            const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'not-a-token', client_id: clientId });
            return fetch(`${api}/oauth/token`, { method: 'POST', body }).then(
              async (response) => `answered ${response.status} ${((await response.json()) as { error: string }).error}`,
              (error: Error) => `${error.name}: ${error.message}`,
            );
          },
          { api: API, clientId },
        );
        await page.close();
        return outcome;
      };
      assert.equal(await refresh(SHOP), 'answered 400 invalid_grant');
      assert.equal(await refresh(STRANGER), 'TypeError: Failed to fetch');
    });
  });
});
