// Signing secrets never reach the log: every line the server writes at its most verbose level while
// endpoints are registered, read, replaced, pinged and their secrets rotated holds neither a secret
// nor its sealed form.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { PUBLIC_URL_LITERAL, send, storedEndpoint, webhookStaffToken, webhookTestConfig } from './webhooks.ts';

const lines: string[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _encoding, callback) {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    callback();
  },
});

let t: TestApp;
before(async () => {
  t = await startTestApp(webhookTestConfig(), undefined, { logger: { level: 'trace', stream: logStream } });
});
after(() => t.close());

test('no log line holds a signing secret, sealed or not, nor its key', async () => {
  const token = await webhookStaffToken(t);
  const created = await send(t, 'POST', token, '/webhook-endpoints', { url: PUBLIC_URL_LITERAL, enabledEvents: ['*'] });
  assert.equal(created.statusCode, 201, created.body);
  const { id, secret } = created.json() as { id: number; secret: string };
  const path = `/webhook-endpoints/${id}`;
  assert.equal((await send(t, 'GET', token, path)).statusCode, 200);
  assert.equal((await send(t, 'GET', token, '/webhook-endpoints')).statusCode, 200);
  const body = { url: PUBLIC_URL_LITERAL, enabledEvents: ['order.paid'], apiVersion: 2, description: 'logged?', disabled: false };
  assert.equal((await send(t, 'PUT', token, path, body)).statusCode, 200);
  assert.equal((await send(t, 'POST', token, `${path}/pings`)).statusCode, 202);
  const rotated = await send(t, 'POST', token, `${path}/secret-rotations`);
  assert.equal(rotated.statusCode, 200);
  const newSecret = (rotated.json() as { secret: string }).secret;
  // A refused request is logged too (its problem, its error): still no secret.
  assert.equal((await send(t, 'POST', token, '/webhook-endpoints', { url: 'https://127.0.0.1/', enabledEvents: ['*'] })).statusCode, 400);

  const row = (await storedEndpoint(t.db, id))!;
  const { rows } = await t.db.query<{ value: string }>(`SELECT value FROM app_secrets WHERE name = 'webhook_secret_key'`);
  const forbidden = [
    secret,
    secret.slice('whsec_'.length),
    newSecret,
    newSecret.slice('whsec_'.length),
    row.secret,
    row.previousSecret!,
    rows[0]!.value,
  ];
  // The log is there, and it is about these requests: a check of an empty log would prove nothing.
  assert.ok(lines.some((line) => line.includes(`${path}/secret-rotations`) && line.includes('request completed')));
  assert.ok(lines.some((line) => line.includes('"statusCode":201')));
  for (const line of lines) {
    for (const value of forbidden) assert.ok(!line.includes(value), `a log line holds a secret: ${line}`);
    assert.ok(!line.includes('whsec_'), line);
  }
});
