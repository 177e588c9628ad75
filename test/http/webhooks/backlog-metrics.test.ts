// The webhook backlog on /metrics (docs/deploy.md, "Health, metrics, logs"): the deliveries due now
// to enabled endpoints and the age of the oldest, read from the database at each scrape. No
// dispatcher runs within a test here, so the deliveries stay as the test writes them; the file's
// database is its own, so the figures are the test's.
import { SYSTEM_ACTOR } from '../../../src/core/actor.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordEvent } from '../../../src/events/events.store.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { createProduct } from '../../helpers/factories.ts';
import { registerEndpoint, webhookStaffToken, webhookTestConfig } from './webhooks.ts';

const t = setUpTestApp(webhookTestConfig());

/** The samples of the two gauges, as a scrape reads them. */
async function scrape(): Promise<{ due: number; age: number }> {
  const response = await t.request(undefined, { method: 'GET', url: '/metrics' });
  assert.equal(response.statusCode, 200);
  const sample = (name: string) => {
    const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(response.body);
    assert.ok(match, `${name} in ${response.body}`);
    return Number(match[1]);
  };
  assert.match(response.body, /^# TYPE orderpay_webhook_deliveries_due gauge$/m);
  assert.match(response.body, /^# TYPE orderpay_webhook_oldest_due_age_seconds gauge$/m);
  return { due: sample('orderpay_webhook_deliveries_due'), age: sample('orderpay_webhook_oldest_due_age_seconds') };
}

async function insertDelivery(endpointId: number, eventId: string, state: string, nextAttemptIn: string): Promise<void> {
  await t.db.query(
    'INSERT INTO webhook_deliveries (endpoint_id, event_id, state, next_attempt_at) VALUES ($1, $2, $3, now() + $4::interval)',
    [endpointId, eventId, state, nextAttemptIn],
  );
}

test('due deliveries and the oldest one’s age: pending and due, to enabled endpoints, in flight or not', async () => {
  assert.deepEqual(await scrape(), { due: 0, age: 0 });

  const token = await webhookStaffToken(t);
  // Subscribed to nothing recorded here: every delivery is the test's own.
  const enabled = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
  const other = await registerEndpoint(t, token, { enabledEvents: ['order.paid'] });
  const disabled = await registerEndpoint(t, token, { enabledEvents: ['order.paid'], disabled: true });
  const event = await recordEvent(t.db, 'product.created', await createProduct(t.db), SYSTEM_ACTOR);
  const started = performance.now();
  await insertDelivery(enabled.id, event, 'pending', '-30 seconds');
  await insertDelivery(enabled.id, event, 'pending', '0 seconds');
  await insertDelivery(other.id, event, 'pending', '-10 seconds');
  // Being sent: leased, still due.
  await t.db.query(
    "INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at, leased_until, attempts) VALUES ($1, $2, now() - interval '5 seconds', now() + interval '1 minute', 1)",
    [other.id, event],
  );
  // Not due: a retry later, delivered, failed, or to a disabled endpoint (sent nothing, it would only age).
  await insertDelivery(enabled.id, event, 'pending', '1 hour');
  await insertDelivery(enabled.id, event, 'succeeded', '-2 hours');
  await insertDelivery(enabled.id, event, 'failed', '-3 hours');
  await insertDelivery(disabled.id, event, 'pending', '-1 hour');

  const { due, age } = await scrape();
  assert.equal(due, 4);
  const elapsed = (performance.now() - started) / 1000;
  assert.ok(age >= 30 && age < 30 + elapsed + 1, `age ${age}, ${elapsed} s after the deliveries were written`);

  // The disabled endpoint enabled: its delivery is due again, and the oldest.
  await t.db.query('UPDATE webhook_endpoints SET disabled = false, disabled_reason = NULL WHERE id = $1', [disabled.id]);
  const after = await scrape();
  assert.equal(after.due, 5);
  assert.ok(after.age >= 3600 && after.age < 3600 + (performance.now() - started) / 1000 + 1, `age ${after.age}`);
});
