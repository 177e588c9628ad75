// Scenario 5: a slow-client flood. Hundreds of connections trickle their requests a byte a second
// (headers that never end, bodies that never complete) while normal clients keep working: their
// operations are answered within the bound, the server cuts every slow connection within its
// bound (the server's headers and request timeouts), a SIGTERM with such requests stalled still exits 0 within the drain bound, and a process
// whose file descriptors the flood exhausts answers 503, never 500, and recovers when they free up.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DRAIN_MS,
  EXHAUSTION_RECOVERY_MS,
  OPERATION_DURING_FLOOD_MS,
  RESTART_MS,
  SLOW_BODY_CUT_MS,
  SLOW_HEADERS_CUT_MS,
} from './bounds.ts';
import { createLedger, mixedOperations, startLoad, timeToRecovery, type Ledger, type Operation } from './clients.ts';
import { createSlot, PORTS, prepareWorld, type OrderpaySlot, type World } from './orderpay-fleet.ts';
import { adminQuery } from './postgres-cluster.ts';
import { assertInvariantsHeld, assertWithin, clusterForFile, seedScenario } from './scenario.ts';
import { floodSize, startSlowFlood, type SlowKind } from './slow-clients.ts';

const NORMAL_CLIENTS = 4;
/** The descriptor limit given to the process whose descriptors the flood exhausts. */
const LOW_FD_LIMIT = 256;

const seeded = seedScenario(import.meta.url);
const cluster = await clusterForFile();

/** The normal clients of one test: `stream` picks the seed's stream of their think times. */
function normalLoad(world: World, slot: OrderpaySlot, ledger: Ledger, next: () => Operation | undefined, stream: number) {
  const think = seeded.stream(stream);
  return startLoad({ servers: [slot.url], token: world.token, ledger, clients: NORMAL_CLIENTS, next, thinkMs: () => 20 + think.int(100) });
}

/** One source of operations per world: each pending order is paid by one operation only. */
const operationsFor = (world: World, name: string) => mixedOperations(seeded.random, world, { keyPrefix: `${name}-${seeded.seed}` });

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

test(`a flood of ${floodSize()} slow connections: normal operations answered within ${OPERATION_DURING_FLOOD_MS} ms; slow headers cut within ${SLOW_HEADERS_CUT_MS} ms, slow bodies within ${SLOW_BODY_CUT_MS} ms`, async () => {
  const world = await prepareWorld(cluster, { pendingOrders: 100, database: 'flood' });
  const slot = createSlot(world, PORTS.first);
  await slot.start();
  const ledger = createLedger();
  const load = normalLoad(world, slot, ledger, operationsFor(world, 'flood'), 1);
  await sleep(500);
  ledger.mark('flood');
  const flood = await startSlowFlood({ port: slot.port, connections: floodSize(), token: world.token });
  const deadline = performance.now() + SLOW_BODY_CUT_MS + 2_000;
  while (flood.open() > 0 && performance.now() < deadline) await sleep(250);
  const stillOpen = { headers: flood.open('headers'), body: flood.open('body') };
  flood.end();
  await sleep(500);
  await load.stop();

  const cut = (kind: SlowKind, boundMs: number) => {
    const closed = flood.closedAfterMs(kind);
    const total = closed.length + stillOpen[kind];
    return {
      total,
      inTime: closed.filter((ms) => ms <= boundMs).length,
      afterMs: closed.length > 0 ? { p50: percentile(closed, 0.5), max: Math.max(...closed) } : null,
    };
  };
  const headers = cut('headers', SLOW_HEADERS_CUT_MS);
  const bodies = cut('body', SLOW_BODY_CUT_MS);
  await assertInvariantsHeld('slow-client-flood', seeded, world, ledger, slot.url, {
    slowConnections: flood.size,
    slowHeaders: headers,
    slowBodies: bodies,
    stillOpenAtEnd: stillOpen,
    serverAnswers: flood.answers(),
    longestOperationMs: ledger.longest.ms,
  });
  assert.ok(slot.running, `the process survived the flood:\n${slot.output()}`);
  assertWithin(
    `the longest normal operation during the flood (${ledger.longest.op})`,
    ledger.longest.ms,
    OPERATION_DURING_FLOOD_MS,
    seeded,
  );
  assert.equal(
    headers.inTime,
    headers.total,
    `${headers.total - headers.inTime} of ${headers.total} connections trickling their headers were not cut within ${SLOW_HEADERS_CUT_MS} ms`,
  );
  assert.equal(
    bodies.inTime,
    bodies.total,
    `${bodies.total - bodies.inTime} of ${bodies.total} connections trickling their body were not cut within ${SLOW_BODY_CUT_MS} ms`,
  );
  assert.deepEqual((await slot.terminate(DRAIN_MS)).exit, { code: 0, signal: null }, slot.output());
});

test(`SIGTERM while slow requests are stalled: exit 0 within ${DRAIN_MS} ms, nothing lost or doubled`, async () => {
  const world = await prepareWorld(cluster, { pendingOrders: 100, database: 'stalled' });
  const slot = createSlot(world, PORTS.second);
  await slot.start();
  const ledger = createLedger();
  const load = normalLoad(world, slot, ledger, operationsFor(world, 'stalled'), 2);
  await sleep(500);
  const flood = await startSlowFlood({ port: slot.port, connections: 20, token: world.token });
  await sleep(1000);
  ledger.mark('SIGTERM');
  const { exit, ms } = await slot.terminate(DRAIN_MS + 10_000);
  flood.end();
  // Started again while the clients retry, so that their operations are answered.
  const spawned = ledger.now();
  await slot.start();
  assertWithin(
    'the process serving again after its restart',
    await timeToRecovery({ servers: [slot.url], token: world.token, ledger }, spawned),
    RESTART_MS,
    seeded,
  );
  await load.stop();
  await assertInvariantsHeld('sigterm-with-stalled-requests', seeded, world, ledger, slot.url, { exit, drainMs: Math.round(ms) });
  assert.deepEqual(exit, { code: 0, signal: null }, `exit after SIGTERM with stalled requests, after ${Math.round(ms)} ms`);
  assertWithin('drain with stalled requests', Math.round(ms), DRAIN_MS, seeded);
  assert.deepEqual((await slot.terminate(DRAIN_MS)).exit, { code: 0, signal: null }, slot.output());
});

test(`a flood beyond the process's file descriptor limit (${LOW_FD_LIMIT}) while its database connections drop: 503 never 500, the process survives and recovers within ${EXHAUSTION_RECOVERY_MS} ms`, async () => {
  const world = await prepareWorld(cluster, { pendingOrders: 100, database: 'descriptors' });
  const slot = createSlot(world, PORTS.third);
  await slot.start();
  // Lowered on the running process: the machine's limit is too high to reach with a test's flood.
  execFileSync('prlimit', [`--pid=${slot.pid}`, `--nofile=${LOW_FD_LIMIT}:${LOW_FD_LIMIT}`]);
  const ledger = createLedger();
  const operations = operationsFor(world, 'descriptors');
  const warmUp = normalLoad(world, slot, ledger, operations, 3);
  await sleep(500);
  await warmUp.stop();
  ledger.mark('flood');
  const flood = await startSlowFlood({ port: slot.port, connections: LOW_FD_LIMIT + 64, token: world.token });
  // Its pooled database connections cut (their descriptors freed), and the flood takes those too:
  // the next request needs a new socket to the database, and none is left.
  await adminQuery(cluster, ["SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'orderpay'"]);
  await sleep(300);
  const topUp = await startSlowFlood({ port: slot.port, connections: 64, token: world.token });
  const load = normalLoad(world, slot, ledger, operations, 4);
  await sleep(3000);
  ledger.mark('flood ended');
  flood.end();
  topUp.end();
  const ended = ledger.now();
  const recovered = await timeToRecovery({ servers: [slot.url], token: world.token, ledger }, ended, 30_000);
  await sleep(1000);
  await load.stop();

  assert.ok(slot.running, `the process survived running out of file descriptors; its last output:\n${slot.output().slice(-1500)}`);
  await assertInvariantsHeld('descriptor-exhaustion', seeded, world, ledger, slot.url, {
    slowConnections: flood.size + topUp.size,
    cutAtOnce: [...flood.closedAfterMs(), ...topUp.closedAfterMs()].filter((ms) => ms < 1000).length,
    emfileInLog: (slot.output().match(/EMFILE/g) ?? []).length,
    recoveryMs: recovered,
  });
  assertWithin('recovery once the flood ended', recovered, EXHAUSTION_RECOVERY_MS, seeded);
  assert.deepEqual((await slot.terminate(DRAIN_MS)).exit, { code: 0, signal: null }, slot.output());
});
