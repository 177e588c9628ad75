// One stored event, read in each API version: its object is the resource exactly as that version
// shows it alone (v1: an order without items, money as an integer beside a flat currency), by
// path, by Accept and by the client's pinned version; each version's OpenAPI document describes
// Event with that version's resources.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ALL_SCOPES, setUpTestApp } from '../../helpers/app.ts';
import { createCustomer, get } from '../../helpers/actors.ts';
import { createOrder, createProduct, createUser } from '../../helpers/factories.ts';
import { openApiDocument } from '../../helpers/openapi.ts';
import { createEventReader, eventsAbout, postKeyed, send } from './events.ts';

const t = setUpTestApp();

/** An order of two lines placed through v2, and its order.created event's id. */
async function placeTwoLineOrder() {
  const { user, token } = await createCustomer(t);
  const [first, second] = [await createProduct(t.db, { price: 250 }), await createProduct(t.db, { price: 1000 })];
  const res = await send(t, token, 'POST', '/v2/orders', {
    items: [
      { productId: first.id, qty: 4 },
      { productId: second.id, qty: 1 },
    ],
  });
  assert.equal(res.statusCode, 201, res.body);
  const order = res.json();
  const [created] = await eventsAbout(t.db, 'order', order.id);
  return { user, token, order, eventId: created!.id };
}

describe('an event read in v1 and in v2', () => {
  test('order.created: v2 carries the order with its items and money objects, v1 the v1 order (no items, flat currency)', async () => {
    const reader = await createEventReader(t);
    const { token, order, eventId } = await placeTwoLineOrder();
    const v1Order = (await get(t, token, `/v1/orders/${order.id}`)).json();
    const v2Order = (await get(t, token, `/v2/orders/${order.id}`)).json();
    assert.deepEqual(v1Order, {
      id: order.id,
      status: 'pending',
      customerId: order.customerId,
      total: 2000,
      currency: 'EUR',
      createdAt: order.createdAt,
      updatedAt: order.updatedAt,
    });
    assert.equal(v2Order.items.length, 2);
    assert.deepEqual(v2Order.total, { value: 2000, currency: 'EUR' });

    const v1 = await get(t, reader, `/v1/events/${eventId}`);
    const v2 = await get(t, reader, `/v2/events/${eventId}`);
    assert.equal(v1.statusCode, 200, v1.body);
    assert.equal(v1.headers['api-version'], '1');
    assert.equal(v2.headers['api-version'], '2');
    const envelope = { id: eventId, type: 'order.created', createdAt: order.createdAt };
    assert.deepEqual(v1.json(), { ...envelope, data: { object: v1Order } });
    assert.deepEqual(v2.json(), { ...envelope, data: { object: v2Order } });
    // A deprecated version says so on its events too.
    assert.match(String(v1.headers.deprecation), /^@\d+$/);
    assert.equal(v2.headers.deprecation, undefined);
  });

  test('the same in the collections of each version', async () => {
    const reader = await createEventReader(t);
    const { token, order, eventId } = await placeTwoLineOrder();
    for (const version of [1, 2]) {
      const list = await get(t, reader, `/v${version}/events?type=order.created&minCreatedAt=${order.createdAt}`);
      const element = list.json().data.find((e: { id: string }) => e.id === eventId);
      assert.deepEqual(element.data.object, (await get(t, token, `/v${version}/orders/${order.id}`)).json(), `v${version}`);
    }
  });

  test('payment.succeeded and refund.succeeded: each version shows the payment and the refund as GET does', async () => {
    const reader = await createEventReader(t);
    const { user, token } = await createCustomer(t);
    const placed = await createOrder(t.db, user.id, { price: 1200, currency: 'JPY' });
    const paid = await postKeyed(t, token, '/v2/payments', { amount: { value: 1200, currency: 'JPY' }, orderId: placed.id });
    assert.equal(paid.statusCode, 201, paid.body);
    const payment = paid.json();
    const refunded = await postKeyed(t, reader, `/v2/payments/${payment.id}/refunds`, { amount: { value: 200, currency: 'JPY' } });
    assert.equal(refunded.statusCode, 201, refunded.body);
    const refund = refunded.json();
    const [paymentEvent] = await eventsAbout(t.db, 'payment', payment.id);
    const [refundEvent] = await eventsAbout(t.db, 'refund', refund.id);

    for (const version of [1, 2]) {
      // The payment as it was when it succeeded: nothing refunded yet.
      const paymentNow = (await get(t, token, `/v${version}/payments/${payment.id}`)).json();
      const asPaid =
        version === 1 ? { ...paymentNow, amountRefunded: 0 } : { ...paymentNow, amountRefunded: { value: 0, currency: 'JPY' } };
      asPaid.status = 'succeeded';
      asPaid.updatedAt = payment.updatedAt;
      assert.deepEqual((await get(t, reader, `/v${version}/events/${paymentEvent!.id}`)).json().data.object, asPaid, `v${version}`);
      const refundNow = (await get(t, token, `/v${version}/payments/${payment.id}/refunds/${refund.id}`)).json();
      assert.deepEqual((await get(t, reader, `/v${version}/events/${refundEvent!.id}`)).json().data.object, refundNow, `v${version}`);
    }
    assert.deepEqual((await get(t, reader, `/v1/events/${refundEvent!.id}`)).json().data.object, {
      id: refund.id,
      paymentId: payment.id,
      amount: 200,
      currency: 'JPY',
      createdAt: refund.createdAt,
    });
  });

  test('on the unversioned path: the version Accept names, else the one the client is pinned to', async () => {
    const { order, eventId, token } = await placeTwoLineOrder();
    const v1Order = (await get(t, token, `/v1/orders/${order.id}`)).json();
    const v2Order = (await get(t, token, `/v2/orders/${order.id}`)).json();
    const reader = await createEventReader(t);

    const accept1 = await get(t, reader, `/events/${eventId}`, { accept: 'application/vnd.orderpay.v1+json' });
    assert.equal(accept1.statusCode, 200, accept1.body);
    assert.equal(accept1.headers['content-type'], 'application/vnd.orderpay.v1+json; charset=utf-8');
    assert.deepEqual(accept1.json().data.object, v1Order);
    const accept2 = await get(t, reader, `/events/${eventId}`, { accept: 'application/vnd.orderpay.v2+json' });
    assert.deepEqual(accept2.json().data.object, v2Order);

    const staff = await createUser(t.db, 'staff');
    for (const [apiVersion, expected] of [
      [1, v1Order],
      [2, v2Order],
    ] as const) {
      const pinned = await t.token({ userId: staff.id, staff: true, scopes: [...ALL_SCOPES, 'events:read'], apiVersion });
      const res = await get(t, pinned, `/events?type=order.created&minCreatedAt=${order.createdAt}`);
      assert.equal(res.headers['api-version'], String(apiVersion));
      assert.deepEqual(res.json().data.find((e: { id: string }) => e.id === eventId).data.object, expected);
    }
  });
});

describe("each version's OpenAPI document: Event carries that version's resources", () => {
  test('v1: Event.data.object names v1 Order, Payment, Refund, Product, WebhookEndpoint (v1 Order has no items); v2 the v2 ones', () => {
    for (const version of [1, 2]) {
      const document = openApiDocument(t.app, version);
      const schemas = document.components.schemas as Record<string, { properties: Record<string, Record<string, unknown>> }>;
      const object = (schemas.Event!.properties.data as { properties: { object: { anyOf: unknown[] } } }).properties.object;
      assert.deepEqual(object.anyOf, [
        { $ref: '#/components/schemas/Order' },
        { $ref: '#/components/schemas/Payment' },
        { $ref: '#/components/schemas/Refund' },
        { $ref: '#/components/schemas/Product' },
        { $ref: '#/components/schemas/WebhookEndpoint' },
      ]);
      assert.equal('items' in schemas.Order!.properties, version === 2, `v${version} Order`);
      assert.equal(schemas.Order!.properties.total!.type, version === 1 ? 'integer' : 'object', `v${version} Order.total`);
      const list = document.paths['/events']!.get!.responses!['200']!.content!['application/json']!.schema as {
        properties: { data: { items: unknown } };
      };
      assert.deepEqual(list.properties.data.items, { $ref: '#/components/schemas/Event' });
      assert.deepEqual(document.paths['/events/{eventId}']!.get!.responses!['200']!.content!['application/json']!.schema, {
        $ref: '#/components/schemas/Event',
      });
    }
  });
});
