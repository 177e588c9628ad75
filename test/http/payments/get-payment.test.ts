// GET /payments/{paymentId}: the representation with its strong entity tag, never cached
// (Cache-Control: no-store, on 304 too), revalidation with If-None-Match (RFC 9110 §13.1.2), and
// another customer's payment indistinguishable from a missing one.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createCustomer, createServiceToken, createStaffToken, get } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { notModifiedCheck } from '../../helpers/conditional.ts';
import { createOrder, createProduct } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { expectPayment, makePayment, makeRefund, MISSING_ID, paymentTag, readStoredPayment, VENDOR_TYPE } from './payments.ts';

const t = setUpTestApp();

const expectNotModified = notModifiedCheck('no-store');

/** A customer with a succeeded payment of 1500 EUR. */
async function customerWithPayment() {
  const customer = await createCustomer(t);
  const payment = await makePayment(t, customer.token, { amount: 1500, currency: 'EUR' });
  return { ...customer, payment, etag: paymentTag(payment.id, 1) };
}

describe('GET /payments/{paymentId}: 200', () => {
  test('the owner reads it: the payment as stored, a strong ETag, no-store', async () => {
    const { user, token, payment, etag } = await customerWithPayment();
    const res = await get(t, token, `/payments/${payment.id}`);
    const body = await expectPayment(t.db, res, 200);
    assert.equal(res.headers.etag, etag);
    assert.doesNotMatch(etag, /^W\//);
    assert.deepEqual(body, {
      id: payment.id,
      status: 'succeeded',
      amount: 1500,
      currency: 'EUR',
      amountRefunded: 0,
      orderId: null,
      customerId: user.id,
      declineCode: null,
      createdAt: payment.createdAt,
      updatedAt: payment.updatedAt,
    });
    assert.deepEqual(body, payment);
  });

  test('a declined payment and a payment of an order read as stored', async () => {
    const { user, token } = await createCustomer(t);
    const declined = await makePayment(t, token, { amount: 40054, currency: 'EUR' });
    const order = await createOrder(t.db, user.id, { price: 310, currency: 'DKK' });
    const ofOrder = await makePayment(t, token, { amount: 310, currency: 'DKK', orderId: order.id });
    for (const payment of [declined, ofOrder]) {
      const body = await expectPayment(t.db, await get(t, token, `/payments/${payment.id}`), 200);
      assert.deepEqual(body, payment);
    }
    assert.deepEqual([declined.status, declined.declineCode], ['declined', 'expired_card']);
    assert.deepEqual([ofOrder.orderId, ofOrder.customerId], [order.id, user.id]);
  });

  test("staff and service clients read any customer's payment, with the same ETag", async () => {
    const { payment, etag } = await customerWithPayment();
    for (const token of [await createStaffToken(t), await createServiceToken(t, ['payments:read'])]) {
      const res = await get(t, token, `/payments/${payment.id}`);
      assert.deepEqual(await expectPayment(t.db, res, 200), payment);
      assert.equal(res.headers.etag, etag);
    }
  });

  test('/v1 and the vendor media type: the same payment and tag', async () => {
    const { token, payment, etag } = await customerWithPayment();
    for (const [path, headers, type] of [
      [`/v1/payments/${payment.id}`, {}, undefined],
      [`/payments/${payment.id}`, { accept: VENDOR_TYPE }, `${VENDOR_TYPE}; charset=utf-8`],
      [`/v1/payments/${payment.id}`, { accept: VENDOR_TYPE }, `${VENDOR_TYPE}; charset=utf-8`],
    ] as const) {
      const res = await get(t, token, path, headers);
      assert.deepEqual(await expectPayment(t.db, res, 200, type), payment);
      assert.equal(res.headers.etag, etag);
    }
  });
});

describe('GET /payments/{paymentId}: If-None-Match', () => {
  test('the current tag, its weak form, a list holding it, or * → 304 with ETag and no-store', async () => {
    const { token, payment, etag } = await customerWithPayment();
    for (const header of [etag, `W/${etag}`, `"pa${payment.id}.0.v1", ${etag}`, '*']) {
      expectNotModified(await get(t, token, `/payments/${payment.id}`, { 'if-none-match': header }), etag);
    }
    expectNotModified(await get(t, token, `/v1/payments/${payment.id}`, { 'if-none-match': etag }), etag);
  });

  test('tags that do not match → 200 with the full payment', async () => {
    const { token, payment, etag } = await customerWithPayment();
    const id = payment.id;
    for (const header of [`"pa${id}.2.v1"`, `"o${id}.1.v1"`, `"pr${id}.1.v1"`, `"re${id}.1.v1"`, `"pa${id + 1}.1.v1"`, '""']) {
      const res = await get(t, token, `/payments/${payment.id}`, { 'if-none-match': header });
      assert.deepEqual(await expectPayment(t.db, res, 200), payment);
      assert.equal(res.headers.etag, etag);
    }
  });

  test('a product of the same id and version has another tag, which does not revalidate the payment', async () => {
    const { token, payment, etag } = await customerWithPayment();
    // Products and payments count their ids apart: make one of each until two share an id.
    let same = payment;
    let product = await createProduct(t.db);
    while (product.id !== same.id) {
      if (product.id < same.id) product = await createProduct(t.db);
      else same = await makePayment(t, token, { amount: 1500, currency: 'EUR' });
    }
    const productTag = (await get(t, token, `/products/${product.id}`)).headers.etag as string;
    const sameTag = same === payment ? etag : paymentTag(same.id, 1);
    assert.equal(productTag, `"pr${product.id}.1.v1"`);
    assert.notEqual(productTag, sameTag);
    const res = await get(t, token, `/payments/${same.id}`, { 'if-none-match': productTag });
    assert.deepEqual(await expectPayment(t.db, res, 200), same);
    assert.equal(res.headers.etag, sameTag);
    assert.equal((await get(t, token, `/products/${product.id}`, { 'if-none-match': sameTag })).statusCode, 200);
  });

  test('after a refund the ETag changes: the old tag → 200 with the new state, the new one → 304', async () => {
    const { token, payment, etag } = await customerWithPayment();
    await makeRefund(t, await createStaffToken(t), payment.id, { amount: 500 });
    const fresh = paymentTag(payment.id, 2);
    assert.notEqual(fresh, etag);
    const res = await get(t, token, `/payments/${payment.id}`, { 'if-none-match': etag });
    const body = await expectPayment(t.db, res, 200);
    assert.equal(res.headers.etag, fresh);
    assert.deepEqual(body, { ...payment, status: 'partially_refunded', amountRefunded: 500, updatedAt: body.updatedAt });
    assert.deepEqual(body, await readStoredPayment(t.db, payment.id));
    expectNotModified(await get(t, token, `/payments/${payment.id}`, { 'if-none-match': fresh }), fresh);
  });

  test('a malformed If-None-Match → 400 naming the header', async () => {
    const { token, payment } = await customerWithPayment();
    const detail = 'If-None-Match must be "*" or a comma-separated list of quoted entity tags';
    expectProblem(
      await get(t, token, `/payments/${payment.id}`, { 'if-none-match': `pa${payment.id}.1.v1` }),
      400,
      'REQUEST_HEADER_INVALID',
      `/payments/${payment.id}`,
      'If-None-Match must be "*" or a list of entity tags.',
      { errors: [{ parameter: 'If-None-Match', detail }] },
    );
  });
});

describe('GET /payments/{paymentId}: not found and forbidden', () => {
  test("another customer's payment → 404 exactly like a missing id, with or without If-None-Match", async () => {
    const { payment, etag } = await customerWithPayment();
    const other = await createCustomer(t);
    for (const headers of [{}, { 'if-none-match': etag }, { 'if-none-match': '*' }] as Record<string, string>[]) {
      const theirs = await get(t, other.token, `/payments/${payment.id}`, headers);
      expectProblem(theirs, 404, 'PAYMENT_NOT_FOUND', `/payments/${payment.id}`, `Payment ${payment.id} does not exist.`);
      const missing = await get(t, other.token, `/payments/${MISSING_ID}`, headers);
      expectProblem(missing, 404, 'PAYMENT_NOT_FOUND', `/payments/${MISSING_ID}`, `Payment ${MISSING_ID} does not exist.`);
      // The same members in the same order once the id and the request id are taken out.
      const scrub = (res: LightMyRequestResponse) => JSON.stringify({ ...res.json(), detail: '', instance: '', requestId: '' });
      assert.equal(scrub(theirs), scrub(missing));
      assert.deepEqual(Object.keys(theirs.headers).sort(), Object.keys(missing.headers).sort());
    }
  });

  test('a service-paid payment (no customer) is 404 to every customer', async () => {
    const service = await createServiceToken(t, ['payments:write', 'payments:read']);
    const payment = await makePayment(t, service, { amount: 100, currency: 'EUR' });
    const { token } = await createCustomer(t);
    expectProblem(
      await get(t, token, `/payments/${payment.id}`),
      404,
      'PAYMENT_NOT_FOUND',
      `/payments/${payment.id}`,
      `Payment ${payment.id} does not exist.`,
    );
    assert.deepEqual(await expectPayment(t.db, await get(t, service, `/payments/${payment.id}`), 200), payment);
  });

  test('a malformed id → 400 naming the parameter', async () => {
    const { token } = await createCustomer(t);
    for (const [id, message] of [
      ['abc', 'must be integer'],
      ['0', 'must be >= 1'],
      ['9007199254740992', 'must be <= 9007199254740991'],
    ]) {
      const detail = `path parameter "paymentId" ${message}`;
      expectProblem(await get(t, token, `/payments/${id}`), 400, 'REQUEST_PARAMETER_INVALID', `/payments/${id}`, detail, {
        errors: [{ parameter: 'paymentId', detail }],
      });
    }
  });

  test('without payments:read → 403 insufficient_scope; without a token → 401', async () => {
    const { user, payment } = await customerWithPayment();
    const res = await get(t, await t.token({ userId: user.id, scopes: ['orders:read', 'payments:write'] }), `/payments/${payment.id}`);
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', `/payments/${payment.id}`, 'This operation requires the scope "payments:read".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="payments:read"');
    const anonymous = await get(t, undefined, `/payments/${payment.id}`);
    expectProblem(
      anonymous,
      401,
      'AUTH_TOKEN_MISSING',
      `/payments/${payment.id}`,
      'This endpoint requires an access token: Authorization: Bearer <token>.',
    );
    assert.equal(anonymous.headers['www-authenticate'], 'Bearer realm="orderpay"');
  });
});
