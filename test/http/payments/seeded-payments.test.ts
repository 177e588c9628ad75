// The demo data is coherent as the API shows it: every seeded paid, shipped and delivered order has
// exactly one succeeded payment of its total, through the demo client and the simulator, with
// nothing refunded; pending and cancelled (never paid) orders have none.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { DEMO_CUSTOMER_EMAILS, DEMO_STAFF_EMAIL, seedDemoData } from '../../../src/seed.ts';
import { findUserByEmail } from '../../../src/users/users.store.ts';
import { get } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import type { V1Payment as Payment } from '../../helpers/v1-types.ts';

const t = setUpTestApp();

/** What these checks read of a v1 order. */
interface Order {
  id: number;
  status: string;
  total: number;
  currency: string;
}

const PAID_STATUSES = ['paid', 'shipped', 'delivered'];

describe('seeded demo orders and their payments', () => {
  before(async () => {
    assert.equal((await seedDemoData(t.db)).seeded, true);
  });

  for (const email of DEMO_CUSTOMER_EMAILS) {
    test(`${email}: one succeeded payment for each paid, shipped or delivered order, none for the others`, async () => {
      const customer = (await findUserByEmail(t.db, email))!;
      const token = await t.token({ userId: customer.id });
      const orders = (await get(t, token, '/v1/orders?pageSize=100')).json().data as Order[];
      const paymentsResponse = await get(t, token, '/v1/payments?pageSize=100');
      assert.equal(paymentsResponse.statusCode, 200, paymentsResponse.body);
      const payments = paymentsResponse.json().data as Payment[];

      assert.deepEqual(orders.map((order) => order.status).sort(), ['cancelled', 'delivered', 'paid', 'pending', 'shipped']);
      const paidOrders = orders.filter((order) => PAID_STATUSES.includes(order.status));
      assert.deepEqual(
        payments
          .map(({ status, amount, currency, amountRefunded, orderId, customerId, declineCode }) => ({
            status,
            amount,
            currency,
            amountRefunded,
            orderId,
            customerId,
            declineCode,
          }))
          .sort((a, b) => a.orderId! - b.orderId!),
        paidOrders
          .map((order) => ({
            status: 'succeeded',
            amount: order.total,
            currency: order.currency,
            amountRefunded: 0,
            orderId: order.id,
            customerId: customer.id,
            declineCode: null,
          }))
          .sort((a, b) => a.orderId - b.orderId),
      );
      for (const payment of payments) {
        const refunds = await get(t, token, `/v1/payments/${payment.id}/refunds`);
        assert.equal(refunds.statusCode, 200, refunds.body);
        assert.equal(refunds.json().meta.total, 0);
      }
    });
  }

  test('each payment is stored as the payment flow makes it: the demo client, the simulator, its own processor reference', async () => {
    const { rows } = await t.db.query<{ clientId: string; processor: string; references: number; payments: number }>(
      `SELECT client_id AS "clientId", processor, count(DISTINCT processor_reference)::int AS "references", count(*)::int AS payments
         FROM payments GROUP BY client_id, processor`,
    );
    assert.deepEqual(rows, [{ clientId: 'orderpay-demo', processor: 'simulator', references: 9, payments: 9 }]);
    // Staff see the same nine: no payment without its order.
    const staff = (await findUserByEmail(t.db, DEMO_STAFF_EMAIL))!;
    const staffToken = await t.token({ userId: staff.id, staff: true });
    const all = (await get(t, staffToken, '/v1/payments?pageSize=100')).json();
    assert.equal(all.meta.total, 9);
    assert.ok(all.data.every((payment: Payment) => payment.orderId !== null));
  });
});
