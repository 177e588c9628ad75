// Scenario: orderpay run wide, as docs/deploy.md describes it. A PostgreSQL primary and a streaming
// replica of their own, PgBouncer in transaction mode in front of the primary, a Redis, three
// orderpay processes (ORDERPAY_DB_POOLER=transaction, migrations over ORDERPAY_DB_DIRECT_URL,
// collection reads from the replica) and HAProxy balancing them with health checks on /readyz.
// Under a mixed load through the balancer (orders, payments with keys, reads, a webhook endpoint
// subscribed): one process killed with SIGKILL, PgBouncer restarted, the primary restarted, the
// replica stopped, and a rolling restart of the three. Nothing acknowledged is lost or done twice,
// every event is delivered, no 5xx but 503 with Retry-After, each outage as short as measured;
// and with the replica's replay paused on purpose, a write through one process is read back
// through another.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { killRemaining, withTargetDatabase } from '../cli/orderpay-process.ts';
import { startPgBouncer } from '../helpers/pgbouncer.ts';
import { eventually, insertWebhookEndpoint, startReceiver } from '../helpers/webhooks.ts';
import { DATABASE_RECOVERY_MS, DRAIN_MS, INTERRUPTED_OPERATION_MS } from './bounds.ts';
import { createLedger, mixedOperations, sendUntilAnswered, startLoad, timeToRecovery, type Operation } from './clients.ts';
import { startHaproxy, startRedis } from './daemons.ts';
import { createSlot, PORTS, prepareWorld, type OrderpaySlot } from './orderpay-fleet.ts';
import { CLUSTER_PORT, startStandby } from './postgres-cluster.ts';
import { assertEveryEventDelivered, assertInvariantsHeld, assertWithin, clusterForFile, seedScenario } from './scenario.ts';

const seeded = seedScenario(import.meta.url);

const TOPOLOGY_PORTS = { standby: CLUSTER_PORT + 1, pgbouncer: 29710, redis: 29711, balancer: 29712, balancerStats: 29713 } as const;
/** The staleness bound of the scenario's processes: the replica may be this far behind and serve. */
const MAX_LAG_MS = 10_000;
/** How long a process taken out of the balancer may take to be put back in (health checks every 200 ms). */
const BALANCER_RISE_MS = 3_000;

const REPLICA_READS = /^orderpay_db_collection_reads_total\{target="replica"\} (\d+)/gm;
const PRIMARY_READS = /^orderpay_db_collection_reads_total\{target="primary"\} (\d+)/gm;

/** Sums a counter's samples with the given label text from each process's /metrics. */
async function sumMetric(slots: OrderpaySlot[], line: RegExp): Promise<number> {
  let total = 0;
  for (const slot of slots) {
    const text = await (await fetch(`${slot.url}/metrics`)).text();
    for (const match of text.matchAll(line)) total += Number(match[1]);
  }
  return total;
}

/** The replica's replay delay (ms; 0 when it has replayed all it received), sampled until stopped. */
function sampleReplicaLag(url: string): { stop(): Promise<number[]> } {
  const samples: number[] = [];
  let stopped = false;
  const run = (async () => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    let connected = false;
    while (!stopped) {
      try {
        if (!connected) {
          await client.connect();
          connected = true;
        }
        const { rows } = await client.query<{ ms: number | null }>(
          `SELECT CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
             ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000 END::float8 AS ms`,
        );
        if (rows[0]!.ms !== null) samples.push(Math.round(rows[0]!.ms));
      } catch {
        // The replica is stopped on purpose in one phase: no sample then.
        break;
      }
      await sleep(200);
    }
    await client.end().catch(() => undefined);
  })();
  return {
    async stop() {
      stopped = true;
      await run;
      return samples;
    },
  };
}

function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

test('run wide: three processes behind HAProxy, PgBouncer in transaction mode, a streaming replica, Redis — kill -9, pooler and primary restarts, the replica stopped, a rolling restart: nothing lost or doubled, every event delivered, 503 (never another 5xx) meanwhile, reads see their own writes', async (t) => {
  // Undone last first, whatever the outcome: the load and the processes before what they use.
  const cleanups: (() => unknown)[] = [];
  t.after(async () => {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  });
  const primary = await clusterForFile({ wal_level: 'replica', max_wal_senders: 5, wal_keep_size: "'64MB'" });
  const world = await prepareWorld(primary, { pendingOrders: 60 });
  const standby = await startStandby(primary, TOPOLOGY_PORTS.standby);
  cleanups.push(() => standby.destroy());
  const pooler = await startPgBouncer({
    port: TOPOLOGY_PORTS.pgbouncer,
    server: { host: '127.0.0.1', port: primary.port },
    users: ['orderpay', 'postgres'],
    poolSize: 20,
  });
  cleanups.push(() => pooler.stop());
  const redis = await startRedis(TOPOLOGY_PORTS.redis);
  cleanups.push(() => redis.stop());
  const receiver = await startReceiver(PORTS.webhookReceiver);
  cleanups.push(() => receiver.close());
  const endpoint = await withTargetDatabase(world.inspection, (db) =>
    insertWebhookEndpoint(db, loadConfig({ NODE_ENV: 'test' }), { url: receiver.url }),
  );

  const env = {
    NODE_ENV: 'test',
    DATABASE_URL: pooler.url('orderpay', 'orderpay'),
    ORDERPAY_DB_POOLER: 'transaction',
    ORDERPAY_DB_DIRECT_URL: world.target.env.DATABASE_URL!,
    ORDERPAY_READ_DATABASE_URL: standby.url('orderpay', 'orderpay'),
    ORDERPAY_READ_MAX_LAG_MS: String(MAX_LAG_MS),
    REDIS_URL: redis.url,
    ORDERPAY_DB_POOL_MAX: '8',
    ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
    ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '100',
  };
  const slots = [PORTS.first, PORTS.second, PORTS.third].map((port) => createSlot(world, port, env));
  cleanups.push(killRemaining);
  await Promise.all(slots.map((slot) => slot.start()));
  const balancer = await startHaproxy(TOPOLOGY_PORTS.balancer, TOPOLOGY_PORTS.balancerStats, [PORTS.first, PORTS.second, PORTS.third]);
  cleanups.push(() => balancer.stop());
  const replicaLag = sampleReplicaLag(standby.adminUrl('orderpay'));
  cleanups.push(() => replicaLag.stop());

  const ledger = createLedger();
  const clients = { servers: [balancer.url], token: world.token, ledger };
  const think = seeded.stream(1);
  const load = startLoad({
    ...clients,
    clients: 8,
    next: mixedOperations(seeded.random, world, { keyPrefix: `topology-${seeded.seed}` }),
    thinkMs: () => think.int(80),
  });
  cleanups.push(() => load.stop());

  const faults: { name: string; startMs: number; actMs: number; recoveredMs: number }[] = [];
  /**
   * Marks the fault and runs it; once it is over (a restart may take seconds), a normal request
   * through the balancer must succeed within boundMs.
   */
  async function fault(name: string, act: () => Promise<void>, boundMs: number): Promise<void> {
    await sleep(INTERRUPTED_OPERATION_MS / 4);
    ledger.mark(name);
    const startMs = ledger.now();
    await act();
    const actMs = ledger.now() - startMs;
    const recovered = await timeToRecovery(clients, ledger.now());
    assertWithin(`${name}: a normal request through the balancer succeeded once it was over`, recovered, boundMs, seeded);
    faults.push({ name, startMs, actMs, recoveredMs: recovered! });
  }

  await sleep(1500);
  await fault(
    'kill -9 of one process',
    async () => {
      await slots[1]!.kill();
      await slots[1]!.start();
    },
    DATABASE_RECOVERY_MS,
  );
  await fault('PgBouncer restarted', () => pooler.restart(), DATABASE_RECOVERY_MS);
  await fault('primary restarted (-m fast)', () => primary.restart('fast'), DATABASE_RECOVERY_MS);
  await fault(
    'replica stopped',
    async () => {
      await standby.stop('fast');
    },
    DATABASE_RECOVERY_MS,
  );
  await sleep(1000);
  await standby.start();
  // Counted per process: what the processes counted before they are restarted one by one.
  const readsBeforeRestart = {
    replica: await sumMetric(slots, REPLICA_READS),
    primary: await sumMetric(slots, PRIMARY_READS),
  };
  await fault(
    'rolling restart of the three processes',
    async () => {
      for (const [index, slot] of slots.entries()) {
        const { exit } = await slot.terminate(DRAIN_MS);
        assert.deepEqual(exit, { code: 0, signal: null }, slot.output());
        await slot.start();
        // Back in the balancer (its health check passed) before the next one goes.
        await eventually(() => balancer.isUp(index), `orderpay${index + 1} back in the balancer`, BALANCER_RISE_MS);
      }
    },
    DATABASE_RECOVERY_MS,
  );
  await sleep(1500);
  await load.stop();
  const lagSamples = await replicaLag.stop();
  const replicaReads = readsBeforeRestart.replica + (await sumMetric(slots, REPLICA_READS));
  const primaryReads = readsBeforeRestart.primary + (await sumMetric(slots, PRIMARY_READS));
  assert.ok(replicaReads > 0, `the replica served collection reads (replica ${replicaReads}, primary ${primaryReads})`);

  // Read-your-writes with the replica lagging on purpose: replay paused, an order placed through
  // one process and the collection read through another at once; the replica has not got it.
  const standbyAdmin = new pg.Client({ connectionString: standby.adminUrl('orderpay') });
  await standbyAdmin.connect();
  cleanups.push(() => standbyAdmin.end());
  await standbyAdmin.query('SELECT pg_wal_replay_pause()');
  const readBack: { order: number; seen: boolean; onReplica: boolean }[] = [];
  try {
    for (let i = 0; i < 9; i++) {
      const writer = slots[i % 3]!;
      const reader = slots[(i + 1) % 3]!;
      const op: Operation = {
        kind: 'create-order',
        method: 'POST',
        path: '/v2/orders',
        key: `topology-${seeded.seed}-read-back-${i}`,
        body: { items: [{ productId: world.productIds[0], qty: 1 }] },
      };
      const answer = await sendUntilAnswered({ servers: [writer.url], token: world.token, ledger }, op, 0);
      assert.equal(answer?.status, 201, answer?.body);
      const order = (JSON.parse(answer!.body) as { id: number }).id;
      const listed = await fetch(`${reader.url}/v2/orders?sort=-createdAt&pageSize=20`, {
        headers: { authorization: `Bearer ${world.token}`, accept: 'application/json' },
      });
      assert.equal(listed.status, 200);
      const ids = ((await listed.json()) as { data: { id: number }[] }).data.map((row) => row.id);
      const { rowCount } = await standbyAdmin.query('SELECT 1 FROM orders WHERE id = $1', [order]);
      readBack.push({ order, seen: ids.includes(order), onReplica: rowCount === 1 });
    }
  } finally {
    await standbyAdmin.query('SELECT pg_wal_replay_resume()');
  }
  // Replaying again, the replica is back in use, as every process's /metrics says.
  const replicaGauges = async () => {
    const text = await (await fetch(`${slots[0]!.url}/metrics`)).text();
    return { usable: /^orderpay_db_replica_usable 1$/m.test(text), lag: /^orderpay_db_replica_lag_bytes \d+$/m.test(text) };
  };
  await eventually(
    async () => {
      const gauges = await replicaGauges();
      return gauges.usable && gauges.lag;
    },
    'orderpay_db_replica_usable 1 and a lag in bytes once replay resumed',
    MAX_LAG_MS * 2,
  );
  assert.deepEqual(
    readBack.filter((row) => !row.seen),
    [],
    'every order placed through one process is in the collection read at once through another',
  );
  assert.ok(
    readBack.every((row) => !row.onReplica),
    'the replica lagged on purpose: none of those orders was on it when read back',
  );

  // What clients saw of each fault: the 503s from its start to the next fault's, and the last one's time.
  const outages = faults.map((entry, i) => {
    const end = faults[i + 1]?.startMs ?? ledger.now();
    const seen = ledger.unavailableAt.filter((at) => at >= entry.startMs && at < end);
    return { ...entry, unavailable503s: seen.length, visibleMs: seen.length === 0 ? 0 : seen.at(-1)! - entry.startMs };
  });
  const lag = {
    samples: lagSamples.length,
    p50Ms: percentile(lagSamples, 50),
    p99Ms: percentile(lagSamples, 99),
    maxMs: Math.max(0, ...lagSamples),
  };
  await assertInvariantsHeld('topology', seeded, world, ledger, balancer.url, {
    outageMs: outages,
    collectionReads: { replica: replicaReads, primary: primaryReads },
    replicaLag: lag,
    readBack: `${readBack.filter((row) => row.seen).length}/${readBack.length} read back through another process, none on the paused replica`,
    longestOperationMs: ledger.longest.ms,
    failedStarts: slots.map((slot) => slot.failedStarts),
  });
  assertWithin(`the longest operation (${ledger.longest.op})`, ledger.longest.ms, INTERRUPTED_OPERATION_MS, seeded);
  await assertEveryEventDelivered(world, endpoint, receiver);
  for (const slot of slots) {
    const { exit } = await slot.terminate(DRAIN_MS);
    assert.deepEqual(exit, { code: 0, signal: null }, slot.output());
  }
});
