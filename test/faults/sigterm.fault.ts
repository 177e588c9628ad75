// Scenario 2: orderpay stopped with SIGTERM under load, one process after the other (a rolling
// restart), while the clients keep sending to both. Each stopped process finishes what it had
// accepted and exits 0 within the drain bound; the clients carry on against the other one; the
// restarted process serves within its bound; nothing acknowledged is lost or done twice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DRAIN_MS, INTERRUPTED_OPERATION_MS, RESTART_MS } from './bounds.ts';
import { timeToRecovery } from './clients.ts';
import { createSlot, PORTS, prepareWorld } from './orderpay-fleet.ts';
import { assertInvariantsHeld, assertWithin, clusterForFile, seedScenario, startMixedLoad } from './scenario.ts';

const seeded = seedScenario(import.meta.url);

test(`SIGTERM of each of two orderpay processes under load: exit 0 within ${DRAIN_MS} ms, nothing lost or doubled, 503 (never 500), serving again within ${RESTART_MS} ms`, async () => {
  const cluster = await clusterForFile();
  const world = await prepareWorld(cluster, { pendingOrders: 60 });
  const slots = [createSlot(world, PORTS.first), createSlot(world, PORTS.second)];
  const { ledger, clients, load } = await startMixedLoad(seeded, world, slots, { clients: 8, keyPrefix: 'sigterm', maxThinkMs: 80 });

  const drains: number[] = [];
  const restarts: number[] = [];
  for (const slot of slots) {
    await sleep(1500);
    ledger.mark(`SIGTERM ${slot.port}`);
    const { exit, ms } = await slot.terminate(DRAIN_MS);
    assert.deepEqual(
      exit,
      { code: 0, signal: null },
      `SIGTERM of the process on ${slot.port} (replay: ${seeded.replay}):\n${slot.output()}`,
    );
    assertWithin(`drain of the process on ${slot.port}`, Math.round(ms), DRAIN_MS, seeded);
    drains.push(Math.round(ms));
    const spawned = ledger.now();
    await slot.start();
    const serving = await timeToRecovery({ ...clients, servers: [slot.url] }, spawned);
    assertWithin(`the process on ${slot.port} serving again after its restart`, serving, RESTART_MS, seeded);
    restarts.push(serving!);
  }
  await sleep(1000);
  await load.stop();

  await assertInvariantsHeld('sigterm', seeded, world, ledger, slots[0]!.url, {
    drainMs: drains,
    restartMs: restarts,
    longestOperationMs: ledger.longest.ms,
  });
  assertWithin(`the longest operation (${ledger.longest.op})`, ledger.longest.ms, INTERRUPTED_OPERATION_MS, seeded);
  for (const slot of slots) assert.deepEqual((await slot.terminate(DRAIN_MS)).exit, { code: 0, signal: null }, slot.output());
});
