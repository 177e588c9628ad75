// The authorization server's failures: malformed input is a 400 invalid_request, never a 500; an
// unexpected failure is a server_error whose cause is logged with the request's id, which every
// /oauth response carries in X-Request-Id as the API's do.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { PUBLIC_URL, startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('/oauth: a NUL byte in client_id', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('token endpoint, in the body or in HTTP Basic → 400 invalid_request with X-Request-Id', async () => {
    for (const request of [
      { headers: FORM, payload: 'grant_type=client_credentials&client_id=a%00b&client_secret=x' },
      {
        headers: { ...FORM, authorization: `Basic ${Buffer.from('a%00b:secret').toString('base64')}` },
        payload: 'grant_type=client_credentials',
      },
      {
        headers: { ...FORM, authorization: `Basic ${Buffer.from('a\0b:secret').toString('base64')}` },
        payload: 'grant_type=client_credentials',
      },
    ]) {
      const response = await t.app.inject({ method: 'POST', url: '/oauth/token', ...request });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().error, 'invalid_request');
      assert.match(String(response.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    }
  });

  test('authorization endpoint → 400 error page, no redirect', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/oauth/authorize?client_id=a%00b&response_type=code&scope=openid&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb',
    });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.headers.location, undefined);
    assert.match(String(response.headers['content-type']), /^text\/html/);
  });
});

describe('/oauth: an unexpected failure is logged with the request id', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  const lines: string[] = [];
  before(async () => {
    database = await createTestDatabase();
    const config = loadConfig({ NODE_ENV: 'test', PUBLIC_URL, LOG_LEVEL: 'error' });
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    app = await buildApp(config, database.db, { logger: { level: 'error', stream } });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await database.drop();
  });

  test('a client lookup that fails in the database → 500 server_error, and the cause in the log under that id', async () => {
    // The per-IP limit still counts (its table is there); the client table is gone.
    await database.db.query('ALTER TABLE oauth_clients RENAME TO oauth_clients_gone');
    const response = await app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: FORM,
      payload: 'grant_type=client_credentials&client_id=someone&client_secret=x',
    });
    assert.equal(response.statusCode, 500);
    assert.equal(response.json().error, 'server_error');
    const id = response.headers['x-request-id'];
    const logged = lines.map((line) => JSON.parse(line) as { reqId?: string; msg?: string; err?: { message?: string } });
    const entry = logged.find((line) => line.reqId === id);
    assert.ok(entry, `no log line for request ${String(id)}: ${lines.join('')}`);
    assert.equal(entry.msg, 'authorization server error');
    assert.match(String(entry.err?.message), /oauth_clients/);
  });
});
