// Who made each change: from v3 every event names its actor (a user through a client, a client
// acting for itself, or orderpay), and the outcome of a payment or refund names who asked for it
// (docs/webhooks.md, "Who made a change"). v1 and v2 events have no actor.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCustomer, createServiceToken } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { createOrder, createProduct, createUser } from '../../helpers/factories.ts';
import { flagPaymentForAttention } from '../../../src/payments/payments.service.ts';
import { createEventReader, eventsAbout, postKeyed, readEvent, send, theEvent } from './events.ts';

const t = setUpTestApp();

/** A staff user and a token for them, through a client of this id. */
async function staffMember(clientId = 'orderpay-console') {
  const user = await createUser(t.db, 'staff');
  return { user, token: await t.token({ userId: user.id, staff: true, clientId, scopes: ['orders:write', 'payments:refund'] }) };
}

/** A customer's order of 1200 EUR, paid by them through the API (v3). */
async function paidOrder() {
  const customer = await createCustomer(t);
  const order = await createOrder(t.db, customer.user.id, { price: 1200, currency: 'EUR' });
  const res = await postKeyed(t, customer.token, '/v3/payments', { amount: { value: 1200, currency: 'EUR' }, orderId: order.id });
  assert.equal(res.statusCode, 201, res.body);
  return { customer, order, payment: res.json() as { id: number } };
}

const v3 = { version: 3 };

describe('events name who made the change (v3)', () => {
  test('a customer places and pays an order: order.created, payment.succeeded and order.paid name them and their app', async () => {
    const reader = await createEventReader(t);
    const { customer, order, payment } = await paidOrder();
    const product = await createProduct(t.db);
    const placed = await send(t, customer.token, 'POST', '/v3/orders', { items: [{ productId: product.id, qty: 1 }] });
    assert.equal(placed.statusCode, 201, placed.body);
    const customerActor = { type: 'user', userId: customer.user.id, clientId: 'test-client' };
    assert.deepEqual((await theEvent(t, reader, 'order', placed.json().id, 'order.created', v3)).actor, customerActor);
    assert.deepEqual((await theEvent(t, reader, 'payment', payment.id, 'payment.succeeded', v3)).actor, customerActor);
    assert.deepEqual((await theEvent(t, reader, 'order', order.id, 'order.paid', v3)).actor, customerActor);
  });

  test('a staff member refunds through the console: refund.succeeded names them; a service client is named as a client', async () => {
    const reader = await createEventReader(t);
    const { payment } = await paidOrder();
    const staff = await staffMember();
    const byStaff = await postKeyed(t, staff.token, `/v3/payments/${payment.id}/refunds`, { amount: { value: 200, currency: 'EUR' } });
    assert.equal(byStaff.statusCode, 201, byStaff.body);
    const service = await createServiceToken(t, ['payments:refund']);
    const byService = await postKeyed(t, service, `/v3/payments/${payment.id}/refunds`, { amount: { value: 300, currency: 'EUR' } });
    assert.equal(byService.statusCode, 201, byService.body);

    const staffRefund = await theEvent(t, reader, 'refund', byStaff.json().id, 'refund.succeeded', v3);
    assert.deepEqual(staffRefund.actor, { type: 'user', userId: staff.user.id, clientId: 'orderpay-console' });
    const serviceRefund = await theEvent(t, reader, 'refund', byService.json().id, 'refund.succeeded', v3);
    assert.deepEqual(serviceRefund.actor, { type: 'client', clientId: 'test-client' });
  });

  test('staff cancel a paid order: order.cancelled and the refund it makes both name them', async () => {
    const reader = await createEventReader(t);
    const { order, payment } = await paidOrder();
    const staff = await staffMember();
    const res = await send(t, staff.token, 'PUT', `/v3/orders/${order.id}`, { status: 'cancelled' });
    assert.equal(res.statusCode, 200, res.body);
    const staffActor = { type: 'user', userId: staff.user.id, clientId: 'orderpay-console' };
    assert.deepEqual((await theEvent(t, reader, 'order', order.id, 'order.cancelled', v3)).actor, staffActor);
    const [refund] = await eventsAbout(t.db, 'refund', payment.id, 'paymentId');
    assert.deepEqual((await readEvent(t, reader, refund!.id, 3)).actor, staffActor);
  });

  test("a refund's outcome names who asked for it even when recorded later (the request's actor is kept with the refund)", async () => {
    const { payment } = await paidOrder();
    const staff = await staffMember();
    const res = await postKeyed(t, staff.token, `/v3/payments/${payment.id}/refunds`, {});
    assert.equal(res.statusCode, 201, res.body);
    const { rows } = await t.db.query<{ requestedBy: unknown }>('SELECT requested_by AS "requestedBy" FROM refunds WHERE id = $1', [
      res.json().id,
    ]);
    assert.deepEqual(rows[0]!.requestedBy, { type: 'user', userId: staff.user.id, clientId: 'orderpay-console' });
  });

  test('what orderpay does on its own names the system: a payment flagged for attention', async () => {
    const reader = await createEventReader(t);
    const { payment } = await paidOrder();
    await t.db.transaction((tx) => flagPaymentForAttention(tx, payment.id, 'the processor has not answered'));
    assert.deepEqual((await theEvent(t, reader, 'payment', payment.id, 'payment.needs_attention', v3)).actor, { type: 'system' });
  });

  test('GET /v3/events lists each event with its actor; an event recorded before actors were says null', async () => {
    const reader = await createEventReader(t);
    const { payment } = await paidOrder();
    const [succeeded] = await eventsAbout(t.db, 'payment', payment.id);
    await t.db.query('UPDATE events SET actor = NULL WHERE id = $1', [succeeded!.id]);
    const res = await send(t, reader, 'GET', `/v3/events?objectType=payment&objectId=${payment.id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().data.map((e: { type: string; actor: unknown }) => [e.type, e.actor]),
      [['payment.succeeded', null]],
    );
  });

  test('v1 and v2 show no actor: their envelope is unchanged', async () => {
    const reader = await createEventReader(t);
    const { payment } = await paidOrder();
    for (const version of [1, 2]) {
      const event = await theEvent(t, reader, 'payment', payment.id, 'payment.succeeded', { version });
      assert.equal('actor' in event, false, `v${version}`);
    }
  });
});
