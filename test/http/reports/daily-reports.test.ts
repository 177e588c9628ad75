// Daily reports (docs/api.md, "Daily reports"): orders placed, payment outcomes and webhook
// deliveries per UTC day, read by their created_at; a customer reads their own rows only. Each test
// moves its rows to days of its own, far in the past, so that the tests of this file never meet.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createCustomer, createStaffToken, get } from '../../helpers/actors.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createOrder, createUser } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { postKeyed } from '../events/events.ts';
import { registerEndpoint, send as sendWebhook, webhookTestConfig } from '../webhooks/webhooks.ts';

let t: TestApp;
before(async () => {
  t = await startTestApp(webhookTestConfig());
});
after(() => t.close());

/** Moves rows of a table to an instant (their created_at): the day a report files them under. */
async function placeAt(table: 'orders' | 'payments' | 'webhook_deliveries', ids: number[], at: string): Promise<void> {
  await t.db.query(`UPDATE ${table} SET created_at = $1 WHERE id = ANY($2::bigint[])`, [at, ids]);
}

function dataOf(res: LightMyRequestResponse): unknown[] {
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

describe('GET /daily-order-totals', () => {
  test('orders per UTC day and currency, the day cut at UTC midnight, deleted orders left out; a customer reads their own', async () => {
    const staff = await createStaffToken(t, ['orders:read']);
    const alice = await createCustomer(t, ['orders:read']);
    const bob = await createUser(t.db);
    const late = await createOrder(t.db, alice.user.id, { price: 1000, currency: 'EUR' });
    const early = await createOrder(t.db, bob.id, { price: 250, currency: 'EUR' });
    const dollars = await createOrder(t.db, bob.id, { price: 999, currency: 'USD' });
    const deleted = await createOrder(t.db, alice.user.id, { price: 5, currency: 'EUR' });
    const outside = await createOrder(t.db, alice.user.id, { price: 7, currency: 'EUR' });
    await placeAt('orders', [late.id, deleted.id], '2001-01-01T23:59:59.999Z');
    await placeAt('orders', [early.id, dollars.id], '2001-01-02T00:00:00.000Z');
    await placeAt('orders', [outside.id], '2001-01-03T00:00:00.000Z');
    await t.db.query('UPDATE orders SET deleted_at = now() WHERE id = $1', [deleted.id]);

    const range = '/v3/daily-order-totals?from=2001-01-01&to=2001-01-02';
    const staffRead = await get(t, staff, range);
    assert.equal(staffRead.headers['cache-control'], 'private, no-cache');
    assert.deepEqual(staffRead.json(), {
      data: [
        { day: '2001-01-01', orders: 1, total: { value: 1000, currency: 'EUR' } },
        { day: '2001-01-02', orders: 1, total: { value: 250, currency: 'EUR' } },
        { day: '2001-01-02', orders: 1, total: { value: 999, currency: 'USD' } },
      ],
      meta: { from: '2001-01-01', to: '2001-01-02' },
    });
    assert.deepEqual(dataOf(await get(t, staff, `${range}&currency=USD`)), [
      { day: '2001-01-02', orders: 1, total: { value: 999, currency: 'USD' } },
    ]);
    assert.deepEqual(dataOf(await get(t, alice.token, range)), [{ day: '2001-01-01', orders: 1, total: { value: 1000, currency: 'EUR' } }]);
    // The unversioned path, v3 asked for by media type.
    const negotiated = await get(t, alice.token, range.replace('/v3', ''), { accept: 'application/vnd.orderpay.v3+json' });
    assert.deepEqual(dataOf(negotiated), dataOf(await get(t, alice.token, range)));
  });

  test('without from and to: the 30 days that end today (UTC); with only from, the 30 days from it', async () => {
    const staff = await createStaffToken(t, ['orders:read']);
    const before = new Date().toISOString().slice(0, 10);
    const { meta } = (await get(t, staff, '/v3/daily-order-totals')).json();
    const after = new Date().toISOString().slice(0, 10);
    assert.ok(meta.to === before || meta.to === after, meta.to);
    assert.equal((Date.parse(meta.to) - Date.parse(meta.from)) / 86_400_000, 29);
    assert.deepEqual((await get(t, staff, '/v3/daily-order-totals?from=2001-02-01')).json().meta, { from: '2001-02-01', to: '2001-03-02' });
    assert.deepEqual((await get(t, staff, '/v3/daily-order-totals?to=2001-03-02')).json().meta, { from: '2001-02-01', to: '2001-03-02' });
  });

  test('a range that is no range is a 400 naming its parameter: from after to, more than 92 days, no calendar day, an unknown currency or parameter', async () => {
    const staff = await createStaffToken(t, ['orders:read']);
    const refused = async (query: string, parameter: string, detail: string) => {
      const res = await get(t, staff, `/v3/daily-order-totals?${query}`);
      expectProblem(res, 400, 'REQUEST_PARAMETER_INVALID', '/v3/daily-order-totals', `${detail}.`, { errors: [{ parameter, detail }] });
    };
    await refused('from=2001-01-02&to=2001-01-01', 'from', 'from is later than to');
    await refused('from=2001-01-01&to=2001-04-03', 'to', 'the range holds 93 days; at most 92 are read at once');
    await refused('from=2001-01-01&currency=ABC', 'currency', '"ABC" is not an ISO 4217 currency code');
    for (const query of [
      'from=2001-02-30',
      'from=2001-1-1',
      'to=tomorrow',
      'currency=eur',
      'status=paid',
      'from=2001-01-01&from=2001-01-02',
    ]) {
      const res = await get(t, staff, `/v3/daily-order-totals?${query}`);
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
    }
    // Exactly 92 days is read.
    assert.equal((await get(t, staff, '/v3/daily-order-totals?from=2001-01-01&to=2001-04-02')).statusCode, 200);
  });

  test('a report is v3 and later: v1 and v2 have no such collection (404), and reading needs orders:read (401, 403)', async () => {
    const staff = await createStaffToken(t, ['orders:read']);
    for (const version of [1, 2]) assert.equal((await get(t, staff, `/v${version}/daily-order-totals`)).statusCode, 404);
    assert.equal((await get(t, undefined, '/v3/daily-order-totals')).statusCode, 401);
    assert.equal((await get(t, await createStaffToken(t, ['payments:read']), '/v3/daily-order-totals')).statusCode, 403);
  });
});

describe('GET /daily-payment-outcomes', () => {
  test('payments per day by status, decline code and currency, with amounts and refunds; a customer reads their own', async () => {
    const alice = await createCustomer(t, ['orders:read', 'payments:read', 'payments:write']);
    const bob = await createCustomer(t, ['payments:read', 'payments:write']);
    const staff = await createStaffToken(t, ['payments:read', 'payments:refund']);
    const pay = async (customer: typeof alice, amount: number) => {
      const order = await createOrder(t.db, customer.user.id, { price: amount, currency: 'EUR' });
      const res = await postKeyed(t, customer.token, '/v3/payments', { amount: { value: amount, currency: 'EUR' }, orderId: order.id });
      assert.ok(res.statusCode === 201 || res.statusCode === 402, res.body);
      return res.json().id as number;
    };
    const paid = [await pay(alice, 1200), await pay(bob, 800)];
    const declined = [await pay(alice, 40002), await pay(bob, 40002), await pay(bob, 40051)];
    const refund = await postKeyed(t, staff, `/v3/payments/${paid[0]}/refunds`, { amount: { value: 200, currency: 'EUR' } });
    assert.equal(refund.statusCode, 201, refund.body);
    await placeAt('payments', [...paid, ...declined], '2001-05-01T12:00:00Z');

    const range = '/v3/daily-payment-outcomes?from=2001-05-01&to=2001-05-01';
    const eur = (value: number) => ({ value, currency: 'EUR' });
    assert.deepEqual(dataOf(await get(t, staff, range)), [
      { day: '2001-05-01', status: 'declined', declineCode: 'card_declined', payments: 2, amount: eur(80004), amountRefunded: eur(0) },
      { day: '2001-05-01', status: 'declined', declineCode: 'insufficient_funds', payments: 1, amount: eur(40051), amountRefunded: eur(0) },
      { day: '2001-05-01', status: 'partially_refunded', declineCode: null, payments: 1, amount: eur(1200), amountRefunded: eur(200) },
      { day: '2001-05-01', status: 'succeeded', declineCode: null, payments: 1, amount: eur(800), amountRefunded: eur(0) },
    ]);
    assert.deepEqual(dataOf(await get(t, alice.token, range)), [
      { day: '2001-05-01', status: 'declined', declineCode: 'card_declined', payments: 1, amount: eur(40002), amountRefunded: eur(0) },
      { day: '2001-05-01', status: 'partially_refunded', declineCode: null, payments: 1, amount: eur(1200), amountRefunded: eur(200) },
    ]);
    assert.deepEqual(dataOf(await get(t, staff, `${range}&currency=USD`)), []);
    assert.equal((await get(t, staff, '/v2/daily-payment-outcomes')).statusCode, 404);
  });
});

describe('GET /daily-webhook-deliveries', () => {
  test('deliveries per day and endpoint by state, with their attempts; staff and service clients only', async () => {
    const staff = await createStaffToken(t, ['webhooks:read', 'webhooks:write']);
    const first = await registerEndpoint(t, staff);
    const second = await registerEndpoint(t, staff);
    const ping = async (endpointId: number, state: 'pending' | 'succeeded' | 'failed', attempts: number, at: string) => {
      const res = await sendWebhook(t, 'POST', staff, `/webhook-endpoints/${endpointId}/pings`);
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json().id as number;
      await t.db.query('UPDATE webhook_deliveries SET state = $1, attempts = $2 WHERE id = $3', [state, attempts, id]);
      await placeAt('webhook_deliveries', [id], at);
    };
    await ping(first.id, 'succeeded', 1, '2001-06-01T00:00:00Z');
    await ping(first.id, 'succeeded', 3, '2001-06-01T23:59:59.999Z');
    await ping(first.id, 'failed', 8, '2001-06-01T10:00:00Z');
    await ping(second.id, 'pending', 2, '2001-06-01T10:00:00Z');
    await ping(first.id, 'pending', 0, '2001-06-02T10:00:00Z');

    const res = await get(t, staff, '/v3/daily-webhook-deliveries?from=2001-06-01&to=2001-06-02');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(dataOf(res), [
      { day: '2001-06-01', endpointId: first.id, deliveries: 3, succeeded: 2, failed: 1, pending: 0, attempts: 12 },
      { day: '2001-06-01', endpointId: second.id, deliveries: 1, succeeded: 0, failed: 0, pending: 1, attempts: 2 },
      { day: '2001-06-02', endpointId: first.id, deliveries: 1, succeeded: 0, failed: 0, pending: 1, attempts: 0 },
    ]);
    assert.equal((await get(t, staff, '/v3/daily-webhook-deliveries?currency=EUR')).statusCode, 400);
    const customer = await createCustomer(t, ['orders:read']);
    assert.equal((await get(t, customer.token, '/v3/daily-webhook-deliveries')).statusCode, 403);
  });
});
