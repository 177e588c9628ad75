// The webhook backlog gauges (src/http/business-metrics.ts): one read of the database per scrape
// for both, and NaN (unknown) with a log line when it cannot be read or does not come in time (a
// pool held by transactions), rather than a failed or hanging scrape.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { registerWebhookBacklogGauges, type WebhookBacklogFigures } from '../../src/http/business-metrics.ts';

function gauges(read: () => Promise<WebhookBacklogFigures>, timeoutMs?: number) {
  const registry = new Registry();
  const warnings: string[] = [];
  registerWebhookBacklogGauges(registry, read, { warn: (_object, message) => warnings.push(message) }, timeoutMs);
  return { registry, warnings };
}

const sample = (text: string, name: string) => new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];

test('both gauges come from one read per scrape', async () => {
  let reads = 0;
  const { registry, warnings } = gauges(async () => {
    reads++;
    return { due: 7, oldestDueAgeSeconds: 12.5 };
  });
  const text = await registry.metrics();
  assert.equal(sample(text, 'orderpay_webhook_deliveries_due'), '7');
  assert.equal(sample(text, 'orderpay_webhook_oldest_due_age_seconds'), '12.5');
  assert.equal(reads, 1);
  await registry.metrics();
  assert.equal(reads, 2, 'each scrape reads afresh');
  assert.deepEqual(warnings, []);
});

test('a read that fails: the scrape answers, both gauges NaN, a warning logged', async () => {
  const { registry, warnings } = gauges(async () => {
    throw new Error('connection refused');
  });
  const text = await registry.metrics();
  // prom-client writes "Nan"; Prometheus reads NaN in any case.
  assert.match(sample(text, 'orderpay_webhook_deliveries_due') ?? '', /^nan$/i);
  assert.match(sample(text, 'orderpay_webhook_oldest_due_age_seconds') ?? '', /^nan$/i);
  assert.deepEqual(warnings, ['the webhook backlog could not be read for /metrics']);
});

test('a read that does not come within the timeout: the scrape answers, both gauges NaN', async () => {
  const { registry, warnings } = gauges(() => new Promise<never>(() => undefined), 20);
  const text = await registry.metrics();
  assert.match(sample(text, 'orderpay_webhook_deliveries_due') ?? '', /^nan$/i);
  assert.match(sample(text, 'orderpay_webhook_oldest_due_age_seconds') ?? '', /^nan$/i);
  assert.deepEqual(warnings, ['the webhook backlog could not be read for /metrics']);
});
