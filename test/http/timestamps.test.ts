// Timestamps of every resource: RFC 3339 in UTC with exactly milliseconds, on PGlite and PostgreSQL
// alike; the value shown is the value stored, and a client's Date round trip gives it back unchanged.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createCustomer, createStaffToken, get } from '../helpers/actors.ts';
import { setUpTestApp } from '../helpers/app.ts';
import { serverUrl } from '../helpers/db.ts';
import { createOrderRow } from './orders/stored-orders.ts';
import { postPayment, postRefund } from './payments/payments.ts';

const t = setUpTestApp();

const DATABASE = serverUrl ? 'PostgreSQL' : 'PGlite';
const MILLISECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const COLUMNS = { createdAt: 'created_at', updatedAt: 'updated_at' } as const;

type Table = 'products' | 'orders' | 'payments' | 'refunds';

/** The column as the database itself spells it, in microseconds, whatever the type parser does. */
async function storedMicroseconds(table: Table, id: number, column: string): Promise<string> {
  const { rows } = await t.db.query<{ micro: string }>(
    `SELECT to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS micro FROM ${table} WHERE id = $1`,
    [id],
  );
  return rows[0]!.micro;
}

/**
 * Every timestamp of the representation: exactly milliseconds, unchanged by a Date round trip, and
 * stored at millisecond precision (the database's own microseconds end in 000).
 */
async function expectMilliseconds(table: Table, representation: Record<string, unknown>): Promise<void> {
  const fields = (Object.keys(COLUMNS) as (keyof typeof COLUMNS)[]).filter((field) => field in representation);
  assert.ok(fields.includes('createdAt'), `${table} ${JSON.stringify(representation)} has createdAt`);
  for (const field of fields) {
    const value = representation[field] as string;
    assert.match(value, MILLISECONDS, `${table}.${field}`);
    assert.equal(new Date(value).toISOString(), value, `${table}.${field} survives a Date round trip`);
    const stored = await storedMicroseconds(table, representation.id as number, COLUMNS[field]);
    assert.equal(stored, value.replace(/Z$/, '000Z'), `${table}.${field} as stored`);
  }
}

function created(res: LightMyRequestResponse): Record<string, unknown> {
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

function read(res: LightMyRequestResponse): Record<string, unknown> {
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

describe(`timestamps: RFC 3339 UTC with milliseconds (${DATABASE})`, () => {
  test('products, orders, payments and refunds, as written, read alone and listed', async () => {
    const staff = await createStaffToken(t);
    const { user, token } = await createCustomer(t);

    const product = created(
      await t.request(staff, { method: 'POST', url: '/products', payload: { name: 'Kettle', price: 1250, currency: 'EUR' } }),
    );
    await expectMilliseconds('products', product);
    const replaced = read(
      await t.request(staff, {
        method: 'PUT',
        url: `/products/${product.id}`,
        payload: { name: 'Kettle', price: 1300, currency: 'EUR', active: true },
      }),
    );
    await expectMilliseconds('products', replaced);
    await expectMilliseconds('products', read(await get(t, token, `/products/${product.id}`)));

    const order = created(await t.request(token, { method: 'POST', url: '/orders', payload: { productId: product.id, qty: 2 } }));
    await expectMilliseconds('orders', order);
    const payment = created(await postPayment(t, token, { amount: 2600, currency: 'EUR', orderId: order.id }));
    await expectMilliseconds('payments', payment);
    const refund = created(await postRefund(t, staff, payment.id as number, { amount: 100 }));
    await expectMilliseconds('refunds', refund);

    // Changed rows (the order paid, the payment refunded) as read alone and in their collections.
    await expectMilliseconds('orders', read(await get(t, token, `/orders/${order.id}`)));
    await expectMilliseconds('payments', read(await get(t, token, `/payments/${payment.id}`)));
    await expectMilliseconds('refunds', read(await get(t, token, `/payments/${payment.id}/refunds/${refund.id}`)));
    for (const [table, path] of [
      ['orders', `/users/${user.id}/orders`],
      ['payments', `/payments?orderId=${order.id}`],
      ['refunds', `/payments/${payment.id}/refunds`],
      ['products', '/products?sort=-id&pageSize=1'],
    ] as const) {
      const { data } = read(await get(t, token, path)) as { data: Record<string, unknown>[] };
      assert.ok(data.length > 0, path);
      for (const element of data) await expectMilliseconds(table, element);
    }
  });

  test('a whole second shows its .000; a value written with microseconds is stored rounded to milliseconds', async () => {
    const { user, token } = await createCustomer(t);
    const whole = await createOrderRow(t.db, user.id, { createdAt: '2026-02-01T00:00:00Z' });
    const micro = await createOrderRow(t.db, user.id, { createdAt: '2026-02-01T00:00:00.123456Z' });
    const tenths = await createOrderRow(t.db, user.id, { createdAt: '2026-02-01T00:00:00.1Z' });
    const expected = new Map([
      [whole, '2026-02-01T00:00:00.000Z'],
      [micro, '2026-02-01T00:00:00.123Z'],
      [tenths, '2026-02-01T00:00:00.100Z'],
    ]);
    for (const [id, createdAt] of expected) {
      const order = read(await get(t, token, `/orders/${id}`));
      assert.equal(order.createdAt, createdAt);
      await expectMilliseconds('orders', order);
    }
  });
});
