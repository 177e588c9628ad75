// The transactional outbox: every change the API makes records its event in the change's own
// transaction, exactly once, carrying the resource as the API answered it; a request that is
// refused, fails or rolls back records nothing. Events are read back with SQL by the resource's
// id, then through GET /events/{id} to compare the object with the API's own answer.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCustomer } from '../../helpers/actors.ts';
import { setUpTestApp, startTestApp, type TestApp } from '../../helpers/app.ts';
import { createOrder, createProduct } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { createFailpoints } from '../idempotency/gates.ts';
import { createEventReader, eventsAbout, eventTypesAbout, postKeyed, send, theEvent } from './events.ts';

const t = setUpTestApp();

/** The envelope an event of type carries object in, at the instant of the change (the object's updatedAt unless given). */
const eventOf = (event: Record<string, unknown>, type: string, object: unknown, at?: string) => ({
  id: event.id,
  type,
  createdAt: at ?? (object as { updatedAt?: string; createdAt: string }).updatedAt ?? (object as { createdAt: string }).createdAt,
  data: { object },
});

/** When a refund last changed: it is recorded pending, and succeeds when the processor says so. */
async function refundDecidedAt(refundId: number): Promise<string> {
  const { rows } = await t.db.query<{ updatedAt: string }>('SELECT updated_at AS "updatedAt" FROM refunds WHERE id = $1', [refundId]);
  return rows[0]!.updatedAt;
}

describe('every change records its event once, with the resource as the API shows it', () => {
  test('POST /orders → order.created, carrying the order as placed (v2: with its items)', async () => {
    const reader = await createEventReader(t);
    const { user, token } = await createCustomer(t);
    const first = await createProduct(t.db, { price: 300 });
    const second = await createProduct(t.db, { price: 1200 });
    const res = await send(t, token, 'POST', '/v2/orders', {
      items: [
        { productId: first.id, qty: 2 },
        { productId: second.id, qty: 1 },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    const order = res.json();
    assert.equal(order.customerId, user.id);
    assert.equal(order.items.length, 2);

    assert.deepEqual(await eventTypesAbout(t.db, 'order', order.id), ['order.created']);
    const event = await theEvent(t, reader, 'order', order.id, 'order.created');
    assert.deepEqual(event, eventOf(event, 'order.created', order));
  });

  test('POST /payments of an order → payment.succeeded, then order.paid, in one transaction', async () => {
    const reader = await createEventReader(t);
    const { user, token } = await createCustomer(t);
    const placed = await createOrder(t.db, user.id, { price: 2500, currency: 'EUR' });
    const res = await postKeyed(t, token, '/v2/payments', { amount: { value: 2500, currency: 'EUR' }, orderId: placed.id });
    assert.equal(res.statusCode, 201, res.body);
    const payment = res.json();
    assert.equal(payment.status, 'succeeded');

    assert.deepEqual(await eventTypesAbout(t.db, 'payment', payment.id), ['payment.succeeded']);
    assert.deepEqual(await eventTypesAbout(t.db, 'order', placed.id), ['order.paid']);
    const [succeeded] = await eventsAbout(t.db, 'payment', payment.id);
    const [paid] = await eventsAbout(t.db, 'order', placed.id);
    assert.ok(succeeded!.seq < paid!.seq, 'the payment is recorded before the order it paid');
    assert.equal(succeeded!.createdAt, paid!.createdAt, 'one transaction, one instant');

    const paymentEvent = await theEvent(t, reader, 'payment', payment.id, 'payment.succeeded');
    assert.deepEqual(paymentEvent, eventOf(paymentEvent, 'payment.succeeded', payment));
    const order = (await send(t, token, 'GET', `/v2/orders/${placed.id}`)).json();
    assert.equal(order.status, 'paid');
    const orderEvent = await theEvent(t, reader, 'order', placed.id, 'order.paid');
    assert.deepEqual(orderEvent, eventOf(orderEvent, 'order.paid', order));
  });

  test('a declined payment is a change too → payment.declined; the order stays pending, without order.paid', async () => {
    const reader = await createEventReader(t);
    const { user, token } = await createCustomer(t);
    // 40002: the simulator's card_declined (docs/payments.md, "Test amounts").
    const placed = await createOrder(t.db, user.id, { price: 40002, currency: 'EUR' });
    const res = await postKeyed(t, token, '/v2/payments', { amount: { value: 40002, currency: 'EUR' }, orderId: placed.id });
    assert.equal(res.statusCode, 201, res.body);
    const payment = res.json();
    assert.deepEqual([payment.status, payment.declineCode], ['declined', 'card_declined']);

    assert.deepEqual(await eventTypesAbout(t.db, 'payment', payment.id), ['payment.declined']);
    assert.deepEqual(await eventTypesAbout(t.db, 'order', placed.id), []);
    const event = await theEvent(t, reader, 'payment', payment.id, 'payment.declined');
    assert.deepEqual(event, eventOf(event, 'payment.declined', payment));
  });

  test('PUT /orders/{id} by staff → order.shipped, then order.delivered; the same status again records nothing', async () => {
    const reader = await createEventReader(t);
    const { user } = await createCustomer(t);
    const placed = await createOrder(t.db, user.id, { status: 'paid' });

    const shipped = await send(t, reader, 'PUT', `/v2/orders/${placed.id}`, { status: 'shipped' });
    assert.equal(shipped.statusCode, 200, shipped.body);
    const shippedEvent = await theEvent(t, reader, 'order', placed.id, 'order.shipped');
    assert.deepEqual(shippedEvent, eventOf(shippedEvent, 'order.shipped', shipped.json()));

    const again = await send(t, reader, 'PUT', `/v2/orders/${placed.id}`, { status: 'shipped' });
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json(), shipped.json(), 'nothing changed');
    assert.deepEqual(await eventTypesAbout(t.db, 'order', placed.id), ['order.shipped']);

    const delivered = await send(t, reader, 'PUT', `/v2/orders/${placed.id}`, { status: 'delivered' });
    assert.equal(delivered.statusCode, 200, delivered.body);
    const deliveredEvent = await theEvent(t, reader, 'order', placed.id, 'order.delivered');
    assert.deepEqual(deliveredEvent, eventOf(deliveredEvent, 'order.delivered', delivered.json()));
    assert.deepEqual(await eventTypesAbout(t.db, 'order', placed.id), ['order.shipped', 'order.delivered']);
  });

  test('a customer cancels their pending order → order.cancelled', async () => {
    const reader = await createEventReader(t);
    const { user, token } = await createCustomer(t);
    const placed = await createOrder(t.db, user.id);
    const res = await send(t, token, 'PUT', `/v2/orders/${placed.id}`, { status: 'cancelled' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await eventTypesAbout(t.db, 'order', placed.id), ['order.cancelled']);
    const event = await theEvent(t, reader, 'order', placed.id, 'order.cancelled');
    assert.deepEqual(event, eventOf(event, 'order.cancelled', res.json()));
  });

  test('staff cancel a paid order → order.cancelled, then refund.succeeded once the processor made the refund', async () => {
    const reader = await createEventReader(t);
    const { user, token } = await createCustomer(t);
    const placed = await createOrder(t.db, user.id, { price: 1800, currency: 'EUR' });
    const paid = await postKeyed(t, token, '/v2/payments', { amount: { value: 1800, currency: 'EUR' }, orderId: placed.id });
    assert.equal(paid.statusCode, 201, paid.body);
    const payment = paid.json();

    const res = await send(t, reader, 'PUT', `/v2/orders/${placed.id}`, { status: 'cancelled' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await eventTypesAbout(t.db, 'order', placed.id), ['order.paid', 'order.cancelled']);
    const refunds = await eventsAbout(t.db, 'refund', payment.id, 'paymentId');
    assert.deepEqual(
      refunds.map((e) => e.type),
      ['refund.succeeded'],
    );
    const cancelled = (await eventsAbout(t.db, 'order', placed.id))[1]!;
    // The refund was recorded with the cancellation, and asked of the processor after it committed.
    assert.ok(refunds[0]!.seq > cancelled.seq);
    assert.ok(refunds[0]!.createdAt >= cancelled.createdAt);

    const orderEvent = await theEvent(t, reader, 'order', placed.id, 'order.cancelled');
    assert.deepEqual(orderEvent, eventOf(orderEvent, 'order.cancelled', res.json()));
    const refundList = (await send(t, reader, 'GET', `/v2/payments/${payment.id}/refunds`)).json();
    assert.equal(refundList.data.length, 1);
    const refundEvent = await theEvent(t, reader, 'refund', payment.id, 'refund.succeeded', { field: 'paymentId' });
    assert.deepEqual(
      refundEvent,
      eventOf(refundEvent, 'refund.succeeded', refundList.data[0], await refundDecidedAt(refundList.data[0].id)),
    );
    // The payment's own change (amountRefunded) has no event type of its own: its refund is the event.
    assert.deepEqual(await eventTypesAbout(t.db, 'payment', payment.id), ['payment.succeeded']);
  });

  test('POST /payments/{id}/refunds → refund.succeeded, carrying the refund', async () => {
    const reader = await createEventReader(t);
    const { token } = await createCustomer(t);
    const paid = await postKeyed(t, token, '/v2/payments', { amount: { value: 5000, currency: 'USD' } });
    assert.equal(paid.statusCode, 201, paid.body);
    const payment = paid.json();
    const res = await postKeyed(t, reader, `/v2/payments/${payment.id}/refunds`, { amount: { value: 1500, currency: 'USD' } });
    assert.equal(res.statusCode, 201, res.body);
    const refund = res.json();
    assert.deepEqual(await eventTypesAbout(t.db, 'refund', refund.id), ['refund.succeeded']);
    const event = await theEvent(t, reader, 'refund', refund.id, 'refund.succeeded');
    assert.deepEqual(event, eventOf(event, 'refund.succeeded', refund, await refundDecidedAt(refund.id)));
  });

  test('DELETE /orders/{id} → order.deleted, carrying the order as deleted; deleting it again records nothing', async () => {
    const reader = await createEventReader(t);
    const { user, token } = await createCustomer(t);
    const placed = await createOrder(t.db, user.id);
    const before = (await send(t, token, 'GET', `/v2/orders/${placed.id}`)).json();
    const res = await send(t, token, 'DELETE', `/v2/orders/${placed.id}`);
    assert.equal(res.statusCode, 204, res.body);
    assert.deepEqual(await eventTypesAbout(t.db, 'order', placed.id), ['order.deleted']);
    const { rows } = await t.db.query<{ updatedAt: string }>('SELECT updated_at AS "updatedAt" FROM orders WHERE id = $1', [placed.id]);
    const deleted = { ...before, updatedAt: rows[0]!.updatedAt };
    assert.ok(deleted.updatedAt > before.updatedAt, 'the deletion is a change of the order');
    const event = await theEvent(t, reader, 'order', placed.id, 'order.deleted');
    assert.deepEqual(event, eventOf(event, 'order.deleted', deleted));

    const again = await send(t, token, 'DELETE', `/v2/orders/${placed.id}`);
    assert.equal(again.statusCode, 204);
    assert.deepEqual(await eventTypesAbout(t.db, 'order', placed.id), ['order.deleted']);
  });

  test('POST /products → product.created; PUT → product.updated; a PUT that changes nothing records nothing', async () => {
    const reader = await createEventReader(t);
    const created = await send(t, reader, 'POST', '/v2/products', { name: 'Kettle', price: { value: 4900, currency: 'EUR' } });
    assert.equal(created.statusCode, 201, created.body);
    const product = created.json();
    assert.deepEqual(await eventTypesAbout(t.db, 'product', product.id), ['product.created']);
    const createdEvent = await theEvent(t, reader, 'product', product.id, 'product.created');
    assert.deepEqual(createdEvent, eventOf(createdEvent, 'product.created', product));

    const body = { name: 'Kettle', price: { value: 4500, currency: 'EUR' }, active: true };
    const updated = await send(t, reader, 'PUT', `/v2/products/${product.id}`, body);
    assert.equal(updated.statusCode, 200, updated.body);
    const updatedEvent = await theEvent(t, reader, 'product', product.id, 'product.updated');
    assert.deepEqual(updatedEvent, eventOf(updatedEvent, 'product.updated', updated.json()));

    const same = await send(t, reader, 'PUT', `/v2/products/${product.id}`, body);
    assert.equal(same.statusCode, 200, same.body);
    assert.deepEqual(await eventTypesAbout(t.db, 'product', product.id), ['product.created', 'product.updated']);
  });
});

describe('a request that is refused or fails records nothing', () => {
  test('an order with an inactive product → 422, no event', async () => {
    const { user, token } = await createCustomer(t);
    const active = await createProduct(t.db);
    const inactive = await createProduct(t.db, { active: false });
    const res = await send(t, token, 'POST', '/v2/orders', {
      items: [
        { productId: active.id, qty: 1 },
        { productId: inactive.id, qty: 1 },
      ],
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().code, 'ORDER_PRODUCT_INACTIVE');
    assert.deepEqual(await eventTypesAbout(t.db, 'order', user.id, 'customerId'), []);
  });

  test('the processor unavailable → 503, no payment event and no order.paid', async () => {
    const { user, token } = await createCustomer(t);
    // 40091: the simulator's processor outage (docs/payments.md, "Test amounts").
    const placed = await createOrder(t.db, user.id, { price: 40091, currency: 'EUR' });
    const res = await postKeyed(t, token, '/v2/payments', { amount: { value: 40091, currency: 'EUR' }, orderId: placed.id });
    assert.equal(res.statusCode, 503, res.body);
    assert.deepEqual(await eventTypesAbout(t.db, 'payment', user.id, 'customerId'), []);
    assert.deepEqual(await eventTypesAbout(t.db, 'order', placed.id), []);
  });

  test('a PUT of a product whose If-Match no longer matches → 412, no product.updated', async () => {
    const reader = await createEventReader(t);
    const product = await createProduct(t.db, { price: 800 });
    const res = await send(
      t,
      reader,
      'PUT',
      `/v2/products/${product.id}`,
      { name: product.name, price: { value: 900, currency: 'EUR' }, active: true },
      { 'if-match': '"pr0.0.v2"' },
    );
    assert.equal(res.statusCode, 412, res.body);
    assert.deepEqual(await eventTypesAbout(t.db, 'product', product.id), []);
  });

  test('a status change the state machine refuses → 409, no event', async () => {
    const reader = await createEventReader(t);
    const { user } = await createCustomer(t);
    const placed = await createOrder(t.db, user.id);
    const res = await send(t, reader, 'PUT', `/v2/orders/${placed.id}`, { status: 'delivered' });
    assert.equal(res.statusCode, 409, res.body);
    assert.deepEqual(await eventTypesAbout(t.db, 'order', placed.id), []);
  });
});

describe('a change whose transaction rolls back leaves no event (failpoint before the commit)', () => {
  let failing: TestApp;
  const failpoints = createFailpoints();

  before(async () => {
    failing = await startTestApp({}, undefined, { failpoint: failpoints.failpoint });
  });
  after(() => failing.close());

  test("POST /payments: the payment's outcome and the order's change are written, then rolled back with both events; the retry records each once", async () => {
    const { user, token } = await createCustomer(failing);
    const placed = await createOrder(failing.db, user.id, { price: 3100, currency: 'EUR' });
    const body = { amount: { value: 3100, currency: 'EUR' }, orderId: placed.id };
    const key = 'rollback-payment';
    failpoints.throwOnceAt('idempotency.before-commit');
    failpoints.reached.length = 0;

    const crashed = await postKeyed(failing, token, '/v2/payments', body, key);
    expectProblem(crashed, 500, 'INTERNAL_ERROR', '/v2/payments', 'An unexpected error occurred.');
    assert.equal(failpoints.reached.at(-1), 'idempotency.before-commit', 'the outcome was written, up to its commit');
    assert.deepEqual(await eventTypesAbout(failing.db, 'payment', user.id, 'customerId'), []);
    assert.deepEqual(await eventTypesAbout(failing.db, 'order', placed.id), []);

    const retry = await postKeyed(failing, token, '/v2/payments', body, key);
    assert.equal(retry.statusCode, 201, retry.body);
    assert.deepEqual(await eventTypesAbout(failing.db, 'payment', user.id, 'customerId'), ['payment.succeeded']);
    assert.deepEqual(await eventTypesAbout(failing.db, 'order', placed.id), ['order.paid']);
  });

  test('POST /orders: the order is written, then rolled back with order.created; the retry records it once', async () => {
    const { user, token } = await createCustomer(failing);
    const product = await createProduct(failing.db, { price: 75 });
    const body = { items: [{ productId: product.id, qty: 4 }] };
    failpoints.throwOnceAt('idempotency.before-commit');

    const crashed = await postKeyed(failing, token, '/v2/orders', body, 'rollback-order');
    expectProblem(crashed, 500, 'INTERNAL_ERROR', '/v2/orders', 'An unexpected error occurred.');
    assert.deepEqual(await eventTypesAbout(failing.db, 'order', user.id, 'customerId'), []);

    const retry = await postKeyed(failing, token, '/v2/orders', body, 'rollback-order');
    assert.equal(retry.statusCode, 201, retry.body);
    assert.deepEqual(await eventTypesAbout(failing.db, 'order', user.id, 'customerId'), ['order.created']);
  });
});
