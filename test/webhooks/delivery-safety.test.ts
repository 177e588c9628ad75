// Where a delivery may go (docs/webhooks.md "Safety"), with ORDERPAY_WEBHOOKS_ALLOW_PRIVATE off as
// in production: an endpoint whose address is loopback or private, by its literal or by what its
// name resolves to at the moment of delivery (DNS rebinding), is never connected to; the attempt
// is recorded with the refusal and the delivery retried on the schedule. Ports 29460–29469.
import { SYSTEM_ACTOR } from '../../src/core/actor.ts';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { recordEvent } from '../../src/events/events.store.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createProduct } from '../helpers/factories.ts';
import { deleteWebhookEndpoints, eventually, insertWebhookEndpoint, type Receiver, startReceiver } from '../helpers/webhooks.ts';

const WEBHOOKS = loadConfig({
  NODE_ENV: 'test',
  ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'false',
  ORDERPAY_WEBHOOKS_RETRY_SCHEDULE: '60',
  ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '20',
}).webhooks;

let t: TestApp;
let receiver: Receiver;
before(async () => {
  t = await startTestApp({ webhooks: WEBHOOKS });
  receiver = await startReceiver(29460);
});
after(async () => {
  await receiver.close();
  await t.close();
});

/** The first attempt of the one delivery of a new event to an endpoint at url, once recorded. */
async function firstAttemptTo(url: string) {
  const endpoint = await insertWebhookEndpoint(t.db, t.config, { url });
  try {
    await recordEvent(t.db, 'product.updated', await createProduct(t.db), SYSTEM_ACTOR);
    let attempt: { status_code: number | null; error: string | null } | undefined;
    await eventually(async () => {
      const { rows } = await t.db.query<{ status_code: number | null; error: string | null }>(
        `SELECT a.status_code, a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE d.endpoint_id = $1`,
        [endpoint.id],
      );
      attempt = rows[0];
      return attempt !== undefined;
    }, `an attempt to ${url}`);
    const { rows } = await t.db.query<{ state: string; attempts: number; due_later: boolean }>(
      'SELECT state, attempts, next_attempt_at > now() AS due_later FROM webhook_deliveries WHERE endpoint_id = $1',
      [endpoint.id],
    );
    const { rows: endpoints } = await t.db.query<{ failing: boolean }>(
      'SELECT failing_since IS NOT NULL AS failing FROM webhook_endpoints WHERE id = $1',
      [endpoint.id],
    );
    return { attempt: attempt!, delivery: rows[0]!, failing: endpoints[0]!.failing };
  } finally {
    await deleteWebhookEndpoints(t.db, endpoint);
  }
}

describe('webhook delivery: the address guard (ORDERPAY_WEBHOOKS_ALLOW_PRIVATE=false)', () => {
  const refusals = [
    {
      name: 'a loopback address literal',
      url: 'https://127.0.0.1:29460/hooks',
      error: 'refused to connect: 127.0.0.1 is a loopback address',
    },
    {
      name: 'an IPv4-mapped loopback literal',
      url: 'https://[::ffff:127.0.0.1]:29460/hooks',
      error: 'refused to connect: ::ffff:7f00:1 is a loopback address',
    },
    {
      name: 'an IPv4-compatible loopback literal (::/96, decision 0116)',
      url: 'https://[::127.0.0.1]:29460/hooks',
      error: 'refused to connect: ::7f00:1 is a ipv4Compatible address',
    },
    {
      name: 'a NAT64 literal of the cloud metadata service',
      url: 'https://[64:ff9b::169.254.169.254]:29460/hooks',
      error: 'refused to connect: 64:ff9b::a9fe:a9fe is a linkLocal address',
    },
    {
      name: 'a name resolving to loopback at delivery (localhost)',
      url: 'https://localhost:29460/hooks',
      error: /^refused to connect: (127\.0\.0\.1|::1) is a loopback address$/,
    },
    { name: 'plain http', url: 'http://127.0.0.1:29460/hooks', error: 'refused: The url must be https.' },
  ];
  for (const { name, url, error } of refusals) {
    test(`${name}: refused before connecting, the attempt recorded with the refusal, the delivery retried later`, async () => {
      const { attempt, delivery, failing } = await firstAttemptTo(url);
      assert.equal(attempt.status_code, null);
      if (typeof error === 'string') assert.equal(attempt.error, error);
      else assert.match(attempt.error!, error);
      assert.deepEqual(delivery, { state: 'pending', attempts: 1, due_later: true });
      assert.equal(failing, true);
      assert.equal(receiver.connections, 0);
      assert.equal(receiver.requests.length, 0);
    });
  }
});
