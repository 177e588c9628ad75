// Stored responses outlive the process: a payment made through one app instance is replayed,
// byte for byte, by a fresh instance over the same database after the first one shut down and
// closed its connections (PGlite: on disk, closed and reopened; PostgreSQL: a new pool).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { signAccessToken } from '../../../src/auth/access-token.ts';
import { ensureActiveSigningKey } from '../../../src/auth/keys.store.ts';
import { loadConfig } from '../../../src/config.ts';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Db } from '../../../src/db/db.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { ALL_SCOPES, PUBLIC_URL, UNREACHED_RATE_LIMITS } from '../../helpers/app.ts';
import { createEmptyServerDatabase, DB_OPTIONS, serverUrl } from '../../helpers/db.ts';
import { createOrder, createUser } from '../../helpers/factories.ts';
import { assertMatchesOpenApi } from '../../helpers/openapi.ts';
import { expectProblem } from '../../helpers/problems.ts';
import {
  customerOwner,
  expectPaymentCreated,
  expectReplayOf,
  findKeyRow,
  newKey,
  orderState,
  paymentsOfCustomer,
} from './keyed-requests.ts';

/** A database that can be opened again after it was closed, as a restarted process would. */
async function createReopenableDatabase(): Promise<{ open(): Promise<Db>; drop(): Promise<void> }> {
  if (serverUrl) {
    const empty = await createEmptyServerDatabase();
    return { open: () => createDatabase({ databaseUrl: empty.url, dataDir: '', db: DB_OPTIONS }), drop: () => empty.drop() };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'orderpay-restart-'));
  return {
    open: () => createDatabase({ databaseUrl: undefined, dataDir: path.join(dir, 'data'), db: DB_OPTIONS }),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

const config = loadConfig({ NODE_ENV: 'test', PUBLIC_URL, LOG_LEVEL: 'silent', ...UNREACHED_RATE_LIMITS });

async function startInstance(db: Db): Promise<FastifyInstance> {
  const app = await buildApp(config, db, { logger: false });
  await app.ready();
  return app;
}

async function post(app: FastifyInstance, token: string, url: string, body: unknown, key: string): Promise<LightMyRequestResponse> {
  const res = await app.inject({
    method: 'POST',
    url,
    payload: body as string,
    headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
  });
  assertMatchesOpenApi(app, 'POST', url, res);
  return res;
}

describe('Idempotency-Key replays across a restart', () => {
  let database: Awaited<ReturnType<typeof createReopenableDatabase>>;
  let db: Db | undefined;
  let app: FastifyInstance | undefined;

  before(async () => {
    database = await createReopenableDatabase();
  });
  after(async () => {
    await app?.close();
    await db?.close();
    await database.drop();
  });

  test('a payment, a stored refusal and a key bound to its body: all as they were, through a fresh instance on the same database', async () => {
    db = await database.open();
    await migrate(db);
    app = await startInstance(db);
    const user = await createUser(db);
    const key = await ensureActiveSigningKey(db);
    const token = await signAccessToken(key, {
      issuer: config.issuer,
      audience: config.audience,
      subject: String(user.id),
      clientId: 'test-client',
      scope: ALL_SCOPES.join(' '),
    });
    const order = await createOrder(db, user.id, { price: 6100, currency: 'EUR' });
    const unpayable = await createOrder(db, user.id, { price: 6200, currency: 'EUR' });
    const [paidKey, refusedKey] = [newKey(), newKey()];
    const paid = { amount: 6100, currency: 'EUR', orderId: order.id };
    const refused = { amount: 6201, currency: 'EUR', orderId: unpayable.id };

    const first = await post(app, token, '/v1/payments', paid, paidKey);
    const payment = expectPaymentCreated(first, { amount: 6100, currency: 'EUR', orderId: order.id, customerId: user.id }, '/v1');
    const refusal = await post(app, token, '/payments', refused, refusedKey);
    expectProblem(
      refusal,
      422,
      'PAYMENT_AMOUNT_MISMATCH',
      '/payments',
      "The order's total is 6200 EUR; a payment of it must be for exactly that.",
      {
        expectedAmount: 6200,
        expectedCurrency: 'EUR',
        errors: [{ pointer: '/amount', detail: 'must equal the order total 6200' }],
      },
    );
    const storedBefore = await findKeyRow(db, customerOwner(user.id), paidKey);

    // Shut down as main.ts does: the app, then every database connection.
    await app.close();
    await db.close();
    app = undefined;
    db = await database.open();
    app = await startInstance(db);

    expectReplayOf(first, await post(app, token, '/v1/payments', paid, paidKey));
    const replayedRefusal = await post(app, token, '/payments', refused, refusedKey);
    expectReplayOf(refusal, replayedRefusal);
    assert.equal(replayedRefusal.json().requestId, refusal.headers['x-request-id']);
    expectProblem(
      await post(app, token, '/v1/payments', { ...paid, amount: 6101 }, paidKey),
      422,
      'IDEMPOTENCY_KEY_REUSED',
      '/v1/payments',
      'This Idempotency-Key was used with a different request body; a retry must repeat the original request exactly. Use a new key for a new request.',
    );

    assert.deepEqual(await findKeyRow(db, customerOwner(user.id), paidKey), storedBefore);
    assert.deepEqual(
      (await paymentsOfCustomer(db, user.id)).map((p) => p.id),
      [payment.id],
    );
    assert.deepEqual(await orderState(db, order.id), { status: 'paid', version: 2 });
    assert.deepEqual(await orderState(db, unpayable.id), { status: 'pending', version: 1 });
  });
});
