// Scenario: payments through the Stripe adapter (a local server that speaks Stripe's API,
// test/helpers/stripe-stand-in.ts) while PostgreSQL is restarted with -m immediate as they wait
// on Stripe: phase 2 holds no transaction, so the crash interrupts none of it, and phase 3 commits
// once the database is back (the client's retry with its key, or the completer). Each order is
// paid with two keys at once (a double click). Afterwards every order is paid exactly once, and
// Stripe was asked for at most one PaymentIntent per order.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { withTargetDatabase } from '../cli/orderpay-process.ts';
import { startStripeStandIn } from '../helpers/stripe-stand-in.ts';
import { DRAIN_MS } from './bounds.ts';
import { createSlot, PORTS, prepareWorld, type PendingOrder, type World } from './orderpay-fleet.ts';
import { clusterForFile } from './scenario.ts';

const ORDERS = 12;
/** How long Stripe takes to answer each call: the restart comes while they wait. */
const STRIPE_LATENCY_MS = 1500;
const WEBHOOK_SECRET = `whsec_${randomUUID().replaceAll('-', '')}`;

/** What one key's requests ended with: the payment (its status when answered) or the refusal of a second key. */
type Outcome = { paymentId: number; status: string } | { refused: string };

/**
 * Pays the order under one key as a client does: the same request again after a network error, a
 * 503 or a 409 "key in use", until it gets an answer that is the payment's (201) or a refusal of
 * this key's payment because the other key's is in progress or paid (409).
 */
async function pay(url: string, world: World, order: PendingOrder, key: string): Promise<Outcome> {
  const body = JSON.stringify({ amount: { value: order.total, currency: 'EUR' }, orderId: order.id, paymentMethod: 'pm_card_visa' });
  for (;;) {
    const response = await fetch(`${url}/v3/payments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body,
    }).catch(() => undefined);
    if (response?.status === 201) {
      const payment = (await response.json()) as { id: number; status: string };
      return { paymentId: payment.id, status: payment.status };
    }
    const problem = response ? ((await response.json().catch(() => ({}))) as { code?: string }) : {};
    if (response?.status === 409 && problem.code !== 'IDEMPOTENCY_KEY_IN_USE') return { refused: String(problem.code) };
    assert.ok(!response || [409, 503].includes(response.status), `unexpected ${response?.status} ${JSON.stringify(problem)}`);
    await sleep(200);
  }
}

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
    const paying = world.pendingOrders.flatMap((order) => [randomUUID(), randomUUID()].map((key) => pay(slot.url, world, order, key)));
    // Every order's first key has reached Stripe (its PaymentIntent created or on its way).
    while (stripe.requests.length < ORDERS) await sleep(20);
    await cluster.restart('immediate');
    const outcomes = await Promise.all(paying);

    // A payment answered processing is finished by the completer: wait for every order to be paid.
    const orderIds = world.pendingOrders.map((o) => o.id);
    const unpaid = () =>
      withTargetDatabase(world.inspection, async (db) => {
        const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM orders WHERE id = ANY($1) AND status <> 'paid'", [
          orderIds,
        ]);
        return rows[0]!.n;
      });
    while ((await unpaid()) > 0) await sleep(250);

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
    const answered = outcomes.filter((o) => 'paymentId' in o);
    assert.equal(new Set(answered.map((o) => o.paymentId)).size, ORDERS);
    assert.equal(outcomes.length - answered.length, ORDERS);
  } finally {
    const { exit } = await slot.terminate(DRAIN_MS);
    await stripe.close();
    assert.deepEqual(exit, { code: 0, signal: null }, slot.output());
  }
});
