// An endpoint's health as the API shows it (docs/api.md, "Webhook endpoints"): its backlog counted
// at the read, its last success as the dispatcher writes it (at most about once a second, never as
// a new revision: the ETag stays the endpoint's revision, decision 0118), and why it is disabled.
// No dispatcher runs within a test here: the deliveries are written as a test needs them.
import { SYSTEM_ACTOR } from '../../../src/core/actor.ts';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recordEvent } from '../../../src/events/events.store.ts';
import type { Queryable } from '../../../src/db/db.ts';
import { CIRCUIT } from '../../../src/webhooks/deliveries.rules.ts';
import { recordAttemptOutcome } from '../../../src/webhooks/deliveries.store.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { createProduct } from '../../helpers/factories.ts';
import {
  NO_BACKLOG,
  registerEndpoint,
  send as sendWith,
  shownEndpoint,
  storedEndpoint,
  webhookStaffToken,
  webhookTestConfig,
  type Method,
} from './webhooks.ts';

const t = setUpTestApp(webhookTestConfig());
const send = (method: Method, token: string, url: string, payload?: unknown, headers?: Record<string, string>) =>
  sendWith(t, method, token, url, payload, headers);

/** An event no endpoint subscribes to (product.created; the endpoints here take order.paid): its deliveries are the test's own. */
async function unsubscribedEvent(): Promise<string> {
  return recordEvent(t.db, 'product.created', await createProduct(t.db), SYSTEM_ACTOR);
}

/** A delivery of the event to the endpoint, in the state and with the next attempt the test says (SQL interval from now). */
async function insertDelivery(endpointId: number, eventId: string, state: string, nextAttemptIn: string): Promise<string> {
  const { rows } = await t.db.query<{ next: string }>(
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, state, next_attempt_at) VALUES ($1, $2, $3, now() + $4::interval)
     RETURNING next_attempt_at AS next`,
    [endpointId, eventId, state, nextAttemptIn],
  );
  return rows[0]!.next;
}

/** A PUT body (unversioned requests of these tokens are v1's: an endpoint of v2 at most). */
/**
 * A successful attempt to the endpoint, recorded as the dispatcher records it: a delivery of the
 * event as claimed (its first attempt, leased), then recordAttemptOutcome.
 */
async function recordSuccess(db: Queryable, endpointId: number, eventId: string): Promise<void> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, attempts, leased_until) VALUES ($1, $2, 1, now() + interval '1 minute') RETURNING id`,
    [endpointId, eventId],
  );
  const recorded = await recordAttemptOutcome(
    db,
    { id: rows[0]!.id, attempts: 1, endpointId },
    { statusCode: 204, durationMs: 3 },
    { state: 'succeeded' },
    { kind: 'succeeded' },
    CIRCUIT,
  );
  assert.equal(recorded.recorded, true);
}

const settings = { url: 'https://93.184.215.14/hooks', enabledEvents: ['order.paid'], apiVersion: 2, description: '', disabled: false };

describe('backlog', () => {
  test('pending deliveries, and when the longest-waiting due one came due; other states, endpoints and later retries aside', async () => {
    const token = await webhookStaffToken(t);
    const busy = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
    const idle = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
    const other = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
    const event = await unsubscribedEvent();
    const oldest = await insertDelivery(busy.id, event, 'pending', '-1 hour');
    await insertDelivery(busy.id, event, 'pending', '-1 minute');
    // Waiting for a retry: pending, not due.
    await insertDelivery(busy.id, event, 'pending', '1 hour');
    await insertDelivery(busy.id, event, 'succeeded', '-2 hours');
    await insertDelivery(busy.id, event, 'failed', '-3 hours');
    const othersOldest = await insertDelivery(other.id, event, 'pending', '-4 hours');
    const expected = { pending: 3, oldestDueAt: oldest };

    const res = await send('GET', token, `/webhook-endpoints/${busy.id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), shownEndpoint((await storedEndpoint(t.db, busy.id))!, expected));
    assert.deepEqual((await send('GET', token, `/webhook-endpoints/${idle.id}`)).json().backlog, NO_BACKLOG);
    // The list counts each endpoint of its page.
    const page = await send('GET', token, '/webhook-endpoints?pageSize=100');
    const listed = new Map((page.json().data as { id: number; backlog: unknown }[]).map((e) => [e.id, e.backlog]));
    assert.deepEqual(
      [listed.get(busy.id), listed.get(idle.id), listed.get(other.id)],
      [expected, NO_BACKLOG, { pending: 1, oldestDueAt: othersOldest }],
    );
    // Only waiting for retries: pending, none due.
    await t.db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE endpoint_id = $1`, [busy.id]);
    assert.deepEqual((await send('GET', token, `/webhook-endpoints/${busy.id}`)).json().backlog, { pending: 3, oldestDueAt: null });
  });

  test('a replacement and a rotation answer with the backlog too; the live figures never change the ETag', async () => {
    const token = await webhookStaffToken(t);
    const made = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
    const due = await insertDelivery(made.id, await unsubscribedEvent(), 'pending', '-5 seconds');
    const put = await send('PUT', token, `/webhook-endpoints/${made.id}`, { ...settings, description: 'CRM' });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(put.json().backlog, { pending: 1, oldestDueAt: due });
    const rotated = await send('POST', token, `/webhook-endpoints/${made.id}/secret-rotations`);
    assert.deepEqual(rotated.json().backlog, { pending: 1, oldestDueAt: due });
    const before = await send('GET', token, `/webhook-endpoints/${made.id}`);
    await insertDelivery(made.id, await unsubscribedEvent(), 'pending', '-1 second');
    const read = await send('GET', token, `/webhook-endpoints/${made.id}`);
    assert.equal(read.json().backlog.pending, 2);
    assert.equal(read.headers.etag, before.headers.etag);
    assert.equal(read.headers.etag, `"we${made.id}.3.v1"`);
  });
});

describe('lastSucceededAt', () => {
  test("a success is written without a new revision: the same ETag and updatedAt, and a PUT's If-Match still matches", async () => {
    const token = await webhookStaffToken(t);
    const made = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
    const first = await send('GET', token, `/webhook-endpoints/${made.id}`);
    assert.equal(first.json().lastSucceededAt, null);
    await recordSuccess(t.db, made.id, await unsubscribedEvent());
    const row = (await storedEndpoint(t.db, made.id))!;
    assert.ok(row.lastSucceededAt !== null);
    assert.deepEqual([row.version, row.updatedAt], [1, made.updatedAt]);
    const read = await send('GET', token, `/webhook-endpoints/${made.id}`);
    assert.deepEqual(read.json(), shownEndpoint(row));
    assert.equal(read.headers.etag, first.headers.etag);
    const notModified = await send('GET', token, `/webhook-endpoints/${made.id}`, undefined, { 'if-none-match': first.headers.etag! });
    assert.equal(notModified.statusCode, 304);
    // The tag read before the delivery guards the write: a delivery is no conflict.
    const put = await send(
      'PUT',
      token,
      `/webhook-endpoints/${made.id}`,
      { ...settings, description: 'after a delivery' },
      { 'if-match': first.headers.etag! },
    );
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().lastSucceededAt, row.lastSucceededAt);
  });

  test('written at most once a second: a success within a second of the last one writes nothing', async () => {
    const token = await webhookStaffToken(t);
    const made = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
    const eventId = await unsubscribedEvent();
    // One transaction: now() stands still, so "within a second" is exact.
    const [kept, moved] = await t.db.transaction(async (tx) => {
      const at = async (offset: string) => {
        await tx.query('UPDATE webhook_endpoints SET last_succeeded_at = now() - $2::interval WHERE id = $1', [made.id, offset]);
        await recordSuccess(tx, made.id, eventId);
        const { rows } = await tx.query<{ behind: number }>(
          'SELECT extract(epoch FROM now() - last_succeeded_at)::float8 AS behind FROM webhook_endpoints WHERE id = $1',
          [made.id],
        );
        return rows[0]!.behind;
      };
      return [await at('900 milliseconds'), await at('1100 milliseconds')];
    });
    // The column keeps milliseconds, now() microseconds: equal to within one.
    assert.ok(Math.abs(kept - 0.9) < 0.001, `kept ${kept} s behind`);
    assert.ok(Math.abs(moved) < 0.001, `moved to ${moved} s behind`);
    const row = (await storedEndpoint(t.db, made.id))!;
    assert.deepEqual([row.version, row.updatedAt], [1, made.updatedAt]);
  });

  test('a success after failures ends failingSince at once, a new revision as before', async () => {
    const token = await webhookStaffToken(t);
    const made = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
    await t.db.query(
      "UPDATE webhook_endpoints SET failing_since = now() - interval '1 hour', last_succeeded_at = now() - interval '2 hours' WHERE id = $1",
      [made.id],
    );
    await recordSuccess(t.db, made.id, await unsubscribedEvent());
    const row = (await storedEndpoint(t.db, made.id))!;
    assert.equal(row.failingSince, null);
    assert.equal(row.version, 2);
    assert.equal(row.lastSucceededAt, row.updatedAt);
    const read = await send('GET', token, `/webhook-endpoints/${made.id}`);
    assert.equal(read.headers.etag, `"we${made.id}.2.v1"`);
  });
});

describe('disabledReason', () => {
  test('requested by a POST or PUT; cleared by enabling; kept by a PUT that leaves it disabled', async () => {
    const token = await webhookStaffToken(t);
    const made = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
    assert.equal(made.disabledReason, null);
    const disable = await send('PUT', token, `/webhook-endpoints/${made.id}`, { ...settings, disabled: true });
    assert.deepEqual([disable.json().disabled, disable.json().disabledReason], [true, 'requested']);
    // Disabled by the dispatcher (it stores no reason): a PUT that keeps it disabled keeps "failing".
    await t.db.query("UPDATE webhook_endpoints SET disabled_reason = NULL, failing_since = now() - interval '5 days' WHERE id = $1", [
      made.id,
    ]);
    const edited = await send('PUT', token, `/webhook-endpoints/${made.id}`, { ...settings, disabled: true, description: 'still off' });
    assert.deepEqual([edited.json().disabled, edited.json().disabledReason], [true, 'failing']);
    assert.equal((await storedEndpoint(t.db, made.id))!.disabledReason, null);
    const enabled = await send('PUT', token, `/webhook-endpoints/${made.id}`, settings);
    assert.deepEqual([enabled.json().disabled, enabled.json().disabledReason], [false, null]);
    assert.equal((await storedEndpoint(t.db, made.id))!.disabledReason, null);
  });

  test('the database holds no reason on an enabled endpoint', async () => {
    const token = await webhookStaffToken(t);
    const made = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
    await assert.rejects(
      t.db.query("UPDATE webhook_endpoints SET disabled_reason = 'requested' WHERE id = $1", [made.id]),
      /webhook_endpoints_disabled_reason_check/,
    );
    await assert.rejects(
      t.db.query("UPDATE webhook_endpoints SET disabled = true, disabled_reason = 'tired' WHERE id = $1", [made.id]),
      /webhook_endpoints_disabled_reason_check/,
    );
  });
});
