// Scenario: payments through the Stripe adapter (a local server that speaks Stripe's API,
// test/helpers/stripe-stand-in.ts) while PostgreSQL is restarted with -m immediate as they wait
// on Stripe: phase 2 holds no transaction, so the crash interrupts none of it, and phase 3 commits
// once the database is back (the client's retry with its key, or the completer). Each order is
// paid with two keys at once (a double click). Afterwards every order is paid exactly once, and
// Stripe was asked for at most one PaymentIntent per order.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { withTargetDatabase } from '../cli/orderpay-process.ts';
import { startStripeStandIn } from '../helpers/stripe-stand-in.ts';
import { eventually } from '../helpers/webhooks.ts';
import { DRAIN_MS } from './bounds.ts';
import { createLedger, type Operation, payOrderOperation, sendUntilAnswered } from './clients.ts';
import { createSlot, PORTS, prepareWorld, type PendingOrder } from './orderpay-fleet.ts';
import { clusterForFile } from './scenario.ts';

const ORDERS = 12;
/** How long Stripe takes to answer each call: the restart comes while they wait. */
const STRIPE_LATENCY_MS = 1500;
const WEBHOOK_SECRET = `whsec_${randomUUID().replaceAll('-', '')}`;

/** Paying the order under one key, through Stripe: v3, with a payment method. */
function payThroughStripe(order: PendingOrder, key: string): Operation {
  const operation = payOrderOperation(key, order);
  return { ...operation, path: '/v3/payments', body: { ...(operation.body as object), paymentMethod: 'pm_card_visa' } };
}

/**
 * The refusal of a second key's payment, as the ledger records it (the body cut short): the other
 * key's is in progress, or has paid the order.
 */
const OTHER_KEY_PAID = /: 409 \{"type":"[^"]*\/problems\/payment-order-(payment-in-progress|not-payable)"/;

test(`PostgreSQL crashes (-m immediate) while ${ORDERS} orders, each paid with two keys at once, wait on Stripe: each paid exactly once, one PaymentIntent per order`, async () => {
  const cluster = await clusterForFile();
  const world = await prepareWorld(cluster, { pendingOrders: ORDERS, database: 'orderpay_stripe' });
  const stripe = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  const slot = createSlot(world, PORTS.third, {
    ORDERPAY_PAYMENT_PROCESSOR: 'stripe',
    STRIPE_SECRET_KEY: 'sk_test_orderpay',
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    ORDERPAY_STRIPE_API_BASE: stripe.url,
  });
  await slot.start();
  try {
    stripe.slowNext(ORDERS * 4, STRIPE_LATENCY_MS);
    // Clients as the fault suite's: the same key again after a network error, a 503 or a 409 "key
    // in use", waiting the Retry-After they are told, until they get an answer.
    const ledger = createLedger();
    const clients = { servers: [slot.url], token: world.token, ledger };
    const paying = world.pendingOrders.flatMap((order) =>
      [randomUUID(), randomUUID()].map((key) => sendUntilAnswered(clients, payThroughStripe(order, key), 0)),
    );
    // Every order's first key has reached Stripe (its PaymentIntent created or on its way).
    await stripe.requestsReached(ORDERS);
    await cluster.restart('immediate');
    const answers = await Promise.all(paying);

    // A payment answered processing is finished by the completer once the database is back.
    const orderIds = world.pendingOrders.map((o) => o.id);
    const unpaid = () =>
      withTargetDatabase(world.inspection, async (db) => {
        const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM orders WHERE id = ANY($1) AND status <> 'paid'", [
          orderIds,
        ]);
        return rows[0]!.n;
      });
    await eventually(async () => (await unpaid()) === 0, 'every order paid', 60_000);

    const rows = await withTargetDatabase(
      world.inspection,
      async (db) =>
        (
          await db.query<{ orderId: number; status: string; reference: string }>(
            'SELECT order_id AS "orderId", status, reference FROM payments WHERE order_id = ANY($1) ORDER BY id',
            [orderIds],
          )
        ).rows,
    );
    for (const order of world.pendingOrders) {
      const payments = rows.filter((p) => p.orderId === order.id);
      assert.deepEqual(
        payments.map((p) => p.status),
        ['succeeded'],
        `order ${order.id}: one payment, succeeded`,
      );
      assert.equal(stripe.intentsByReference(payments[0]!.reference), 1, `order ${order.id}: one PaymentIntent`);
    }
    assert.equal(stripe.intents().length, ORDERS, 'no PaymentIntent beyond one per order');
    // Each order: one key got its payment, the other a refusal (in progress, or paid already).
    const created = answers.filter((answer) => answer?.status === 201);
    assert.equal(new Set(created.map((answer) => (JSON.parse(answer!.body) as { id: number }).id)).size, ORDERS);
    assert.equal(answers.length - created.length, ORDERS);
    assert.deepEqual(
      ledger.violations.filter((violation) => !OTHER_KEY_PAID.test(violation)),
      [],
      'no answer but a 201, a retry or the refusal of the second key',
    );
    assert.deepEqual(ledger.unanswered, []);
  } finally {
    const { exit } = await slot.terminate(DRAIN_MS);
    await stripe.close();
    assert.deepEqual(exit, { code: 0, signal: null }, slot.output());
  }
});
