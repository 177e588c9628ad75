// Where /metrics answers and to whom, on real sockets through startServer (what `orderpay serve`
// runs): a listener of its own (ORDERPAY_METRICS_PORT) serving the API's figures, and no /metrics
// on the API's port; a bearer token (ORDERPAY_METRICS_TOKEN) that everything else is refused
// against with a 401 problem; production without either serves no /metrics at all.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { signAccessToken } from '../../src/auth/access-token.ts';
import { ensureActiveSigningKey } from '../../src/auth/keys.store.ts';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/main.ts';
import { insertUser } from '../../src/users/users.store.ts';
import { cleanUpProcessesAndDatabases, commandEnv, createTargetDatabase, startServe } from '../cli/orderpay-process.ts';
import { createEmptyServerDatabase, serverUrl } from '../helpers/db.ts';

const TOKEN = randomBytes(32).toString('hex');
const PROBLEM = 'application/problem+json; charset=utf-8';

interface Started {
  server: RunningServer;
  close(): Promise<void>;
}

/** startServer on a database of its own (in memory, or a new one on TEST_DATABASE_URL's server). */
async function start(env: Record<string, string>): Promise<Started> {
  const database = serverUrl ? await createEmptyServerDatabase() : undefined;
  const config = loadConfig({
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ORDERPAY_SEED_ON_EMPTY: 'false',
    // Production takes payments only through a processor it is told to use.
    ORDERPAY_PAYMENT_PROCESSOR: 'simulator',
    ...(database ? { DATABASE_URL: database.url } : { DATA_DIR: 'memory://' }),
    ...env,
  });
  const server = await startServer(config);
  return {
    server,
    async close() {
      await server.stop();
      await database?.drop();
    },
  };
}

const scrape = (url: string, authorization?: string) => fetch(url, { headers: authorization ? { authorization } : {} });

async function assertRefused(response: Response, challenge: string, detail: string, instance = '/metrics'): Promise<void> {
  assert.equal(response.status, 401);
  assert.equal(response.headers.get('content-type'), PROBLEM);
  assert.equal(response.headers.get('www-authenticate'), challenge);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  const body = (await response.json()) as Record<string, unknown>;
  assert.deepEqual(
    { code: body.code, status: body.status, title: body.title, detail: body.detail, instance: body.instance },
    { code: 'AUTH_METRICS_TOKEN_INVALID', status: 401, title: 'Metrics token required', detail, instance },
  );
  assert.match(String(body.type), /\/problems\/auth-metrics-token-invalid$/);
}

describe('/metrics on a listener of its own, behind a token (ORDERPAY_METRICS_PORT, ORDERPAY_METRICS_TOKEN)', () => {
  let started: Started;
  const API = 'http://127.0.0.1:29312';
  const METRICS = 'http://127.0.0.1:29313/metrics';
  before(async () => {
    started = await start({ NODE_ENV: 'production', PORT: '29312', ORDERPAY_METRICS_PORT: '29313', ORDERPAY_METRICS_TOKEN: TOKEN });
  });
  after(() => started.close());

  test('the listener answers /metrics with the API process figures, to the token', async () => {
    assert.equal(started.server.metricsUrl, METRICS);
    // A payment through the API's port, counted on the metrics port: one registry.
    const { db, app } = started.server;
    const user = await insertUser(db, { email: `metrics-${randomUUID()}@example.test`, name: 'Metrics', role: 'customer' });
    const accessToken = await signAccessToken(await ensureActiveSigningKey(db), {
      issuer: app.config.issuer,
      audience: app.config.audience,
      subject: String(user.id),
      clientId: 'metrics-test',
      scope: 'payments:write',
    });
    const paid = await fetch(`${API}/v2/payments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ amount: { value: 1234, currency: 'EUR' } }),
    });
    assert.equal(paid.status, 201);

    const response = await scrape(METRICS, `Bearer ${TOKEN}`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const text = await response.text();
    assert.match(text, /^orderpay_payments_total\{status="succeeded"\} 1$/m);
    assert.match(text, /^orderpay_db_pool_max \d+$/m);
    assert.match(text, /^orderpay_http_request_duration_seconds_count\{method="POST",route="\/v2\/payments",status="201"\} 1$/m);
  });

  test('the API port has no /metrics', async () => {
    const response = await scrape(`${API}/metrics`, `Bearer ${TOKEN}`);
    assert.equal(response.status, 404);
    assert.equal(response.headers.get('content-type'), PROBLEM);
    assert.equal(((await response.json()) as { code: string }).code, 'ROUTE_NOT_FOUND');
  });

  test('without credentials: 401 problem with a challenge (RFC 6750 §3)', async () => {
    await assertRefused(
      await scrape(METRICS),
      'Bearer realm="orderpay-metrics"',
      '/metrics requires the metrics token: Authorization: Bearer <token>.',
    );
  });

  test('a wrong token of the same length, a longer or shorter one, another scheme: 401 invalid_token', async () => {
    const wrong = [
      `Bearer ${randomBytes(32).toString('hex')}`,
      `Bearer ${TOKEN.slice(0, -1)}${TOKEN.endsWith('0') ? '1' : '0'}`,
      `Bearer ${TOKEN}0`,
      `Bearer ${TOKEN.slice(0, 32)}`,
      `Bearer ${TOKEN} ${TOKEN}`,
      `Basic ${Buffer.from(`metrics:${TOKEN}`).toString('base64')}`,
      TOKEN,
    ];
    for (const authorization of wrong) {
      await assertRefused(
        await scrape(METRICS, authorization),
        'Bearer realm="orderpay-metrics", error="invalid_token"',
        'The credentials sent are not the metrics token.',
      );
    }
  });

  test('the token is matched exactly, the scheme case-insensitively (RFC 9110 §11.1)', async () => {
    assert.equal((await scrape(METRICS, `bearer ${TOKEN}`)).status, 200);
    assert.equal((await scrape(METRICS, `Bearer ${TOKEN.toUpperCase()}`)).status, 401);
  });

  test('the listener serves nothing else: 404 problem', async () => {
    const response = await scrape(METRICS.replace('/metrics', '/v2/orders'), `Bearer ${TOKEN}`);
    assert.equal(response.status, 404);
    assert.equal(response.headers.get('content-type'), PROBLEM);
    assert.equal(((await response.json()) as { code: string }).code, 'ROUTE_NOT_FOUND');
  });
});

describe('/metrics on the API port', () => {
  test('with a token in production: served to the token only', async () => {
    const started = await start({ NODE_ENV: 'production', PORT: '29314', ORDERPAY_METRICS_TOKEN: TOKEN });
    try {
      assert.equal(started.server.metricsUrl, undefined);
      await assertRefused(
        await scrape('http://127.0.0.1:29314/metrics'),
        'Bearer realm="orderpay-metrics"',
        '/metrics requires the metrics token: Authorization: Bearer <token>.',
      );
      const response = await scrape('http://127.0.0.1:29314/metrics', `Bearer ${TOKEN}`);
      assert.equal(response.status, 200);
      assert.match(await response.text(), /^orderpay_refunds_total\{cause="refund"\} 0$/m);
    } finally {
      await started.close();
    }
  });

  test('in production without a token or a port of its own: not served', async () => {
    const started = await start({ NODE_ENV: 'production', PORT: '29315' });
    try {
      const response = await scrape('http://127.0.0.1:29315/metrics');
      assert.equal(response.status, 404);
      assert.equal(((await response.json()) as { code: string }).code, 'ROUTE_NOT_FOUND');
      assert.equal((await scrape('http://127.0.0.1:29315/livez')).status, 200);
    } finally {
      await started.close();
    }
  });

  test('the metrics listener closes with the server', async () => {
    const started = await start({ NODE_ENV: 'test', PORT: '29316', ORDERPAY_METRICS_PORT: '29317' });
    let closed = false;
    try {
      assert.equal((await scrape('http://127.0.0.1:29317/metrics')).status, 200);
      closed = true;
      await started.close();
      await assert.rejects(scrape('http://127.0.0.1:29317/metrics'), (error: Error & { cause?: { code?: string } }) => {
        assert.equal(error.cause?.code, 'ECONNREFUSED');
        return true;
      });
    } finally {
      if (!closed) await started.close();
    }
  });
});

describe('orderpay serve says where /metrics is', () => {
  after(() => cleanUpProcessesAndDatabases());

  /** The JSON log lines of the process (pino), those with a message. */
  const logLines = (stdout: string) =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level?: number; msg?: string; metricsUrl?: string })
      .filter((line) => line.msg !== undefined);

  type LogLine = ReturnType<typeof logLines>[number];
  /**
   * The first log line that matches, waiting a little for it: pino writes asynchronously, so a
   * line logged before the server said it listens may reach stdout after that.
   */
  const loggedLine = async (server: { stdout(): string }, matches: (line: LogLine) => boolean): Promise<LogLine | undefined> => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const line = logLines(server.stdout()).find(matches);
      if (line || Date.now() > deadline) return line;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  test('production without a token or a port: a warning at start', async () => {
    const target = await createTargetDatabase();
    const server = await startServe({ ...commandEnv(target.env), NODE_ENV: 'production', ORDERPAY_PAYMENT_PROCESSOR: 'simulator' });
    try {
      const warning = await loggedLine(server, (line) => line.msg?.startsWith('/metrics') ?? false);
      assert.deepEqual(
        { level: warning?.level, msg: warning?.msg },
        { level: 40, msg: '/metrics is not served: in production set ORDERPAY_METRICS_TOKEN or ORDERPAY_METRICS_PORT (docs/deploy.md)' },
      );
    } finally {
      assert.deepEqual(await server.stop(), { code: 0, signal: null });
    }
  });

  test('a port of its own: logged with its URL, served, and closed on SIGTERM', async () => {
    const target = await createTargetDatabase();
    const server = await startServe({
      ...commandEnv(target.env),
      NODE_ENV: 'production',
      ORDERPAY_PAYMENT_PROCESSOR: 'simulator',
      LOG_LEVEL: 'info',
      ORDERPAY_METRICS_PORT: '29318',
    });
    try {
      const line = await loggedLine(server, (entry) => entry.msg === 'metrics served on their own listener');
      assert.equal(line?.metricsUrl, 'http://127.0.0.1:29318/metrics');
      assert.equal((await scrape('http://127.0.0.1:29318/metrics')).status, 200);
      assert.equal(
        logLines(server.stdout()).find((entry) => entry.msg?.startsWith('/metrics is not served')),
        undefined,
      );
    } finally {
      assert.deepEqual(await server.stop(), { code: 0, signal: null });
    }
    await assert.rejects(scrape('http://127.0.0.1:29318/metrics'));
  });
});
