// ORDERPAY_READ_DATABASE_URL naming a server that is not a standby: orderpay says so once and the
// primary serves every collection read, as /metrics counts them; each write of a caller still
// records the primary's position under the caller in Redis, for as long as a replica could lack
// it. (Reads served by a real streaming replica, and read-your-writes across processes, are in
// the topology fault scenario: test/faults/topology.fault.ts.)
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.ts';
import { createCustomer } from '../helpers/actors.ts';
import { startTestApp, type TestApp, UNREACHED_RATE_LIMITS } from '../helpers/app.ts';
import { serverPooler, serverUrl } from '../helpers/db.ts';
import { createProduct } from '../helpers/factories.ts';
import { dropRedisKeys, TEST_REDIS_URL, UNREACHABLE_REDIS_URL, uniqueRedisPrefix } from '../helpers/redis.ts';

const prefix = uniqueRedisPrefix();

/** A log destination that keeps its lines. */
function collectLines(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  return { lines, stream };
}
const { lines, stream: logStream } = collectLines();

/** POST /v2/orders of one product, with a fresh key. */
async function placeOrder(app: TestApp, token: string, qty: number) {
  const product = await createProduct(app.db, { price: 500, currency: 'EUR' });
  return app.request(token, {
    method: 'POST',
    url: '/v2/orders',
    headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    payload: { items: [{ productId: product.id, qty }] },
  });
}

/** An app whose replica URL is the server's maintenance database, counting in the Redis at redisUrl. */
function startWithReplica(redisUrl: string, stream: Writable): Promise<TestApp> {
  const base = loadConfig({ NODE_ENV: 'test', DATABASE_URL: serverUrl, REDIS_URL: redisUrl, ...UNREACHED_RATE_LIMITS });
  return startTestApp(
    {
      // The app is given its database; the URL only satisfies the configuration's rule.
      databaseUrl: serverUrl,
      // The server's maintenance database: a primary, never a standby.
      db: { ...base.db, pooler: serverPooler, readUrl: serverUrl, readMaxLagMs: 1000 },
      rateLimits: { ...base.rateLimits, redisKeyPrefix: prefix },
    },
    undefined,
    { logger: { level: 'warn', stream } },
  );
}

let t: TestApp | undefined;
before(async () => {
  if (serverUrl) t = await startWithReplica(TEST_REDIS_URL, logStream);
});
after(async () => {
  await t?.close();
  await dropRedisKeys(prefix);
});

test('a replica URL that is not a standby: warned once, the primary serves collection reads, writes record their position', async (context) => {
  if (!t) {
    context.diagnostic('the embedded database has no replicas: checked on PostgreSQL');
    return;
  }
  const warning = lines.find((line) => line.includes('is not a standby server'));
  assert.ok(warning, `the misconfiguration is logged: ${lines.join('\n')}`);
  assert.equal(JSON.parse(warning).level, 40);

  const { user, token } = await createCustomer(t);
  const created = await placeOrder(t, token, 1);
  assert.equal(created.statusCode, 201, created.body);

  const redis = new Redis(TEST_REDIS_URL);
  try {
    const key = `${prefix}written:test-client:${user.id}`;
    assert.match((await redis.get(key)) ?? '', /^[0-9a-f]{16}$/, 'the position of the write, as fixed-width hex');
    const ttl = await redis.pttl(key);
    assert.ok(ttl > 0 && ttl <= 2000, `kept for the bound plus a second, no longer (${ttl} ms)`);
  } finally {
    redis.disconnect();
  }

  const listed = await t.request(token, { method: 'GET', url: '/v2/orders' });
  assert.equal(listed.statusCode, 200);
  assert.deepEqual(
    (listed.json() as { data: { id: number }[] }).data.map((order) => order.id),
    [(created.json() as { id: number }).id],
  );
  const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.match(metrics, /^orderpay_db_collection_reads_total\{target="primary"\} [1-9]\d*$/m);
  assert.doesNotMatch(metrics, /^orderpay_db_collection_reads_total\{target="replica"\}/m);
  assert.match(metrics, /^orderpay_db_replica_usable 0$/m);
});

test('Redis unreachable: writes are answered and the unrecorded position is logged; collection reads come from the primary', async (context) => {
  if (!serverUrl) {
    context.diagnostic('the embedded database has no replicas: checked on PostgreSQL');
    return;
  }
  const { lines: logged, stream } = collectLines();
  const app = await startWithReplica(UNREACHABLE_REDIS_URL, stream);
  try {
    const { token } = await createCustomer(app);
    const created = await placeOrder(app, token, 2);
    assert.equal(created.statusCode, 201, created.body);
    assert.ok(
      logged.some((line) => line.includes('the position of this write could not be recorded')),
      `the unrecorded position is logged: ${logged.join('\n')}`,
    );
    const listed = await app.request(token, { method: 'GET', url: '/v2/orders' });
    assert.equal(listed.statusCode, 200);
    assert.equal((listed.json() as { data: unknown[] }).data.length, 1);
  } finally {
    await app.close();
  }
});
