// POST /payments and /v1/payments: a charge through the processor, alone or paying a pending order
// (which becomes paid in the same transaction). Every refusal leaves payments and the order as they
// were. Each write sends a new Idempotency-Key; what a key does on retry is test/http/idempotency/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { OrderStatus } from '../../../src/orders/orders.rules.ts';
import type { DeclineCode, PaymentProcessor } from '../../../src/payments/processor.ts';
import { createSimulatedProcessor } from '../../../src/payments/simulator.ts';
import { createCustomer, createServiceToken, createStaffToken, get } from '../../helpers/actors.ts';
import { PUBLIC_URL, setUpTestApp, startTestApp } from '../../helpers/app.ts';
import { createOrder, createUser } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import {
  expectPayment,
  JSON_TYPE,
  keyRows,
  MISSING_ID,
  paymentsOfCustomer,
  paymentsOfOrder,
  paymentTag,
  postPayment,
  readOrderRow,
  VENDOR_TYPE,
} from './payments.ts';

const t = setUpTestApp();

const CHARGE_REFERENCE = /^sim_ch_[A-Za-z0-9_-]{24}$/;

describe('POST /payments: 201 without an order', () => {
  for (const prefix of ['', '/v1']) {
    test(`a customer pays on ${prefix || 'the unversioned path'}: 201 with Location, ETag, no-store; the row written`, async () => {
      const { user, token } = await createCustomer(t);
      const key = randomUUID();
      const res = await postPayment(t, token, { amount: 1999, currency: 'EUR' }, { url: `${prefix}/payments`, key });
      const body = await expectPayment(t.db, res, 201);
      assert.equal(res.headers.location, `${PUBLIC_URL}${prefix}/payments/${body.id}`);
      assert.equal(res.headers.etag, paymentTag(body.id, 1));
      assert.deepEqual(body, {
        id: body.id,
        status: 'succeeded',
        amount: 1999,
        currency: 'EUR',
        amountRefunded: 0,
        orderId: null,
        customerId: user.id,
        declineCode: null,
        createdAt: body.createdAt,
        updatedAt: body.updatedAt,
      });
      const [row, ...others] = await paymentsOfCustomer(t.db, user.id);
      assert.deepEqual(others, []);
      assert.match(row!.processorReference, CHARGE_REFERENCE);
      assert.deepEqual(row, {
        ...body,
        clientId: 'test-client',
        processor: 'simulator',
        processorReference: row!.processorReference,
        version: 1,
      });
      assert.deepEqual(await keyRows(t.db, key), [{ method: 'POST', path: `${prefix}/payments`, state: 'completed', responseStatus: 201 }]);

      // The Location answers with the same representation and tag.
      const read = await get(t, token, new URL(res.headers.location as string).pathname);
      assert.equal(read.statusCode, 200);
      assert.deepEqual(read.json(), body);
      assert.equal(read.headers.etag, res.headers.etag);
    });
  }

  test('a staff user pays as themselves: customerId is the staff user', async () => {
    const staff = await createUser(t.db, 'staff');
    const token = await t.token({ userId: staff.id, staff: true });
    const res = await postPayment(t, token, { amount: 500, currency: 'GBP' });
    const body = await expectPayment(t.db, res, 201);
    assert.deepEqual(body, {
      id: body.id,
      status: 'succeeded',
      amount: 500,
      currency: 'GBP',
      amountRefunded: 0,
      orderId: null,
      customerId: staff.id,
      declineCode: null,
      createdAt: body.createdAt,
      updatedAt: body.updatedAt,
    });
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, staff.id)).map((p) => p.id),
      [body.id],
    );
  });

  test('a service client pays: customerId null, the client recorded', async () => {
    const clientId = `billing-${randomUUID().slice(0, 8)}`;
    const token = await t.token({ service: true, clientId, scopes: ['payments:write', 'payments:read'] });
    const res = await postPayment(t, token, { amount: 7300, currency: 'USD' });
    const body = await expectPayment(t.db, res, 201);
    assert.equal(res.headers.location, `${PUBLIC_URL}/payments/${body.id}`);
    assert.deepEqual(body, {
      id: body.id,
      status: 'succeeded',
      amount: 7300,
      currency: 'USD',
      amountRefunded: 0,
      orderId: null,
      customerId: null,
      declineCode: null,
      createdAt: body.createdAt,
      updatedAt: body.updatedAt,
    });
    const { rows } = await t.db.query<{ id: number; customer_id: number | null }>(
      'SELECT id, customer_id FROM payments WHERE client_id = $1',
      [clientId],
    );
    assert.deepEqual(rows, [{ id: body.id, customer_id: null }]);
  });

  test('ISO 4217 currencies of every minor unit, and the amount bounds 1 and 99 999 999', async () => {
    const { user, token } = await createCustomer(t);
    const made: [number, string][] = [];
    for (const currency of ['EUR', 'USD', 'JPY', 'KWD', 'CHF', 'SEK']) {
      for (const amount of [1, 99_999_999]) {
        const body = await expectPayment(t.db, await postPayment(t, token, { amount, currency }), 201);
        assert.deepEqual([body.status, body.amount, body.currency], ['succeeded', amount, currency]);
        made.push([amount, currency]);
      }
    }
    assert.deepEqual(
      (await paymentsOfCustomer(t.db, user.id)).map((p) => [p.amount, p.currency]),
      made,
    );
  });

  test('the vendor media type in Accept is answered in kind, on both paths', async () => {
    const { token } = await createCustomer(t);
    for (const prefix of ['', '/v1']) {
      const res = await postPayment(
        t,
        token,
        { amount: 250, currency: 'EUR' },
        { url: `${prefix}/payments`, headers: { accept: VENDOR_TYPE } },
      );
      const body = await expectPayment(t.db, res, 201, `${VENDOR_TYPE}; charset=utf-8`);
      assert.equal(res.headers.location, `${PUBLIC_URL}${prefix}/payments/${body.id}`);
    }
  });
});

describe('POST /payments: 201 paying an order', () => {
  test('the customer pays their pending order: the order becomes paid in the same write', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 1250, qty: 2, currency: 'EUR' });
    const res = await postPayment(t, token, { amount: 2500, currency: 'EUR', orderId: order.id }, { url: '/v1/payments' });
    const body = await expectPayment(t.db, res, 201);
    assert.equal(res.headers.location, `${PUBLIC_URL}/v1/payments/${body.id}`);
    assert.deepEqual(body, {
      id: body.id,
      status: 'succeeded',
      amount: 2500,
      currency: 'EUR',
      amountRefunded: 0,
      orderId: order.id,
      customerId: user.id,
      declineCode: null,
      createdAt: body.createdAt,
      updatedAt: body.updatedAt,
    });
    assert.deepEqual(
      (await paymentsOfOrder(t.db, order.id)).map((p) => [p.id, p.status]),
      [[body.id, 'succeeded']],
    );

    const stored = await readOrderRow(t.db, order.id);
    assert.deepEqual([stored.status, stored.version], ['paid', 2]);
    const read = await get(t, token, `/orders/${order.id}`);
    assert.equal(read.statusCode, 200);
    assert.equal(read.headers.etag, `"o${order.id}.2.v1"`);
    assert.deepEqual(read.json(), {
      id: order.id,
      status: 'paid',
      customerId: user.id,
      total: 2500,
      currency: 'EUR',
      createdAt: order.createdAt,
      updatedAt: stored.updatedAt,
    });
  });

  for (const actor of ['staff', 'service'] as const) {
    test(`${actor} pays a customer's order: customerId is the order's customer`, async () => {
      const { user } = await createCustomer(t);
      const order = await createOrder(t.db, user.id, { price: 999, currency: 'SEK' });
      const token = actor === 'staff' ? await createStaffToken(t) : await createServiceToken(t, ['payments:write']);
      const body = await expectPayment(t.db, await postPayment(t, token, { amount: 999, currency: 'SEK', orderId: order.id }), 201);
      assert.deepEqual([body.orderId, body.customerId, body.status], [order.id, user.id, 'succeeded']);
      assert.deepEqual(
        (await paymentsOfCustomer(t.db, user.id)).map((p) => p.id),
        [body.id],
      );
      assert.equal((await readOrderRow(t.db, order.id)).status, 'paid');
    });
  }
});

describe('POST /payments: invalid requests → 400 or 415, nothing written, no key kept', () => {
  const invalid = (pointer: string, message: string) => ({ pointer, detail: `${pointer} ${message}` });
  const cases: [name: string, body: (orderId: number) => unknown, errors: { pointer: string; detail: string }[]][] = [
    ['an empty object', () => ({}), [invalid('/amount', 'is required'), invalid('/currency', 'is required')]],
    ['amount missing', () => ({ currency: 'EUR' }), [invalid('/amount', 'is required')]],
    ['currency missing', () => ({ amount: 100 }), [invalid('/currency', 'is required')]],
    ['amount 0', () => ({ amount: 0, currency: 'EUR' }), [invalid('/amount', 'must be >= 1')]],
    ['amount -100', () => ({ amount: -100, currency: 'EUR' }), [invalid('/amount', 'must be >= 1')]],
    ['amount 100 000 000 (too large)', () => ({ amount: 100_000_000, currency: 'EUR' }), [invalid('/amount', 'must be <= 99999999')]],
    ['amount 12.5 (a float)', () => ({ amount: 12.5, currency: 'EUR' }), [invalid('/amount', 'must be integer')]],
    ['amount "1000" (a string, not coerced)', () => ({ amount: '1000', currency: 'EUR' }), [invalid('/amount', 'must be integer')]],
    ['amount null', () => ({ amount: null, currency: 'EUR' }), [invalid('/amount', 'must be integer')]],
    ['currency "eur" (lowercase)', () => ({ amount: 100, currency: 'eur' }), [invalid('/currency', 'must match pattern "^[A-Z]{3}$"')]],
    ['currency "EURO"', () => ({ amount: 100, currency: 'EURO' }), [invalid('/currency', 'must match pattern "^[A-Z]{3}$"')]],
    ['currency 978 (a number)', () => ({ amount: 100, currency: 978 }), [invalid('/currency', 'must be string')]],
    ['an unknown field', () => ({ amount: 100, currency: 'EUR', note: 'x' }), [invalid('/note', 'is not a known field')]],
    ['customerId in the body', () => ({ amount: 100, currency: 'EUR', customerId: 1 }), [invalid('/customerId', 'is not a known field')]],
    ['status in the body', () => ({ amount: 100, currency: 'EUR', status: 'succeeded' }), [invalid('/status', 'is not a known field')]],
    ['orderId 0', () => ({ amount: 100, currency: 'EUR', orderId: 0 }), [invalid('/orderId', 'must be >= 1')]],
    [
      'orderId 2^53 (beyond the id range)',
      () => ({ amount: 100, currency: 'EUR', orderId: 2 ** 53 }),
      [invalid('/orderId', 'must be <= 9007199254740991')],
    ],
    [
      'orderId as a string',
      (orderId) => ({ amount: 100, currency: 'EUR', orderId: String(orderId) }),
      [invalid('/orderId', 'must be integer')],
    ],
    ['orderId null', () => ({ amount: 100, currency: 'EUR', orderId: null }), [invalid('/orderId', 'must be integer')]],
    [
      'several problems at once',
      () => ({ amount: 0, currency: 'eur', x: 1 }),
      [invalid('/amount', 'must be >= 1'), invalid('/currency', 'must match pattern "^[A-Z]{3}$"'), invalid('/x', 'is not a known field')],
    ],
    ['an array body', () => [], [{ pointer: '', detail: 'body must be object' }]],
  ];
  for (const [name, body, errors] of cases) {
    test(name, async () => {
      const { user, token } = await createCustomer(t);
      const order = await createOrder(t.db, user.id, { price: 100 });
      const key = randomUUID();
      const res = await postPayment(t, token, body(order.id), { key, url: '/v1/payments' });
      const actual = res.json().errors as { pointer: string; detail: string }[] | undefined;
      const byPointer = (a: { pointer: string }, b: { pointer: string }) => a.pointer.localeCompare(b.pointer);
      // Ajv reports in schema order; compare as a set, then the whole body in that order.
      assert.deepEqual([...(actual ?? [])].sort(byPointer), [...errors].sort(byPointer));
      expectProblem(res, 400, 'REQUEST_BODY_INVALID', '/v1/payments', (actual ?? []).map((e) => e.detail).join('; '), { errors: actual });
      assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
      assert.deepEqual([(await readOrderRow(t.db, order.id)).status, (await readOrderRow(t.db, order.id)).version], ['pending', 1]);
      assert.deepEqual(await keyRows(t.db, key), []);
    });
  }

  for (const code of ['XYZ', 'XXX', 'ABC']) {
    test(`currency "${code}" (well formed, no ISO 4217 currency) → 400 naming /currency`, async () => {
      const { user, token } = await createCustomer(t);
      const key = randomUUID();
      const res = await postPayment(t, token, { amount: 100, currency: code }, { key });
      expectProblem(res, 400, 'REQUEST_BODY_INVALID', '/payments', `/currency "${code}" is not an ISO 4217 currency code.`, {
        errors: [{ pointer: '/currency', detail: `"${code}" is not an ISO 4217 currency code` }],
      });
      assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
      assert.deepEqual(await keyRows(t.db, key), []);
    });
  }

  for (const [name, payload, detail] of [
    ['an empty body', '', 'The JSON body is empty.'],
    ['malformed JSON', '{"amount": 100, "currency":', 'The body is not valid JSON.'],
  ] as const) {
    test(`${name} → 400 REQUEST_BODY_MALFORMED`, async () => {
      const { user, token } = await createCustomer(t);
      const key = randomUUID();
      const res = await postPayment(t, token, payload, { key, headers: { 'content-type': 'application/json' } });
      expectProblem(res, 400, 'REQUEST_BODY_MALFORMED', '/payments', detail);
      assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
      assert.deepEqual(await keyRows(t.db, key), []);
    });
  }

  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
    test(`Content-Type ${contentType} → 415`, async () => {
      const { user, token } = await createCustomer(t);
      const key = randomUUID();
      const res = await postPayment(t, token, JSON.stringify({ amount: 100, currency: 'EUR' }), {
        key,
        headers: { 'content-type': contentType },
      });
      expectProblem(res, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE', '/payments', 'Send the body as application/json.');
      assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
      assert.deepEqual(await keyRows(t.db, key), []);
    });
  }
});

describe('POST /payments: an order that cannot be paid → nothing charged, the order unchanged', () => {
  test("another customer's order → 404 PAYMENT_ORDER_NOT_FOUND, like a missing one", async () => {
    const owner = await createCustomer(t);
    const other = await createCustomer(t);
    const order = await createOrder(t.db, owner.user.id, { price: 800 });
    const before = await readOrderRow(t.db, order.id);
    const res = await postPayment(t, other.token, { amount: 800, currency: 'EUR', orderId: order.id });
    expectProblem(res, 404, 'PAYMENT_ORDER_NOT_FOUND', '/payments', `Order ${order.id} does not exist.`, {
      errors: [{ pointer: '/orderId', detail: 'no such order' }],
    });
    const missing = await postPayment(t, other.token, { amount: 800, currency: 'EUR', orderId: MISSING_ID });
    expectProblem(missing, 404, 'PAYMENT_ORDER_NOT_FOUND', '/payments', `Order ${MISSING_ID} does not exist.`, {
      errors: [{ pointer: '/orderId', detail: 'no such order' }],
    });
    assert.deepEqual(await readOrderRow(t.db, order.id), before);
    assert.deepEqual(await paymentsOfOrder(t.db, order.id), []);
    assert.deepEqual(await paymentsOfCustomer(t.db, other.user.id), []);
  });

  test('a deleted order → 404 PAYMENT_ORDER_NOT_FOUND, for the owner and for staff', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 800 });
    assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${order.id}` })).statusCode, 204);
    const before = await readOrderRow(t.db, order.id);
    for (const payer of [token, await createStaffToken(t)]) {
      const res = await postPayment(t, payer, { amount: 800, currency: 'EUR', orderId: order.id });
      expectProblem(res, 404, 'PAYMENT_ORDER_NOT_FOUND', '/payments', `Order ${order.id} does not exist.`, {
        errors: [{ pointer: '/orderId', detail: 'no such order' }],
      });
    }
    assert.deepEqual(await readOrderRow(t.db, order.id), before);
    assert.deepEqual(await paymentsOfOrder(t.db, order.id), []);
  });

  for (const status of ['paid', 'shipped', 'delivered', 'cancelled'] as OrderStatus[]) {
    test(`a ${status} order → 409 PAYMENT_ORDER_NOT_PAYABLE with currentStatus`, async () => {
      const { user, token } = await createCustomer(t);
      const order = await createOrder(t.db, user.id, { price: 800, status });
      const before = await readOrderRow(t.db, order.id);
      const res = await postPayment(t, token, { amount: 800, currency: 'EUR', orderId: order.id });
      expectProblem(res, 409, 'PAYMENT_ORDER_NOT_PAYABLE', '/payments', `The order is ${status}; only a pending order can be paid.`, {
        currentStatus: status,
      });
      assert.deepEqual(await readOrderRow(t.db, order.id), before);
      assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
    });
  }

  test('an order paid through the API cannot be paid again → 409 currentStatus paid', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 800 });
    const first = await expectPayment(t.db, await postPayment(t, token, { amount: 800, currency: 'EUR', orderId: order.id }), 201);
    const res = await postPayment(t, token, { amount: 800, currency: 'EUR', orderId: order.id });
    expectProblem(res, 409, 'PAYMENT_ORDER_NOT_PAYABLE', '/payments', 'The order is paid; only a pending order can be paid.', {
      currentStatus: 'paid',
    });
    assert.deepEqual(
      (await paymentsOfOrder(t.db, order.id)).map((p) => p.id),
      [first.id],
    );
  });

  test('10 concurrent payments of one order (distinct keys): one pays it, 9 → 409 (in progress, or paid), one payment row', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 640 });
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => postPayment(t, token, { amount: 640, currency: 'EUR', orderId: order.id })),
    );
    const paid = responses.filter((r) => r.statusCode === 201);
    assert.equal(paid.length, 1, responses.map((r) => r.statusCode).join(','));
    const payment = await expectPayment(t.db, paid[0]!, 201);
    // Arriving while the first payment is in progress, or once it has paid the order.
    for (const res of responses.filter((r) => r.statusCode !== 201)) {
      if (res.json().code === 'PAYMENT_ORDER_PAYMENT_IN_PROGRESS') {
        expectProblem(
          res,
          409,
          'PAYMENT_ORDER_PAYMENT_IN_PROGRESS',
          '/payments',
          `A payment of order ${order.id} is in progress; only if it does not succeed can the order be paid again.`,
          {
            paymentStatus: 'processing',
          },
        );
      } else {
        expectProblem(res, 409, 'PAYMENT_ORDER_NOT_PAYABLE', '/payments', 'The order is paid; only a pending order can be paid.', {
          currentStatus: 'paid',
        });
      }
    }
    assert.deepEqual(
      (await paymentsOfOrder(t.db, order.id)).map((p) => [p.id, p.status]),
      [[payment.id, 'succeeded']],
    );
    const stored = await readOrderRow(t.db, order.id);
    assert.deepEqual([stored.status, stored.version], ['paid', 2]);
  });

  const mismatches: [name: string, body: { amount: number; currency: string }, errors: { pointer: string; detail: string }[]][] = [
    ['the amount differs', { amount: 1999, currency: 'EUR' }, [{ pointer: '/amount', detail: 'must equal the order total 2000' }]],
    ['the currency differs', { amount: 2000, currency: 'USD' }, [{ pointer: '/currency', detail: 'must equal the order currency EUR' }]],
    [
      'both differ',
      { amount: 1, currency: 'JPY' },
      [
        { pointer: '/amount', detail: 'must equal the order total 2000' },
        { pointer: '/currency', detail: 'must equal the order currency EUR' },
      ],
    ],
  ];
  for (const [name, body, errors] of mismatches) {
    test(`${name} → 422 PAYMENT_AMOUNT_MISMATCH with expectedAmount and expectedCurrency`, async () => {
      const { user, token } = await createCustomer(t);
      const order = await createOrder(t.db, user.id, { price: 1000, qty: 2, currency: 'EUR' });
      const before = await readOrderRow(t.db, order.id);
      const res = await postPayment(t, token, { ...body, orderId: order.id });
      expectProblem(
        res,
        422,
        'PAYMENT_AMOUNT_MISMATCH',
        '/payments',
        "The order's total is 2000 EUR; a payment of it must be for exactly that.",
        {
          expectedAmount: 2000,
          expectedCurrency: 'EUR',
          errors,
        },
      );
      assert.deepEqual(await readOrderRow(t.db, order.id), before);
      assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
    });
  }
});

describe("POST /payments: the simulator's test amounts", () => {
  const declines: [amount: number, code: DeclineCode][] = [
    [40002, 'card_declined'],
    [40051, 'insufficient_funds'],
    [40054, 'expired_card'],
  ];
  for (const [amount, declineCode] of declines) {
    test(`${amount} → 201 declined ${declineCode}: stored, the order still pending and payable`, async () => {
      const { user, token } = await createCustomer(t);
      const alone = await expectPayment(t.db, await postPayment(t, token, { amount, currency: 'EUR' }), 201);
      assert.deepEqual(alone, {
        id: alone.id,
        status: 'declined',
        amount,
        currency: 'EUR',
        amountRefunded: 0,
        orderId: null,
        customerId: user.id,
        declineCode,
        createdAt: alone.createdAt,
        updatedAt: alone.updatedAt,
      });

      const order = await createOrder(t.db, user.id, { price: amount, currency: 'EUR' });
      const before = await readOrderRow(t.db, order.id);
      const first = await expectPayment(t.db, await postPayment(t, token, { amount, currency: 'EUR', orderId: order.id }), 201);
      assert.deepEqual([first.status, first.declineCode, first.orderId], ['declined', declineCode, order.id]);
      assert.deepEqual(await readOrderRow(t.db, order.id), before);
      // A declined charge does not settle the order: it can be tried again (and, same card, declined again).
      const second = await expectPayment(t.db, await postPayment(t, token, { amount, currency: 'EUR', orderId: order.id }), 201);
      assert.deepEqual([second.status, second.declineCode], ['declined', declineCode]);
      assert.deepEqual(
        (await paymentsOfOrder(t.db, order.id)).map((p) => [p.id, p.status, p.declineCode]),
        [
          [first.id, 'declined', declineCode],
          [second.id, 'declined', declineCode],
        ],
      );
      assert.deepEqual(await readOrderRow(t.db, order.id), before);
    });
  }

  test('40091 → 503 PAYMENT_PROCESSOR_UNAVAILABLE with Retry-After; the payment kept processing (shown to no one), the key released with it, the order reserved', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 40091, currency: 'EUR' });
    for (const body of [
      { amount: 40091, currency: 'EUR' },
      { amount: 40091, currency: 'EUR', orderId: order.id },
    ]) {
      const key = randomUUID();
      const res = await postPayment(t, token, body, { key });
      expectProblem(
        res,
        503,
        'PAYMENT_PROCESSOR_UNAVAILABLE',
        '/payments',
        'The payment processor did not answer. The payment is kept in progress and asked about again; retry the request with the same Idempotency-Key to receive its outcome.',
      );
      assert.equal(res.headers['retry-after'], '1');
      assert.deepEqual(await keyRows(t.db, key), [{ method: 'POST', path: '/payments', state: 'in_flight', responseStatus: null }]);
      const { rows } = await t.db.query<{ lapsed: boolean; recoveryPoint: number }>(
        'SELECT locked_until <= now() AS lapsed, recovery_point AS "recoveryPoint" FROM idempotency_keys WHERE key = $1',
        [key],
      );
      const [payment] = (await paymentsOfCustomer(t.db, user.id)).filter((p) => p.orderId === (body.orderId ?? null));
      assert.deepEqual(rows, [{ lapsed: true, recoveryPoint: payment!.id }]);
      // Never named by the processor (it is down), asked again on the retry schedule.
      assert.deepEqual([payment!.status, payment!.processorReference], ['processing', null]);
    }
    assert.equal((await get(t, token, '/payments')).json().meta.total, 0);
    assert.equal((await readOrderRow(t.db, order.id)).status, 'pending');
  });
});

describe('POST /payments: a declined card, then another that is accepted', () => {
  /** The simulator, except that its first charge is declined (the customer's first card). */
  function declineFirstCharge(declineCode: DeclineCode): PaymentProcessor {
    const simulator = createSimulatedProcessor();
    let charges = 0;
    return {
      ...simulator,
      async confirmCharge(charge) {
        charges += 1;
        if (charges === 1) return { status: 'declined', declineCode };
        return simulator.confirmCharge(charge);
      },
    };
  }

  test('the declined payment stays declined; the later one pays the order', async () => {
    const api = await startTestApp({}, undefined, { paymentProcessor: declineFirstCharge('insufficient_funds') });
    try {
      const { user, token } = await createCustomer(api);
      const order = await createOrder(api.db, user.id, { price: 4500, currency: 'CHF' });
      const pay = () => postPayment(api, token, { amount: 4500, currency: 'CHF', orderId: order.id });
      const declined = await expectPayment(api.db, await pay(), 201);
      assert.deepEqual([declined.status, declined.declineCode], ['declined', 'insufficient_funds']);
      assert.equal((await readOrderRow(api.db, order.id)).status, 'pending');

      const accepted = await expectPayment(api.db, await pay(), 201);
      assert.deepEqual(accepted, {
        id: accepted.id,
        status: 'succeeded',
        amount: 4500,
        currency: 'CHF',
        amountRefunded: 0,
        orderId: order.id,
        customerId: user.id,
        declineCode: null,
        createdAt: accepted.createdAt,
        updatedAt: accepted.updatedAt,
      });
      const stored = await readOrderRow(api.db, order.id);
      assert.deepEqual([stored.status, stored.version], ['paid', 2]);
      assert.deepEqual(
        (await paymentsOfOrder(api.db, order.id)).map((p) => [p.id, p.status, p.declineCode]),
        [
          [declined.id, 'declined', 'insufficient_funds'],
          [accepted.id, 'succeeded', null],
        ],
      );
      assert.deepEqual((await get(api, token, `/payments/${declined.id}`)).json(), declined);
    } finally {
      await api.close();
    }
  });
});

describe('POST /payments: who may pay', () => {
  test('a token with payments:read only → 403 insufficient_scope naming payments:write', async () => {
    const { user } = await createCustomer(t);
    const order = await createOrder(t.db, user.id, { price: 800 });
    const key = randomUUID();
    const res = await postPayment(
      t,
      await t.token({ userId: user.id, scopes: ['payments:read', 'orders:read', 'orders:write'] }),
      {
        amount: 800,
        currency: 'EUR',
        orderId: order.id,
      },
      { key },
    );
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', '/payments', 'This operation requires the scope "payments:write".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="payments:write"');
    assert.deepEqual(await paymentsOfCustomer(t.db, user.id), []);
    assert.equal((await readOrderRow(t.db, order.id)).status, 'pending');
    assert.deepEqual(await keyRows(t.db, key), []);
  });

  test('without a token → 401', async () => {
    const key = randomUUID();
    const res = await postPayment(t, undefined, { amount: 800, currency: 'EUR' }, { key });
    expectProblem(res, 401, 'AUTH_TOKEN_MISSING', '/payments', 'This endpoint requires an access token: Authorization: Bearer <token>.');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay"');
    assert.deepEqual(await keyRows(t.db, key), []);
  });

  test('a token for a user that does not exist → 403 AUTH_SUBJECT_UNKNOWN, no payment', async () => {
    const ghost = 1_999_999_999;
    const res = await postPayment(t, await t.token({ userId: ghost }), { amount: 800, currency: 'EUR' });
    expectProblem(res, 403, 'AUTH_SUBJECT_UNKNOWN', '/payments', `User ${ghost} named by the access token does not exist.`);
    assert.deepEqual(await paymentsOfCustomer(t.db, ghost), []);
  });

  test('the response content type is JSON unless the vendor type is asked for', async () => {
    const { token } = await createCustomer(t);
    const res = await postPayment(t, token, { amount: 10, currency: 'EUR' }, { headers: { accept: 'application/json' } });
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['content-type'], JSON_TYPE);
  });
});
