// Retention of the event log: the purge-events job deletes events older than
// ORDERPAY_EVENTS_RETENTION_DAYS (30 by default) with their webhook deliveries and attempts, and
// keeps the younger ones; GET /events/{id} of a purged event is a 404. Events are aged by moving
// their created_at back against the database's clock, the one the purge reads.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { purgeExpiredEvents } from '../../../src/events/events.service.ts';
import { backgroundJobs } from '../../../src/jobs/jobs.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { get } from '../../helpers/actors.ts';
import { createEventReader, eventsAbout, send } from './events.ts';

const t = setUpTestApp();

/** A product made through the API, and the id of its product.created event. */
async function recordEvent(reader: string): Promise<string> {
  const res = await send(t, reader, 'POST', '/v2/products', { name: 'Aged', price: { value: 100, currency: 'EUR' } });
  assert.equal(res.statusCode, 201, res.body);
  const [created] = await eventsAbout(t.db, 'product', res.json().id);
  return created!.id;
}

/** Moves an event back in time by a PostgreSQL interval ('30 days 1 minute'). */
async function age(eventId: string, interval: string): Promise<void> {
  await t.db.query(`UPDATE events SET created_at = now() - $2::interval WHERE id = $1`, [eventId, interval]);
}

/** A delivery of the event to a disabled endpoint, already failed (no dispatcher takes it), with one attempt. */
async function addDelivery(endpointId: number, eventId: string): Promise<number> {
  const { rows } = await t.db.query<{ id: number }>(
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, state, attempts) VALUES ($1, $2, 'failed', 1) RETURNING id`,
    [endpointId, eventId],
  );
  await t.db.query('INSERT INTO webhook_attempts (delivery_id, status_code, duration_ms) VALUES ($1, 500, 12)', [rows[0]!.id]);
  return rows[0]!.id;
}

async function createDisabledEndpoint(): Promise<number> {
  const { rows } = await t.db.query<{ id: number }>(
    `INSERT INTO webhook_endpoints (url, enabled_events, api_version, secret, disabled)
     VALUES ('https://hooks.example.test/orderpay', ARRAY['*'], 2, 'not-a-sealed-secret', true) RETURNING id`,
  );
  return rows[0]!.id;
}

/** Which of ids are still in table (sorted as Array.prototype.sort does). */
async function existing(table: 'events' | 'webhook_deliveries' | 'webhook_attempts', column: string, ids: unknown[]): Promise<unknown[]> {
  const { rows } = await t.db.query<{ id: unknown }>(`SELECT ${column} AS id FROM ${table} WHERE ${column} = ANY($1)`, [ids]);
  return rows.map((r) => r.id).sort();
}

function purgeJob(config: Omit<Parameters<typeof backgroundJobs>[1], 'webhooks'>) {
  const job = backgroundJobs(t.db, { ...config, webhooks: t.config.webhooks }, {}).find((j) => j.name === 'purge-events');
  assert.ok(job, 'purge-events is scheduled');
  return job;
}

describe('purge-events', () => {
  test('a job of the resource server, every ten minutes; an authorization server alone has no events to purge', () => {
    const events = { retentionDays: 30 };
    const job = purgeJob({ servers: { resource: true, authorization: true }, events });
    assert.equal(job.everyMs, 10 * 60_000);
    const names = backgroundJobs(t.db, { servers: { resource: false, authorization: true }, events, webhooks: t.config.webhooks }, {}).map(
      (j) => j.name,
    );
    assert.ok(!names.includes('purge-events'), names.join(', '));
  });

  test('deletes events older than 30 days (the default) with their deliveries and attempts; younger ones stay, and GET finds them', async () => {
    assert.equal(t.config.events.retentionDays, 30);
    const reader = await createEventReader(t);
    const endpoint = await createDisabledEndpoint();
    const expired = await recordEvent(reader);
    const kept = await recordEvent(reader);
    const recent = await recordEvent(reader);
    await age(expired, '30 days 1 minute');
    await age(kept, '29 days 23 hours 59 minutes');
    const expiredDelivery = await addDelivery(endpoint, expired);
    const keptDelivery = await addDelivery(endpoint, kept);

    await purgeJob(t.config).run();

    assert.deepEqual(await existing('events', 'id', [expired, kept, recent]), [kept, recent].sort());
    assert.deepEqual(await existing('webhook_deliveries', 'id', [expiredDelivery, keptDelivery]), [keptDelivery]);
    assert.deepEqual(await existing('webhook_attempts', 'delivery_id', [expiredDelivery, keptDelivery]), [keptDelivery]);
    const gone = await get(t, reader, `/v2/events/${expired}`);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().code, 'EVENT_NOT_FOUND');
    assert.equal((await get(t, reader, `/v2/events/${kept}`)).statusCode, 200);

    // Idempotent: running again (or in another process) finds nothing more to delete.
    await purgeJob(t.config).run();
    assert.deepEqual(await existing('events', 'id', [kept, recent]), [kept, recent].sort());
  });

  test('ORDERPAY_EVENTS_RETENTION_DAYS=7 keeps a week', async () => {
    const config = loadConfig({ NODE_ENV: 'test', ORDERPAY_EVENTS_RETENTION_DAYS: '7' });
    assert.equal(config.events.retentionDays, 7);
    const reader = await createEventReader(t);
    const older = await recordEvent(reader);
    const younger = await recordEvent(reader);
    await age(older, '7 days 1 second');
    await age(younger, '6 days 23 hours');

    await purgeJob(config).run();

    assert.deepEqual(await existing('events', 'id', [older, younger]), [younger]);
  });

  test('every expired event goes, however many batches it takes', async () => {
    await purgeExpiredEvents(t.db, 30);
    const reader = await createEventReader(t);
    const expired: string[] = [];
    for (let i = 0; i < 5; i++) expired.push(await recordEvent(reader));
    for (const id of expired) await age(id, '31 days');

    assert.equal(await purgeExpiredEvents(t.db, 30, 2), 5);
    assert.deepEqual(await existing('events', 'id', expired), []);
    assert.equal(await purgeExpiredEvents(t.db, 30, 2), 0);
  });
});
