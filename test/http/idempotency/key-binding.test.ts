// What an Idempotency-Key names (draft-ietf-httpapi-idempotency-key-header §2.1, §2.6): a valid
// header, scoped to the caller (OAuth client and subject), bound to one method, path and body;
// optional on POST /orders, required on payments and refunds.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCustomer } from '../../helpers/actors.ts';
import { PUBLIC_URL, setUpTestApp } from '../../helpers/app.ts';
import { createProduct, createUser } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import {
  customerOwner,
  expectNotReplayed,
  expectPaymentCreated,
  expectReplayOf,
  findKeyRow,
  JSON_TYPE,
  newKey,
  paymentsOfCustomer,
  postWithKey,
} from './keyed-requests.ts';

const t = setUpTestApp();

const REUSED_BODY =
  'This Idempotency-Key was used with a different request body; a retry must repeat the original request exactly. Use a new key for a new request.';
const reusedFor = (operation: string) =>
  `This Idempotency-Key was used for ${operation}; a key belongs to one operation. Use a new key for this request.`;

describe('keys are scoped to the caller (client and subject)', () => {
  test('the same key and body from another customer → an independent payment', async () => {
    const a = await createCustomer(t);
    const b = await createCustomer(t);
    const key = newKey();
    const body = { amount: 1500, currency: 'EUR' };
    const first = await postWithKey(t, a.token, '/payments', body, key);
    const paymentA = expectPaymentCreated(first, { ...body, orderId: null, customerId: a.user.id });
    const second = await postWithKey(t, b.token, '/payments', body, key);
    const paymentB = expectPaymentCreated(second, { ...body, orderId: null, customerId: b.user.id });
    expectNotReplayed(second);
    assert.notEqual(paymentB.id, paymentA.id);
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, a.user.id)).map((p) => p.id),
      [paymentA.id],
    );
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, b.user.id)).map((p) => p.id),
      [paymentB.id],
    );
    assert.equal((await findKeyRow(t.db, customerOwner(a.user.id), key))?.response_body, first.body);
    assert.equal((await findKeyRow(t.db, customerOwner(b.user.id), key))?.response_body, second.body);
  });

  test('the same user through another OAuth client → an independent payment', async () => {
    const user = await createUser(t.db);
    const key = newKey();
    const body = { amount: 1600, currency: 'EUR' };
    const first = await postWithKey(t, await t.token({ userId: user.id }), '/payments', body, key);
    const viaOther = await postWithKey(t, await t.token({ userId: user.id, clientId: 'other' }), '/payments', body, key);
    const p1 = expectPaymentCreated(first, { ...body, orderId: null, customerId: user.id });
    const p2 = expectPaymentCreated(viaOther, { ...body, orderId: null, customerId: user.id });
    expectNotReplayed(viaOther);
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, user.id)).map((p) => [p.id, p.client_id]),
      [
        [p1.id, 'test-client'],
        [p2.id, 'other'],
      ],
    );
    // And each client's retry replays its own payment.
    expectReplayOf(viaOther, await postWithKey(t, await t.token({ userId: user.id, clientId: 'other' }), '/payments', body, key));
    expectReplayOf(first, await postWithKey(t, await t.token({ userId: user.id }), '/payments', body, key));
  });
});

describe('POST /orders: the key is optional', () => {
  async function ordersOf(customerId: number) {
    return (await t.db.query<{ id: number }>('SELECT id FROM orders WHERE customer_id = $1 ORDER BY id', [customerId])).rows.map(
      (r) => r.id,
    );
  }

  test('with a key: the retry replays the 201, one order', async () => {
    const { user, token } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 450, currency: 'SEK' });
    const key = newKey();
    const first = await postWithKey(t, token, '/orders', { productId: product.id, qty: 2 }, key);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.headers['content-type'], JSON_TYPE);
    assert.equal(first.headers['cache-control'], 'no-store');
    const order = first.json();
    assert.equal(first.headers.location, `${PUBLIC_URL}/orders/${order.id}`);
    assert.equal(first.headers.etag, `"o${order.id}.1.v1"`);
    assert.deepEqual(order, {
      id: order.id,
      status: 'pending',
      customerId: user.id,
      total: 900,
      currency: 'SEK',
      createdAt: order.createdAt,
      updatedAt: order.createdAt,
    });
    expectReplayOf(first, await postWithKey(t, token, '/orders', `{"qty":2,"productId":${product.id}}`, key));
    assert.deepEqual(await ordersOf(user.id), [order.id]);
  });

  test('without a key: each POST places an order', async () => {
    const { user, token } = await createCustomer(t);
    const product = await createProduct(t.db);
    const first = await postWithKey(t, token, '/orders', { productId: product.id, qty: 1 });
    const second = await postWithKey(t, token, '/orders', { productId: product.id, qty: 1 });
    assert.deepEqual([first.statusCode, second.statusCode], [201, 201]);
    expectNotReplayed(first);
    expectNotReplayed(second);
    assert.notEqual(first.json().id, second.json().id);
    assert.deepEqual(await ordersOf(user.id), [first.json().id, second.json().id]);
  });

  test('a key used for POST /orders, then for POST /payments → 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const { user, token } = await createCustomer(t);
    const product = await createProduct(t.db);
    const key = newKey();
    assert.equal((await postWithKey(t, token, '/orders', { productId: product.id, qty: 1 }, key)).statusCode, 201);
    expectProblem(
      await postWithKey(t, token, '/payments', { amount: 1250, currency: 'EUR' }, key),
      422,
      'IDEMPOTENCY_KEY_REUSED',
      '/payments',
      reusedFor('POST /orders'),
    );
    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
  });
});

describe('a key belongs to one operation and one body', () => {
  test('the same key on POST /payments/{id}/refunds → 422 IDEMPOTENCY_KEY_REUSED; no refund', async () => {
    const staff = await createUser(t.db, 'staff');
    const token = await t.token({ userId: staff.id, staff: true });
    const key = newKey();
    const payment = expectPaymentCreated(await postWithKey(t, token, '/payments', { amount: 5000, currency: 'EUR' }, key), {
      amount: 5000,
      currency: 'EUR',
      orderId: null,
      customerId: staff.id,
    });
    const url = `/payments/${payment.id}/refunds`;
    expectProblem(await postWithKey(t, token, url, { amount: 100 }, key), 422, 'IDEMPOTENCY_KEY_REUSED', url, reusedFor('POST /payments'));
    expectProblem(
      await postWithKey(t, token, url, { amount: 5000, currency: 'EUR' }, key),
      400,
      'REQUEST_BODY_INVALID',
      url,
      '/currency is not a known field',
      {
        errors: [{ pointer: '/currency', detail: '/currency is not a known field' }],
      },
    );
    const { rows } = await t.db.query(
      'SELECT status, amount_refunded, (SELECT count(*) FROM refunds WHERE payment_id = $1)::int AS refunds FROM payments WHERE id = $1',
      [payment.id],
    );
    assert.deepEqual(rows, [{ status: 'succeeded', amount_refunded: 0, refunds: 0 }]);
  });

  test('/payments then /v1/payments with the same key → 422 (the path as sent), and the other way round', async () => {
    for (const [firstPath, secondPath] of [
      ['/payments', '/v1/payments'],
      ['/v1/payments', '/payments'],
    ] as const) {
      const { user, token } = await createCustomer(t);
      const key = newKey();
      const body = { amount: 1700, currency: 'EUR' };
      const first = await postWithKey(t, token, firstPath, body, key);
      const payment = expectPaymentCreated(
        first,
        { ...body, orderId: null, customerId: user.id },
        firstPath === '/v1/payments' ? '/v1' : '',
      );
      expectProblem(
        await postWithKey(t, token, secondPath, body, key),
        422,
        'IDEMPOTENCY_KEY_REUSED',
        secondPath,
        reusedFor(`POST ${firstPath}`),
      );
      assert.deepEqual(
        (await paymentsOfCustomer(t.db, user.id)).map((p) => p.id),
        [payment.id],
      );
      expectReplayOf(first, await postWithKey(t, token, firstPath, body, key));
    }
  });

  test('the same key with another body → 422 IDEMPOTENCY_KEY_REUSED, nothing new stored; the original still replays', async () => {
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const body = { amount: 1800, currency: 'EUR' };
    const first = await postWithKey(t, token, '/payments', body, key);
    const payment = expectPaymentCreated(first, { ...body, orderId: null, customerId: user.id });
    const before = await findKeyRow(t.db, customerOwner(user.id), key);

    for (const other of [
      { amount: 1801, currency: 'EUR' },
      { amount: 1800, currency: 'USD' },
    ]) {
      const res = await postWithKey(t, token, '/payments', other, key);
      expectProblem(res, 422, 'IDEMPOTENCY_KEY_REUSED', '/payments', REUSED_BODY);
      expectNotReplayed(res);
    }
    assert.deepEqual(await findKeyRow(t.db, customerOwner(user.id), key), before);
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, user.id)).map((p) => p.id),
      [payment.id],
    );
    expectReplayOf(first, await postWithKey(t, token, '/payments', body, key));
  });

  test('a body that fails validation is refused before the key is looked at: 400, and the key stays as stored', async () => {
    const { user, token } = await createCustomer(t);
    const key = newKey();
    const first = await postWithKey(t, token, '/payments', { amount: 1900, currency: 'EUR' }, key);
    expectPaymentCreated(first, { amount: 1900, currency: 'EUR', orderId: null, customerId: user.id });
    const before = await findKeyRow(t.db, customerOwner(user.id), key);
    expectProblem(
      await postWithKey(t, token, '/payments', { amount: 0, currency: 'EUR' }, key),
      400,
      'REQUEST_BODY_INVALID',
      '/payments',
      '/amount must be >= 1',
      {
        errors: [{ pointer: '/amount', detail: '/amount must be >= 1' }],
      },
    );
    assert.deepEqual(await findKeyRow(t.db, customerOwner(user.id), key), before);
  });
});

describe('the Idempotency-Key header', () => {
  const INVALID: [name: string, header: string, reason: string][] = [
    ['empty', '', 'is empty'],
    ['empty quoted', '""', 'is empty'],
    ['256 characters', 'k'.repeat(256), 'is longer than 255 characters'],
    ['a space', 'a b', 'must be visible ASCII characters (or a quoted string)'],
    ['non-ASCII', 'café', 'must be visible ASCII characters (or a quoted string)'],
    ['a tab', 'a\tb', 'must be visible ASCII characters (or a quoted string)'],
  ];
  for (const [name, header, reason] of INVALID) {
    test(`${name} → 400 IDEMPOTENCY_KEY_INVALID on POST /payments and POST /orders; nothing stored`, async () => {
      const { user, token } = await createCustomer(t);
      const product = await createProduct(t.db);
      for (const [url, body] of [
        ['/payments', { amount: 2300, currency: 'EUR' }],
        ['/orders', { productId: product.id, qty: 1 }],
      ] as const) {
        expectProblem(await postWithKey(t, token, url, body, header), 400, 'IDEMPOTENCY_KEY_INVALID', url, `Idempotency-Key ${reason}.`, {
          errors: [{ parameter: 'idempotency-key', detail: `Idempotency-Key ${reason}` }],
        });
      }
      const { rows } = await t.db.query("SELECT key FROM idempotency_keys WHERE client_id = 'test-client' AND subject = $1", [
        String(user.id),
      ]);
      assert.deepEqual(rows, []);
      assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
    });
  }

  test('two Idempotency-Key fields → 400 IDEMPOTENCY_KEY_INVALID (their combined value has a space)', async () => {
    const { token } = await createCustomer(t);
    const res = await t.request(token, {
      method: 'POST',
      url: '/payments',
      payload: { amount: 2300, currency: 'EUR' },
      headers: { 'idempotency-key': ['a', 'b'] as unknown as string },
    });
    const reason = 'must be visible ASCII characters (or a quoted string)';
    expectProblem(res, 400, 'IDEMPOTENCY_KEY_INVALID', '/payments', `Idempotency-Key ${reason}.`, {
      errors: [{ parameter: 'idempotency-key', detail: `Idempotency-Key ${reason}` }],
    });
  });

  test('missing on POST /payments and on a refund → 400 IDEMPOTENCY_KEY_MISSING', async () => {
    const staff = await createUser(t.db, 'staff');
    const token = await t.token({ userId: staff.id, staff: true });
    const payment = expectPaymentCreated(await postWithKey(t, token, '/payments', { amount: 2400, currency: 'EUR' }, newKey()), {
      amount: 2400,
      currency: 'EUR',
      orderId: null,
      customerId: staff.id,
    });
    for (const [url, body] of [
      ['/payments', { amount: 2400, currency: 'EUR' }],
      [`/payments/${payment.id}/refunds`, {}],
    ] as const) {
      expectProblem(
        await postWithKey(t, token, url, body),
        400,
        'IDEMPOTENCY_KEY_MISSING',
        url,
        'Send an Idempotency-Key header: a unique value for this operation, repeated on every retry of it.',
        {
          errors: [{ parameter: 'idempotency-key', detail: 'header idempotency-key is required' }],
        },
      );
    }
  });

  test('255 characters, bare and quoted, are one key', async () => {
    const { user, token } = await createCustomer(t);
    const key = `${newKey()}-`.padEnd(255, 'z');
    const body = { amount: 2450, currency: 'EUR' };
    const first = await postWithKey(t, token, '/payments', body, key);
    expectPaymentCreated(first, { ...body, orderId: null, customerId: user.id });
    expectReplayOf(first, await postWithKey(t, token, '/payments', body, `"${key}"`));
    assert.equal((await findKeyRow(t.db, customerOwner(user.id), key))?.response_body, first.body);
  });

  test('a quoted key with escapes names its unescaped value', async () => {
    const { user, token } = await createCustomer(t);
    const key = `${newKey()}"quote\\backslash`;
    const body = { amount: 2460, currency: 'EUR' };
    const first = await postWithKey(t, token, '/payments', body, key);
    expectPaymentCreated(first, { ...body, orderId: null, customerId: user.id });
    const quoted = `"${key.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
    expectReplayOf(first, await postWithKey(t, token, '/payments', body, quoted));
    assert.equal((await paymentsOfCustomer(t.db, user.id)).length, 1);
  });
});
