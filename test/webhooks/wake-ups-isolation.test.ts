// The dispatcher at the rate events happen (record 0120): woken by the commit of an event rather
// than by its poll (which these tests set to a minute, the slowest it can be), and by a NOTIFY of
// another process on PostgreSQL, heard again after its listening session is cut; a healthy endpoint
// delivered while four others hang; an endpoint failing in a row paused (its circuit open), then
// probed one attempt at a time, then at full speed once it answers again.
import { SYSTEM_ACTOR } from '../../src/core/actor.ts';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { recordEvent } from '../../src/events/events.store.ts';
import { LISTENER_APPLICATION_NAME } from '../../src/db/notifications.ts';
import { CIRCUIT, circuitPauseMs } from '../../src/webhooks/deliveries.rules.ts';
import { DELIVERIES_CHANNEL } from '../../src/webhooks/wake-ups.ts';
import { buildApp } from '../../src/app.ts';
import { leaseDueDeliveries, lockEndpointsWithDueDeliveries } from '../../src/webhooks/deliveries.store.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createProduct } from '../helpers/factories.ts';
import {
  answerFirstThenTogether,
  answerOk,
  deleteWebhookEndpoints,
  eventually,
  insertWebhookEndpoint,
  withEndpoints,
  withReceivers,
  type TestEndpoint,
} from '../helpers/webhooks.ts';

const ATTEMPT_TIMEOUT_MS = 5000;
const WEBHOOKS = loadConfig({
  NODE_ENV: 'test',
  ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
  ORDERPAY_WEBHOOKS_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1',
  // The slowest poll there is: a delivery within the tests' waits was woken, not polled.
  ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '60000',
}).webhooks;

let t: TestApp;
before(async () => {
  t = await startTestApp({ webhooks: WEBHOOKS }, undefined, { webhookAttemptTimeoutMs: ATTEMPT_TIMEOUT_MS });
});
after(() => t.close());

/** An event about a new product, committed in a transaction as the services commit theirs (through the outbox). */
async function commitProductEvent(type: 'product.updated' | 'product.created' = 'product.updated'): Promise<string> {
  const product = await createProduct(t.db);
  return t.db.transaction((tx) => recordEvent(tx, type, product, SYSTEM_ACTOR));
}

/** Commits n product.updated events in one transaction: due together, taken by one claim. */
async function commitProductEvents(n: number): Promise<void> {
  const product = await createProduct(t.db);
  await t.db.transaction(async (tx) => {
    for (let i = 0; i < n; i++) await recordEvent(tx, 'product.updated', product, SYSTEM_ACTOR);
  });
}

/** Wakes the dispatcher as any commit of an event does: one no endpoint of these tests subscribes to (product.created). */
const wakeDispatcher = () => commitProductEvent('product.created');

async function deliveryStates(endpoint: TestEndpoint): Promise<{ state: string; attempts: number }[]> {
  const { rows } = await t.db.query<{ state: string; attempts: number }>(
    'SELECT state, attempts FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id',
    [endpoint.id],
  );
  return rows;
}

async function allSucceeded(endpoint: TestEndpoint, count: number): Promise<boolean> {
  const rows = await deliveryStates(endpoint);
  return rows.length === count && rows.every((row) => row.state === 'succeeded');
}

interface EndpointHealth {
  consecutive_failures: number;
  consecutive_timeouts: number;
  /** Milliseconds from now to circuit_open_until, as the database counts them; null while closed. */
  paused_ms: number | null;
}

async function health(endpoint: TestEndpoint): Promise<EndpointHealth> {
  const { rows } = await t.db.query<EndpointHealth>(
    `SELECT consecutive_failures, consecutive_timeouts,
            (extract(epoch FROM circuit_open_until - now()) * 1000)::int AS paused_ms
       FROM webhook_endpoints WHERE id = $1`,
    [endpoint.id],
  );
  return rows[0]!;
}

describe('waking the dispatcher', () => {
  test('an event committed is delivered at once, not at the next poll (a minute away)', async () => {
    await withReceivers([29870], async ([receiver]) => {
      receiver!.answer(answerOk);
      const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver!.url, enabledEvents: ['product.updated'] });
      await withEndpoints(t.db, [endpoint], async () => {
        for (let i = 0; i < 3; i++) {
          await commitProductEvent();
          await receiver!.waitForRequests(i + 1);
        }
        await eventually(() => allSucceeded(endpoint, 3), '3 deliveries succeeded');
      });
    });
  });

  test('PostgreSQL: a NOTIFY from another process wakes it, also after its listening session was cut', async (context) => {
    if (!t.databaseUrl) {
      context.diagnostic('the embedded database serves one process: its own commits wake it (the test above)');
      return;
    }
    // A second app on the same database, told where it can LISTEN (the shared test app knows no URL).
    const listening = await buildApp({ ...t.config, databaseUrl: t.databaseUrl }, t.db, { logger: false });
    await listening.ready();
    const other = new pg.Client({ connectionString: t.databaseUrl });
    await other.connect();
    try {
      await withReceivers([29871], async ([receiver]) => {
        receiver!.answer(answerOk);
        const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver!.url, enabledEvents: ['product.updated'] });
        const listenerPid = async () =>
          (
            await other.query<{ pid: number }>(
              'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database() AND state IS NOT NULL',
              [LISTENER_APPLICATION_NAME],
            )
          ).rows.map((row) => row.pid);
        /** What another process does: the event and its delivery committed on its own connection, then NOTIFY. */
        const deliverElsewhere = async (n: number) => {
          const product = await createProduct(t.db);
          await other.query(
            `WITH e AS (INSERT INTO events (id, type, object_type, object) VALUES ($1, 'product.updated', 'product', $2) RETURNING id)
             -- Due a second ago: a default of now() is rounded to the column's milliseconds, maybe up past now().
           INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at) SELECT $3, id, now() - interval '1 second' FROM e`,
            [`evt_notified_${n}_${Date.now()}`, JSON.stringify(product), endpoint.id],
          );
          await other.query('SELECT pg_notify($1, $2)', [DELIVERIES_CHANNEL, '']);
        };
        try {
          await eventually(async () => (await listenerPid()).length === 1, 'the listening session');
          const [first] = await listenerPid();
          await deliverElsewhere(1);
          await receiver!.waitForRequests(1);

          await other.query('SELECT pg_terminate_backend($1)', [first]);
          await eventually(async () => {
            const pids = await listenerPid();
            return pids.length === 1 && pids[0] !== first;
          }, 'a new listening session');
          await deliverElsewhere(2);
          await receiver!.waitForRequests(2);
        } finally {
          await deleteWebhookEndpoints(t.db, endpoint);
        }
      });
    } finally {
      await other.end();
      await listening.close();
    }
  });

  test('PostgreSQL: a commit with events notifies the other processes, after the commit', async (context) => {
    if (!t.databaseUrl) {
      context.diagnostic('the embedded database serves one process: nothing to notify');
      return;
    }
    const other = new pg.Client({ connectionString: t.databaseUrl });
    await other.connect();
    try {
      const heard: string[] = [];
      other.on('notification', (message) => heard.push(message.channel));
      await other.query(`LISTEN ${DELIVERIES_CHANNEL}`);
      await commitProductEvent();
      await eventually(() => heard.includes(DELIVERIES_CHANNEL), 'a notification');
    } finally {
      await other.end();
    }
  });
});

describe('isolation', () => {
  test('four endpoints that hang hold up nothing of a healthy one: its deliveries go while theirs wait', async () => {
    await withReceivers([29872, 29873, 29874, 29875, 29876], async (receivers) => {
      const hanging = receivers.slice(0, 4);
      const healthy = receivers[4]!;
      for (const receiver of hanging) receiver.answer(() => undefined);
      healthy.answer(answerOk);
      const hangingEndpoints = await Promise.all(
        hanging.map((receiver) => insertWebhookEndpoint(t.db, t.config, { url: receiver.url, enabledEvents: ['product.updated'] })),
      );
      const healthyEndpoint = await insertWebhookEndpoint(t.db, t.config, { url: healthy.url, enabledEvents: ['product.created'] });
      await withEndpoints(t.db, [...hangingEndpoints, healthyEndpoint], async () => {
        // Every hanging endpoint has more due than its share of slots, all claimed first.
        await commitProductEvents(18);
        await Promise.all(hanging.map((receiver) => receiver.waitForRequests(16)));
        for (let i = 0; i < 10; i++) await commitProductEvent('product.created');
        await eventually(() => allSucceeded(healthyEndpoint, 10), 'the healthy endpoint delivered', ATTEMPT_TIMEOUT_MS * 4);
        // ...while each hanging endpoint still had its first attempts in flight: none timed out yet.
        for (const endpoint of hangingEndpoints) assert.equal((await health(endpoint)).consecutive_failures, 0);
        for (const receiver of hanging) assert.equal(receiver.requests.length, 16);
      });
    });
  });

  test('failing in a row opens the circuit (no attempts, deliveries kept due); then one probe, then full speed', async () => {
    await withReceivers([29877], async ([receiver]) => {
      receiver!.answer((_request, response) => response.writeHead(503).end('down'));
      const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver!.url, enabledEvents: ['product.updated'] });
      await withEndpoints(t.db, [endpoint], async () => {
        await commitProductEvents(8);
        // Its 8 in flight at once, all failed: 8 in a row, the circuit open for base × 2^(8 − threshold).
        await eventually(async () => (await health(endpoint)).consecutive_failures === 8, '8 failures in a row');
        const paused = await health(endpoint);
        assert.ok(paused.paused_ms !== null, 'the circuit is open');
        const expected = circuitPauseMs(8);
        assert.ok(
          paused.paused_ms <= expected && paused.paused_ms > expected - 10_000,
          `paused for ${paused.paused_ms} ms, ${expected} expected`,
        );
        assert.equal(receiver!.requests.length, 8);
        // The retries come due (1 s) but the circuit holds them: no claim takes the endpoint, every delivery pending.
        await t.db.query("UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 second' WHERE endpoint_id = $1", [
          endpoint.id,
        ]);
        const claimable = await t.db.transaction((tx) => lockEndpointsWithDueDeliveries(tx, 128, 16, WEBHOOKS.maxRatePerEndpoint));
        assert.deepEqual(claimable, []);
        assert.equal(receiver!.requests.length, 8);
        assert.ok((await deliveryStates(endpoint)).every((d) => d.state === 'pending' && d.attempts === 1));

        // The pause over, the receiver back: one probe at a time while failing, then the rest at once.
        // The probe answered alone; the 7 left are answered only once all 7 are in flight together.
        const later = answerFirstThenTogether(7);
        receiver!.answer(later.answer);
        await t.db.query('UPDATE webhook_endpoints SET circuit_open_until = now() WHERE id = $1', [endpoint.id]);
        assert.deepEqual(await t.db.transaction((tx) => lockEndpointsWithDueDeliveries(tx, 128, 16, WEBHOOKS.maxRatePerEndpoint)), [
          { id: endpoint.id, failing: true },
        ]);
        await wakeDispatcher();
        await eventually(() => allSucceeded(endpoint, 8), 'every delivery succeeded');
        assert.equal(receiver!.requests.length, 16);
        assert.deepEqual(await health(endpoint), { consecutive_failures: 0, consecutive_timeouts: 0, paused_ms: null });
        assert.ok(later.most() > 1, 'after the probe succeeded, several at once');
        const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
        assert.match(metrics.body, /^orderpay_webhook_attempts_total\{outcome="succeeded",endpoint_state="probing"\} 1$/m);
        assert.match(metrics.body, /^orderpay_webhook_attempts_total\{outcome="retrying",endpoint_state="healthy"\} [1-9]\d*$/m);
      });
    });
  });

  test('an endpoint that times out gets a shorter timeout each time; one answer restores it', async () => {
    await withReceivers([29878], async ([receiver]) => {
      receiver!.answer(() => undefined);
      const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver!.url, enabledEvents: ['product.updated'] });
      await withEndpoints(t.db, [endpoint], async () => {
        await commitProductEvent();
        await eventually(async () => (await health(endpoint)).consecutive_timeouts === 1, 'one timeout', ATTEMPT_TIMEOUT_MS * 3);
        // The next attempt (due in 1 s) gets half the timeout: recorded as timed out after 2,500 ms.
        await t.db.query('UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_id = $1', [endpoint.id]);
        await wakeDispatcher();
        await eventually(async () => (await health(endpoint)).consecutive_timeouts === 2, 'two timeouts', ATTEMPT_TIMEOUT_MS * 3);
        const { rows } = await t.db.query<{ error: string }>(
          'SELECT a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1 ORDER BY a.id',
          [endpoint.id],
        );
        assert.deepEqual(
          rows.map((row) => row.error),
          [`timed out: no response within ${ATTEMPT_TIMEOUT_MS} ms`, `timed out: no response within ${ATTEMPT_TIMEOUT_MS / 2} ms`],
        );
        // Two failures in a row: below the circuit's threshold, so the next attempt goes as soon as it is due.
        assert.ok(CIRCUIT.threshold > 2);
        receiver!.answer(answerOk);
        await t.db.query('UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_id = $1', [endpoint.id]);
        await wakeDispatcher();
        await eventually(() => allSucceeded(endpoint, 1), 'delivered');
        assert.equal((await health(endpoint)).consecutive_timeouts, 0);
      });
    });
  });

  test('the send-rate cap: no more claimed for an endpoint in one second than ORDERPAY_WEBHOOKS_MAX_RATE, across claims', async () => {
    // Nothing listens there: the claims below lease the deliveries, nothing sends them.
    const endpoint = await insertWebhookEndpoint(t.db, t.config, {
      url: 'http://127.0.0.1:29879/never',
      enabledEvents: ['product.updated'],
    });
    const product = await createProduct(t.db);
    const maxRate = 2;
    const rolledBack = new Error('rolled back');
    const claims: number[] = [];
    await withEndpoints(t.db, [endpoint], async () => {
      // One transaction, so one now(): the deliveries and three claims in the same second, seen by no other dispatcher, then undone.
      const attempt = t.db.transaction(async (tx) => {
        await tx.query(
          `WITH e AS (
             INSERT INTO events (id, type, object_type, object)
             SELECT 'evt_rate_' || n || '_' || $2, 'product.updated', 'product', $1 FROM generate_series(1, 6) AS n RETURNING id
           )
           -- Due a second ago: a default of now() is rounded to the column's milliseconds, maybe up past now().
           INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at) SELECT $3, id, now() - interval '1 second' FROM e`,
          [JSON.stringify(product), Date.now(), endpoint.id],
        );
        for (let i = 0; i < 3; i++) {
          const ids = (await lockEndpointsWithDueDeliveries(tx, 128, 16, maxRate)).map((e) => e.id).filter((id) => id === endpoint.id);
          const claimed =
            ids.length === 0
              ? []
              : await leaseDueDeliveries(tx, ids, { limit: 128, perEndpoint: 16, maxRate, leaseMs: 60_000, maxAttempts: 3 });
          claims.push(claimed.length);
        }
        const { rows } = await tx.query<{ sends: number }>('SELECT rate_window_sends AS sends FROM webhook_endpoints WHERE id = $1', [
          endpoint.id,
        ]);
        assert.equal(rows[0]!.sends, maxRate);
        throw rolledBack;
      });
      await assert.rejects(attempt, rolledBack);
      assert.deepEqual(claims, [maxRate, 0, 0]);
    });
  });
});
