// The business metrics on /metrics move as the business happens, over real sockets with real OAuth
// sign-ins (openid-client): failed sign-ins by reason; payments once committed (never for a
// rolled-back transaction, an unavailable processor, a refusal or a replay), declines by code;
// idempotent replays; refunds by cause; and the database pool while transactions hold it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { LOGIN_FAILURES_PER_ACCOUNT } from '../../src/auth/rate-limits.ts';
import { createPublicClient } from '../../src/auth/clients.store.ts';
import type { FailpointName } from '../../src/core/failpoints.ts';
import { DB_OPTIONS } from '../helpers/db.ts';
import { createProduct } from '../helpers/factories.ts';
import { FormBrowser, readForm, signInWithForms, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_311;
const REDIRECT_URI = 'http://127.0.0.1:29319/callback';
const SCOPES = ['openid', 'orders:read', 'orders:write', 'payments:read', 'payments:write'];
const CUSTOMER = { email: 'metrics-customer@example.test', password: 'metrics horse battery' };
const STAFF = { email: 'metrics-staff@example.test', password: 'metrics staple battery' };
const UNLUCKY = { email: 'metrics-unlucky@example.test', password: 'metrics correct battery' };

let server: AuthServer;
let oauth: client.Configuration;
// The next idempotent write fails at this point (its transaction rolls back), once.
let failNext: FailpointName | undefined;

before(async () => {
  server = await startAuthServer(
    PORT,
    {},
    {
      failpoint(name) {
        if (name !== failNext) return;
        failNext = undefined;
        throw new Error(`failpoint ${name}`);
      },
    },
  );
  await server.createUser(CUSTOMER.email, CUSTOMER.password);
  await server.createUser(STAFF.email, STAFF.password, 'staff');
  await server.createUser(UNLUCKY.email, UNLUCKY.password);
  const { clientId } = await createPublicClient(server.db, { name: 'Metrics app', redirectUris: [REDIRECT_URI], scopes: SCOPES });
  oauth = await client.discovery(new URL(server.issuer), clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
});
after(() => server.close());

async function authorizationUrl(): Promise<{ url: string; verifier: string; state: string }> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(oauth, {
    redirect_uri: REDIRECT_URI,
    scope: SCOPES.join(' '),
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  return { url: url.toString(), verifier, state };
}

async function signIn(user: { email: string; password: string }): Promise<string> {
  const { url, verifier, state } = await authorizationUrl();
  const callback = await signInWithForms(server, url, user.email, user.password);
  const tokens = await client.authorizationCodeGrant(oauth, callback, { pkceCodeVerifier: verifier, expectedState: state });
  return tokens.access_token;
}

/** One Prometheus sample's value from /metrics (0 when the series is absent), e.g. `a_total{b="c"}`. */
async function scrape(): Promise<(series: string) => number> {
  const response = await fetch(`${server.baseUrl}/metrics`);
  assert.equal(response.status, 200);
  const text = await response.text();
  return (series) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  };
}

/** How much each series moved while `act` ran. */
async function movement(series: string[], act: () => Promise<void>): Promise<Record<string, number>> {
  const before = await scrape();
  await act();
  const after = await scrape();
  return Object.fromEntries(series.map((s) => [s, after(s) - before(s)]));
}

async function api(token: string, method: string, path: string, body?: unknown, key?: string): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (key) headers['idempotency-key'] = key;
  return fetch(`${server.baseUrl}/v2${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function placeOrder(token: string, price: number): Promise<{ id: number; total: { value: number; currency: string } }> {
  const product = await createProduct(server.db, { price, currency: 'EUR' });
  const response = await api(token, 'POST', '/orders', { items: [{ productId: product.id, qty: 1 }] });
  assert.equal(response.status, 201);
  return (await response.json()) as { id: number; total: { value: number; currency: string } };
}

const PAYMENTS_SUCCEEDED = 'orderpay_payments_total{status="succeeded"}';
const PAYMENTS_DECLINED = 'orderpay_payments_total{status="declined"}';
const REPLAYS = 'orderpay_idempotent_replays_total{method="POST",route="/v2/payments"}';

describe('business metrics on /metrics', () => {
  let customerToken: string;
  let staffToken: string;

  test('failed sign-ins count by reason: wrong passwords (refused), then the account limit (blocked); a sign-in does not', async () => {
    const refused = 'orderpay_sign_in_failures_total{reason="refused"}';
    const blocked = 'orderpay_sign_in_failures_total{reason="blocked"}';
    const moved = await movement([refused, blocked], async () => {
      const browser = new FormBrowser();
      const { url } = await authorizationUrl();
      let { response } = await browser.follow(url);
      for (let attempt = 1; attempt <= LOGIN_FAILURES_PER_ACCOUNT.limit + 1; attempt++) {
        const form = readForm(await response.text());
        response = await browser.request(new URL(form.action, server.baseUrl).toString(), {
          form: { ...form.fields, email: UNLUCKY.email, password: `wrong ${attempt}` },
        });
        assert.equal(response.status, attempt <= LOGIN_FAILURES_PER_ACCOUNT.limit ? 401 : 429, `attempt ${attempt}`);
      }
      customerToken = await signIn(CUSTOMER);
      staffToken = await signIn(STAFF);
    });
    assert.deepEqual(moved, { [refused]: LOGIN_FAILURES_PER_ACCOUNT.limit, [blocked]: 1 });
  });

  test('a payment counts once, when its transaction commits: not rolled back, not refused, not with the processor down, not replayed', async () => {
    const order = await placeOrder(customerToken, 2590);
    const key = randomUUID();
    const pay = (amount = order.total) => api(customerToken, 'POST', '/payments', { amount, orderId: order.id }, key);
    const moved = await movement([PAYMENTS_SUCCEEDED, PAYMENTS_DECLINED, REPLAYS], async () => {
      // Charged, then rolled back before COMMIT: the payment never happened.
      failNext = 'idempotency.before-commit';
      assert.equal((await pay()).status, 500);
      // The processor unavailable: nothing stored.
      const unavailable = await api(customerToken, 'POST', '/payments', { amount: { value: 40091, currency: 'EUR' } }, randomUUID());
      assert.equal(unavailable.status, 503);
      // Refused by the rules (stored and replayed as a 422, but no payment).
      const mismatch = await api(
        customerToken,
        'POST',
        '/payments',
        { amount: { value: 1, currency: 'EUR' }, orderId: order.id },
        randomUUID(),
      );
      assert.equal(mismatch.status, 422);

      const paid = await pay();
      assert.equal(paid.status, 201);
      assert.equal(paid.headers.get('idempotent-replayed'), null);
      const replayed = await pay();
      assert.equal(replayed.status, 201);
      assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    });
    assert.deepEqual(moved, { [PAYMENTS_SUCCEEDED]: 1, [PAYMENTS_DECLINED]: 0, [REPLAYS]: 1 });
  });

  test('a declined payment counts as declined and by its decline code', async () => {
    const code = 'orderpay_payment_declines_total{code="insufficient_funds"}';
    const moved = await movement([PAYMENTS_SUCCEEDED, PAYMENTS_DECLINED, code], async () => {
      const response = await api(customerToken, 'POST', '/payments', { amount: { value: 40051, currency: 'EUR' } }, randomUUID());
      assert.equal(response.status, 201);
      assert.equal(((await response.json()) as { status: string }).status, 'declined');
    });
    assert.deepEqual(moved, { [PAYMENTS_SUCCEEDED]: 0, [PAYMENTS_DECLINED]: 1, [code]: 1 });
  });

  test('refunds count by cause: a refund of a payment, and cancelling a paid order; a replayed refund does not', async () => {
    const byRefund = 'orderpay_refunds_total{cause="refund"}';
    const byCancellation = 'orderpay_refunds_total{cause="cancellation"}';
    const refundReplays = 'orderpay_idempotent_replays_total{method="POST",route="/v2/payments/:paymentId/refunds"}';
    const refunded = await placeOrder(customerToken, 1500);
    const cancelled = await placeOrder(customerToken, 1700);
    const payments: number[] = [];
    for (const order of [refunded, cancelled]) {
      const response = await api(customerToken, 'POST', '/payments', { amount: order.total, orderId: order.id }, randomUUID());
      assert.equal(response.status, 201);
      payments.push(((await response.json()) as { id: number }).id);
    }
    const moved = await movement([byRefund, byCancellation, refundReplays], async () => {
      const key = randomUUID();
      for (const replayed of [null, 'true']) {
        const refund = await api(staffToken, 'POST', `/payments/${payments[0]}/refunds`, {}, key);
        assert.equal(refund.status, 201);
        assert.equal(refund.headers.get('idempotent-replayed'), replayed);
      }
      const cancel = await api(staffToken, 'PUT', `/orders/${cancelled.id}`, { status: 'cancelled' });
      assert.equal(cancel.status, 200);
      // Cancelled again: nothing left to refund.
      assert.equal((await api(staffToken, 'PUT', `/orders/${cancelled.id}`, { status: 'cancelled' })).status, 200);
    });
    assert.deepEqual(moved, { [byRefund]: 1, [byCancellation]: 1, [refundReplays]: 1 });
  });

  test('the database pool: every connection in use and a caller waiting while transactions hold them all; none after', async () => {
    const inUse = 'orderpay_db_pool_connections{state="in_use"}';
    const waiting = 'orderpay_db_pool_waiting';
    const max = (await scrape())('orderpay_db_pool_max');
    assert.equal(max, server.db.kind === 'postgres' ? DB_OPTIONS.poolMax : 1);

    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = 0;
    const holders = Array.from({ length: max }, () =>
      server.db.transaction(async () => {
        holding++;
        await released;
      }),
    );
    const queued: Promise<unknown>[] = [];
    try {
      for (let i = 0; i < 500 && holding < max; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(holding, max, 'every connection taken by a transaction');
      queued.push(server.db.query('SELECT 1'));
      const held = await scrape();
      assert.equal(held(inUse), max);
      assert.ok(held(waiting) >= 1, `waiting: ${held(waiting)}`);
    } finally {
      release();
      await Promise.all([...holders, ...queued]);
    }
    let settled = await scrape();
    for (let i = 0; i < 50 && (settled(inUse) !== 0 || settled(waiting) !== 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      settled = await scrape();
    }
    assert.equal(settled(inUse), 0);
    assert.equal(settled(waiting), 0);
  });
});
