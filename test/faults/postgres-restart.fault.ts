// Scenario 1: PostgreSQL restarted (pg_ctl restart -m fast: sessions cut, transactions rolled back)
// under a mixed load of orders and payments created with Idempotency-Key, and reads, spread over
// two orderpay processes. Nothing acknowledged is lost or done twice, the answers during the
// outage are 503 with Retry-After, and the service answers normally again within the bound. A
// webhook endpoint subscribed to every event receives each event the load made (at least once),
// the deliveries resuming after each restart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.ts';
import { withTargetDatabase } from '../cli/orderpay-process.ts';
import { insertWebhookEndpoint, startReceiver } from '../helpers/webhooks.ts';
import { DATABASE_RECOVERY_MS, DRAIN_MS, INTERRUPTED_OPERATION_MS } from './bounds.ts';
import { timeToRecovery } from './clients.ts';
import { createSlot, PORTS, prepareWorld } from './orderpay-fleet.ts';
import { assertEveryEventDelivered, assertInvariantsHeld, assertWithin, clusterForFile, seedScenario, startMixedLoad } from './scenario.ts';

const seeded = seedScenario(import.meta.url);

test(`PostgreSQL restarted with -m fast under mixed load over two orderpay processes: nothing lost or doubled, 503 (never 500) meanwhile, recovered within ${DATABASE_RECOVERY_MS} ms`, async () => {
  const cluster = await clusterForFile();
  const world = await prepareWorld(cluster, { pendingOrders: 60 });
  const receiver = await startReceiver(PORTS.webhookReceiver);
  const endpoint = await withTargetDatabase(world.inspection, (db) =>
    insertWebhookEndpoint(db, loadConfig({ NODE_ENV: 'test' }), { url: receiver.url }),
  );
  // Delivering to 127.0.0.1 takes ORDERPAY_WEBHOOKS_ALLOW_PRIVATE, which production refuses.
  const webhooks = { NODE_ENV: 'test', ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true', ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '100' };
  const slots = [createSlot(world, PORTS.first, webhooks), createSlot(world, PORTS.second, webhooks)];
  const { ledger, clients, load } = await startMixedLoad(seeded, world, slots, { clients: 8, keyPrefix: 'restart', maxThinkMs: 80 });

  const recoveries: number[] = [];
  for (let restart = 0; restart < 2; restart++) {
    // Apart by more than an interrupted write takes, so that none is interrupted twice.
    await sleep(restart === 0 ? 1500 : INTERRUPTED_OPERATION_MS);
    ledger.mark(`restart ${restart}`);
    await cluster.restart('fast');
    const accepting = ledger.now();
    const recovered = await timeToRecovery(clients, accepting);
    assertWithin(
      `restart ${restart}: a normal request succeeded after PostgreSQL accepted connections again`,
      recovered,
      DATABASE_RECOVERY_MS,
      seeded,
    );
    recoveries.push(recovered!);
  }
  await sleep(1500);
  await load.stop();

  await assertInvariantsHeld('postgres-restart', seeded, world, ledger, slots[0]!.url, {
    recoveryMs: recoveries,
    longestOperationMs: ledger.longest.ms,
  });
  assertWithin(`the longest operation (${ledger.longest.op})`, ledger.longest.ms, INTERRUPTED_OPERATION_MS, seeded);
  await assertEveryEventDelivered(world, endpoint, receiver);
  await receiver.close();
  for (const slot of slots) {
    const { exit } = await slot.terminate(DRAIN_MS);
    assert.deepEqual(exit, { code: 0, signal: null }, slot.output());
  }
});
