// Scenario 4: the database's connections exhausted. A transaction of the test holds a lock that
// every payment waits for, so payments hold their connections until the statement timeout while
// many clients keep sending: one process, with a pool of 2, runs out of pooled connections (its
// requests wait for one, then give up); the other, whose pool is larger than what the server
// admits, runs into PostgreSQL's max_connections. Either way the answer is 503 with Retry-After,
// never 500, and once the lock is released both answer normally within the bound.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { DRAIN_MS, EXHAUSTION_RECOVERY_MS } from './bounds.ts';
import { timeToRecovery } from './clients.ts';
import { createSlot, PORTS, prepareWorld } from './orderpay-fleet.ts';
import { assertInvariantsHeld, assertWithin, clusterForFile, seedScenario, startMixedLoad } from './scenario.ts';

// Unprivileged roles (orderpay's) may use max_connections - superuser_reserved_connections = 11.
const MAX_CONNECTIONS = 14;
const RESERVED = 3;
const CLIENTS = 24;
const LOCK_HELD_MS = 4_000;
const TIMEOUTS = { ORDERPAY_DB_CONNECT_TIMEOUT_MS: '1000', ORDERPAY_DB_STATEMENT_TIMEOUT_MS: '2000' };
// node-postgres names its connections from PGAPPNAME: how the pool of 2 is told apart in pg_stat_activity.
const SMALL_POOL = 'orderpay-pool-of-2';

const seeded = seedScenario(import.meta.url);

test(`connections exhausted (a pool of 2; a pool larger than max_connections ${MAX_CONNECTIONS}) under many slow requests: 503 with Retry-After (never 500), nothing lost or doubled, recovered within ${EXHAUSTION_RECOVERY_MS} ms`, async () => {
  const cluster = await clusterForFile({ max_connections: MAX_CONNECTIONS, superuser_reserved_connections: RESERVED });
  const world = await prepareWorld(cluster, { pendingOrders: 80 });
  const small = createSlot(world, PORTS.first, { ...TIMEOUTS, ORDERPAY_DB_POOL_MAX: '2', PGAPPNAME: SMALL_POOL });
  const large = createSlot(world, PORTS.second, { ...TIMEOUTS, ORDERPAY_DB_POOL_MAX: '30' });
  const slots = [small, large];
  // The pool of 2 opens its connections before the larger pool can take every slot PostgreSQL
  // admits: refused there (53300) from the start, it would never run out of connections it holds.
  await small.start();
  await fillPool(small.url, world.token, cluster.adminUrl('orderpay'));
  const { ledger, clients, load } = await startMixedLoad(seeded, world, slots, { clients: CLIENTS, keyPrefix: 'exhaust', maxThinkMs: 50 });

  await sleep(1000);
  // Payments insert into payments: SHARE ROW EXCLUSIVE makes each wait, holding its connection.
  const locker = new pg.Client({ connectionString: cluster.adminUrl('orderpay') });
  await locker.connect();
  let released: number;
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE payments IN SHARE ROW EXCLUSIVE MODE');
    ledger.mark('locked');
    await sleep(LOCK_HELD_MS);
    await locker.query('COMMIT');
    released = ledger.now();
    ledger.mark('released');
  } finally {
    await locker.end();
  }
  const recoveries = await Promise.all(slots.map((slot) => timeToRecovery({ ...clients, servers: [slot.url] }, released)));
  await sleep(1500);
  await load.stop();

  await assertInvariantsHeld('connection-exhaustion', seeded, world, ledger, small.url, {
    recoveryMs: recoveries,
    longestOperationMs: ledger.longest.ms,
  });
  for (const [i, slot] of slots.entries())
    assertWithin(`recovery of the process on ${slot.port}`, recoveries[i], EXHAUSTION_RECOVERY_MS, seeded);
  // Evidence that both kinds of exhaustion happened (each was answered 503, as checked above).
  assert.match(small.output(), /timeout exceeded when trying to connect/, 'the pool of 2 ran out and requests gave up waiting');
  assert.match(
    cluster.log(),
    /too many clients already|remaining connection slots are reserved/,
    'PostgreSQL refused connections at max_connections',
  );
  for (const slot of slots) assert.deepEqual((await slot.terminate(DRAIN_MS)).exit, { code: 0, signal: null }, slot.output());
});

/** Sends concurrent reads to the pool of 2 until PostgreSQL shows both of its connections open. */
async function fillPool(url: string, token: string, adminUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    for (let attempt = 0; attempt < 50; attempt++) {
      const reads = Array.from({ length: 6 }, () =>
        fetch(`${url}/v1/orders`, { headers: { authorization: `Bearer ${token}` } }).then((response) => response.arrayBuffer()),
      );
      await Promise.all(reads);
      const { rows } = await admin.query<{ open: number }>(
        'SELECT count(*)::int AS open FROM pg_stat_activity WHERE application_name = $1',
        [SMALL_POOL],
      );
      if ((rows[0]?.open ?? 0) >= 2) return;
    }
    assert.fail('the pool of 2 did not open both of its connections');
  } finally {
    await admin.end();
  }
}
