// Scenario 3, the randomised crash run: 8 clients make 300 payments (a third of them paying a
// pending order) with Idempotency-Keys over two orderpay processes on one database, while the
// orderpay processes are SIGKILLed 5 times and PostgreSQL is restarted twice with -m immediate
// (a crash: no checkpoint, recovery from the WAL), at moments drawn from the seed. Clients retry
// with the same key on network errors, 503 and 409 "in use" until they get an answer. Afterwards
// every payment acknowledged exists exactly once, and nothing else does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DATABASE_RECOVERY_MS, DRAIN_MS, RESTART_MS } from './bounds.ts';
import { createLedger, paymentOperation, payOrderOperation, startLoad, timeToRecovery, type Operation, type Random } from './clients.ts';
import { createSlot, PORTS, prepareWorld, type OrderpaySlot } from './orderpay-fleet.ts';
import { assertInvariantsHeld, assertWithin, clusterForFile, seedScenario } from './scenario.ts';

const CLIENTS = 8;
const PAYMENTS = 300;
const ORDER_PAYMENTS = 100;
const KILLS = 5;
const DATABASE_CRASHES = 2;

const seeded = seedScenario(import.meta.url);

function shuffle<T>(random: Random, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.int(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

type Fault = { at: number; kind: 'kill' | 'database' };

/** The faults, each at a number of operations started, drawn from the seed. */
function drawFaults(random: Random): Fault[] {
  const moments = new Set<number>();
  while (moments.size < KILLS + DATABASE_CRASHES) moments.add(15 + random.int(PAYMENTS - 30));
  const kinds = shuffle(random, [...Array(KILLS).fill('kill'), ...Array(DATABASE_CRASHES).fill('database')]);
  return [...moments].sort((a, b) => a - b).map((at, i) => ({ at, kind: kinds[i] }));
}

test(`randomised crash run: ${CLIENTS} clients, ${PAYMENTS} payments, ${KILLS} SIGKILLs of orderpay, ${DATABASE_CRASHES} immediate PostgreSQL restarts, two processes on one database: every payment exactly once`, async () => {
  const cluster = await clusterForFile();
  const world = await prepareWorld(cluster, { pendingOrders: ORDER_PAYMENTS });
  const slots = [createSlot(world, PORTS.first), createSlot(world, PORTS.second)];
  await Promise.all(slots.map((slot) => slot.start()));

  const operations: Operation[] = shuffle(seeded.random, [
    ...world.pendingOrders.map((order, i) => payOrderOperation(`crash-${seeded.seed}-order-${i}`, order)),
    ...Array.from({ length: PAYMENTS - ORDER_PAYMENTS }, (_, i) => paymentOperation(seeded.random, `crash-${seeded.seed}-${i}`)),
  ]);
  const faultRandom = seeded.stream(2);
  const faults = drawFaults(faultRandom);
  console.log(`faults at operations started: ${faults.map((f) => `${f.kind}@${f.at}`).join(', ')}`);

  const ledger = createLedger();
  const clients = { servers: slots.map((slot) => slot.url), token: world.token, ledger };
  const think = seeded.stream(1);
  let next = 0;
  const load = startLoad({ ...clients, clients: CLIENTS, next: () => operations[next++], thinkMs: () => think.int(500) });

  const restarts: Promise<number | undefined>[] = [];
  const databaseRecoveries: (number | undefined)[] = [];
  const restartAfterKill = async (slot: OrderpaySlot): Promise<number | undefined> => {
    await sleep(200 + faultRandom.int(800));
    const spawned = ledger.now();
    await slot.start();
    return timeToRecovery({ ...clients, servers: [slot.url] }, spawned);
  };
  for (const fault of faults) {
    while (load.started < fault.at && load.finished < PAYMENTS) await sleep(5);
    await sleep(faultRandom.int(200));
    ledger.mark(`${fault.kind} at ${load.started}`);
    if (fault.kind === 'database') {
      await cluster.restart('immediate');
      databaseRecoveries.push(await timeToRecovery(clients, ledger.now()));
      continue;
    }
    let running = slots.filter((slot) => slot.running);
    while (running.length === 0) {
      await sleep(50);
      running = slots.filter((slot) => slot.running);
    }
    const victim = running[faultRandom.int(running.length)]!;
    assert.deepEqual(await victim.kill(), { code: null, signal: 'SIGKILL' });
    restarts.push(restartAfterKill(victim));
  }
  await load.done;
  const restartTimes = await Promise.all(restarts);

  const figures = await assertInvariantsHeld('crash-run', seeded, world, ledger, slots[0]!.url, {
    faults: faults.map((f) => `${f.kind}@${f.at}`),
    databaseRecoveryMs: databaseRecoveries,
    restartMs: restartTimes,
    failedStarts: slots.map((slot) => slot.failedStarts),
    longestOperationMs: ledger.longest.ms,
  });
  assert.equal(ledger.created.size, PAYMENTS, 'every payment acknowledged');
  assert.equal(figures.database.payments, PAYMENTS, 'one payment row per logical payment');
  for (const [i, ms] of databaseRecoveries.entries()) assertWithin(`recovery from database crash ${i}`, ms, DATABASE_RECOVERY_MS, seeded);
  for (const [i, ms] of restartTimes.entries()) assertWithin(`killed process ${i} serving again after its restart`, ms, RESTART_MS, seeded);
  for (const slot of slots) assert.deepEqual((await slot.terminate(DRAIN_MS)).exit, { code: 0, signal: null }, slot.output());
});
