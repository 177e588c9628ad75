// An endpoint's last success as the real dispatcher records it (docs/webhooks.md, "Endpoint
// health"): kept in the endpoint's row, written at most about once a second however many
// deliveries succeed, never as a new revision, and left as it was by failures. A trigger counts
// each write of it (the claim writes the row too, for the send-rate cap: not counted). Receiver on
// 127.0.0.1:29860.
import { SYSTEM_ACTOR } from '../../src/core/actor.ts';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { recordEvent } from '../../src/events/events.store.ts';
import { createStaffToken } from '../helpers/actors.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createProduct } from '../helpers/factories.ts';
import { deliveringWebhooks, eventually, insertWebhookEndpoint, type Receiver, startReceiver } from '../helpers/webhooks.ts';

const DELIVERIES = 60;
let t: TestApp;
let receiver: Receiver;
before(async () => {
  // A failed delivery waits a minute for its retry.
  t = await startTestApp({ webhooks: deliveringWebhooks('60') });
  receiver = await startReceiver(29860, (_request, response) => response.writeHead(204).end());
  await t.db.exec(`
    CREATE TABLE last_success_writes (endpoint_id bigint NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
    CREATE FUNCTION count_last_success_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO last_success_writes (endpoint_id) VALUES (NEW.id); RETURN NEW; END $$;
    CREATE TRIGGER count_last_success_write AFTER UPDATE ON webhook_endpoints FOR EACH ROW
      WHEN (OLD.last_succeeded_at IS DISTINCT FROM NEW.last_succeeded_at) EXECUTE FUNCTION count_last_success_write();
  `);
});
after(async () => {
  await t.close();
  await receiver.close();
});

async function endpointRow(id: number) {
  const { rows } = await t.db.query<{
    version: number;
    updated_at: string;
    last_succeeded_at: string | null;
    failing_since: string | null;
  }>('SELECT version, updated_at, last_succeeded_at, failing_since FROM webhook_endpoints WHERE id = $1', [id]);
  return rows[0]!;
}

const lastSuccessWrites = async (id: number) =>
  (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM last_success_writes WHERE endpoint_id = $1', [id])).rows[0]!.n;

test(`${DELIVERIES} deliveries succeed: lastSucceededAt follows them, the row written about once a second, the revision unchanged`, async () => {
  const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver.url, enabledEvents: ['product.updated'], apiVersion: 3 });
  const token = await createStaffToken(t, ['webhooks:read']);
  const before = await t.request(token, { method: 'GET', url: `/v3/webhook-endpoints/${endpoint.id}` });
  assert.equal(before.json().lastSucceededAt, null);
  const row = await endpointRow(endpoint.id);

  for (let i = 0; i < DELIVERIES; i++) await recordEvent(t.db, 'product.updated', await createProduct(t.db), SYSTEM_ACTOR);
  await eventually(async () => {
    const { rows } = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'succeeded'",
      [endpoint.id],
    );
    return rows[0]!.n === DELIVERIES;
  }, `${DELIVERIES} deliveries succeeded`);

  // The attempts' span, as recorded: a write at most once a second within it, and one to start.
  const { rows: spans } = await t.db.query<{ first: string; last: string }>(
    `SELECT min(a.attempted_at) AS first, max(a.attempted_at + make_interval(secs => a.duration_ms / 1000.0)) AS last
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1`,
    [endpoint.id],
  );
  const spanSeconds = (Date.parse(spans[0]!.last) - Date.parse(spans[0]!.first)) / 1000;
  const writes = await lastSuccessWrites(endpoint.id);
  assert.ok(writes >= 1 && writes <= Math.floor(spanSeconds) + 2, `${writes} writes over ${spanSeconds} s of ${DELIVERIES} successes`);

  const after = await endpointRow(endpoint.id);
  assert.deepEqual([after.version, after.updated_at, after.failing_since], [row.version, row.updated_at, null]);
  // Within about a second of the last success.
  const lag = Date.parse(spans[0]!.last) - Date.parse(after.last_succeeded_at!);
  assert.ok(lag >= -1000 && lag <= 2000, `lastSucceededAt ${after.last_succeeded_at}, last attempt ended ${spans[0]!.last}`);

  const read = await t.request(token, { method: 'GET', url: `/v3/webhook-endpoints/${endpoint.id}` });
  assert.equal(read.json().lastSucceededAt, after.last_succeeded_at);
  assert.deepEqual(read.json().backlog, { pending: 0, oldestDueAt: null });
  assert.equal(read.headers.etag, before.headers.etag);

  // A failure leaves the last success as it was, and starts failingSince (a new revision, as before).
  receiver.answer((_request, response) => response.writeHead(500).end());
  await recordEvent(t.db, 'product.updated', await createProduct(t.db), SYSTEM_ACTOR);
  await eventually(async () => (await endpointRow(endpoint.id)).failing_since !== null, 'the endpoint marked failing');
  const failing = await endpointRow(endpoint.id);
  assert.equal(failing.last_succeeded_at, after.last_succeeded_at);
  assert.equal(failing.version, row.version + 1);
  const backlog = (await t.request(token, { method: 'GET', url: `/v3/webhook-endpoints/${endpoint.id}` })).json().backlog;
  // Its retry waits a minute: pending, not due.
  assert.deepEqual(backlog, { pending: 1, oldestDueAt: null });
});
