// Exactly-once payments across real `orderpay serve` processes: a burst of retries of one
// Idempotency-Key spread over two processes on one PostgreSQL database, and a process SIGKILLed in
// the middle of a payment (before and after its commit), then restarted on the same database.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type { Db } from '../../src/db/db.ts';
import { embeddedSocketPath } from '../../src/db/embedded-socket-frames.ts';
import { migrate } from '../../src/db/migrate.ts';
import { ERRORS } from '../../src/core/errors.ts';
import type { FailpointName } from '../../src/core/failpoints.ts';
import { UNREACHED_RATE_LIMITS } from '../helpers/app.ts';
import { serverUrl } from '../helpers/db.ts';
import { createOrder, createUser } from '../helpers/factories.ts';
import {
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  parseJsonOutput,
  PUBLIC_URL,
  runOrderpay,
  startServe,
  withTargetDatabase,
  type Env,
  type Exit,
  type ServeProcess,
  type TargetDatabase,
} from './orderpay-process.ts';

// This file's share of the ports, so suites running beside it never collide.
// killBefore: one pair per recovery point, 10 apart.
const PORTS = { burst: [29621, 29622], burstOfOrder: [29623, 29624], killBefore: [29631, 29632], killAfter: [29627, 29628] };
const BURST = 50;
const PRICE = 4200;
const CLEAN_EXIT: Exit = { code: 0, signal: null };

after(cleanUpProcessesAndDatabases);

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

interface PaymentRequest {
  amount: number;
  currency: string;
  orderId?: number;
}

interface Payer {
  userId: number;
  orderId: number;
  token: string;
}

/** A customer of its own with one pending order of PRICE EUR, and a token the processes accept. */
async function createPayer(target: TargetDatabase): Promise<Payer> {
  const { user, order } = await withTargetDatabase(target, async (db) => {
    await migrate(db);
    const user = await createUser(db);
    return { user, order: await createOrder(db, user.id, { price: PRICE, currency: 'EUR' }) };
  });
  const issued = await runOrderpay(
    ['tokens', 'issue', '--email', user.email, '--scope', 'payments:write payments:read', '--expires-in', '3600', '--json'],
    commandEnv(target.env),
  );
  assert.equal(issued.code, 0, issued.stderr);
  return { userId: user.id, orderId: order.id, token: parseJsonOutput(issued.stdout).access_token as string };
}

/** A burst of retries spends the payments budget too: budgets it cannot reach, as in the other tests. */
function serveEnv(target: TargetDatabase, port: number, extra: Env = {}): Env {
  return commandEnv({ ...target.env, NODE_ENV: 'test', PORT: String(port), ...UNREACHED_RATE_LIMITS, ...extra });
}

/** Starts one process per port, runs fn, then stops them all (SIGTERM) and asserts clean exits. */
async function withServers<T>(target: TargetDatabase, ports: number[], fn: (servers: ServeProcess[]) => Promise<T>): Promise<T> {
  const servers: ServeProcess[] = [];
  const stopAll = () => Promise.all(servers.map((server) => server.stop()));
  let result: T;
  try {
    for (const port of ports) servers.push(await startServe(serveEnv(target, port)));
    result = await fn(servers);
  } catch (error) {
    await stopAll();
    throw error;
  }
  assert.deepEqual(
    await stopAll(),
    servers.map(() => CLEAN_EXIT),
    servers.map((server) => server.stderr()).join('\n'),
  );
  return result;
}

async function postPayment(server: ServeProcess, token: string, key: string, body: PaymentRequest): Promise<Answer> {
  const response = await fetch(`${server.listening.url}/v1/payments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

function assertKeyInUse(answer: Answer): void {
  assert.equal(answer.status, 409, answer.body);
  assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.equal(answer.headers.get('cache-control'), 'no-store');
  assert.equal(answer.headers.get('retry-after'), '1');
  for (const name of ['location', 'etag', 'idempotent-replayed']) assert.equal(answer.headers.get(name), null, name);
  assert.deepEqual(JSON.parse(answer.body), {
    type: `${PUBLIC_URL}/problems/idempotency-key-in-use`,
    title: ERRORS.IDEMPOTENCY_KEY_IN_USE.title,
    status: 409,
    detail: 'A request with this Idempotency-Key is still being processed; retry after the Retry-After delay to receive its result.',
    instance: '/v1/payments',
    code: 'IDEMPOTENCY_KEY_IN_USE',
    requestId: answer.headers.get('x-request-id'),
  });
}

/** Posts until the key is no longer in use (a bounded wait, not a timing assertion). */
async function retryWhileInUse(
  server: ServeProcess,
  token: string,
  key: string,
  body: PaymentRequest,
  deadlineMs = 60_000,
): Promise<Answer> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const answer = await postPayment(server, token, key, body);
    if (answer.status !== 409) return answer;
    assertKeyInUse(answer);
    if (Date.now() > deadline) assert.fail(`Idempotency-Key ${key} was still in use after ${deadlineMs} ms`);
    await sleep(Number(answer.headers.get('retry-after')) * 1000);
  }
}

interface PaymentBody {
  id: number;
  createdAt: string;
  updatedAt: string;
}

/** A 201 of the payment: the whole representation and its headers; replayed or not as said. */
function assertPaymentCreated(answer: Answer, expected: { orderId: number | null; customerId: number; replayed: boolean }): PaymentBody {
  assert.equal(answer.status, 201, answer.body);
  const payment = JSON.parse(answer.body) as PaymentBody;
  assert.deepEqual(payment, {
    id: payment.id,
    status: 'succeeded',
    amount: PRICE,
    currency: 'EUR',
    amountRefunded: 0,
    orderId: expected.orderId,
    customerId: expected.customerId,
    declineCode: null,
    createdAt: payment.createdAt,
    // When the processor decided: the payment was recorded just before it asked.
    updatedAt: payment.updatedAt,
  });
  assert.ok(payment.updatedAt >= payment.createdAt);
  assert.ok(Number.isInteger(payment.id) && payment.id > 0);
  // RFC 3339 in UTC with milliseconds (docs/api.md "Conventions").
  assert.match(payment.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.equal(answer.headers.get('cache-control'), 'no-store');
  assert.equal(answer.headers.get('location'), `${PUBLIC_URL}/v1/payments/${payment.id}`);
  assert.equal(answer.headers.get('etag'), `"pa${payment.id}.1.v1"`);
  assert.equal(answer.headers.get('idempotent-replayed'), expected.replayed ? 'true' : null);
  return payment;
}

/** A replay: the stored status, the same bytes and representation headers, marked as replayed. */
function assertReplayOf(answer: Answer, original: Answer): void {
  assert.equal(answer.status, original.status, answer.body);
  assert.equal(answer.body, original.body);
  for (const name of ['content-type', 'cache-control', 'location', 'etag'])
    assert.equal(answer.headers.get(name), original.headers.get(name), name);
  assert.equal(answer.headers.get('idempotent-replayed'), 'true');
}

interface PaymentState {
  /** named: the processor has named the charge (its reference is recorded: the recovery point before confirming). */
  payments: { id: number; orderId: number | null; amount: number; status: string; createdAt: string; named: boolean }[];
  order: { status: string; version: number };
  keys: { state: string; method: string; path: string; responseStatus: number | null; responseBody: string | null }[];
}

/** What the database holds for this payer and key. */
async function readPaymentState(db: Db, payer: Payer, key: string): Promise<PaymentState> {
  const payments = await db.query<PaymentState['payments'][number]>(
    `SELECT id, order_id AS "orderId", amount, status, created_at AS "createdAt", processor_reference IS NOT NULL AS named
       FROM payments WHERE customer_id = $1 ORDER BY id`,
    [payer.userId],
  );
  const orders = await db.query<PaymentState['order']>('SELECT status, version FROM orders WHERE id = $1', [payer.orderId]);
  const keys = await db.query<PaymentState['keys'][number]>(
    `SELECT state, method, path, response_status AS "responseStatus", response_body AS "responseBody"
       FROM idempotency_keys WHERE key = $1 AND subject = $2`,
    [key, String(payer.userId)],
  );
  return { payments: payments.rows, order: orders.rows[0]!, keys: keys.rows };
}

/** The state a performed payment leaves: one payment, the order paid once, the 201 stored. */
function expectPaid(created: Answer, payment: PaymentBody, orderId: number | null): Omit<PaymentState, 'order'> {
  return {
    payments: [{ id: payment.id, orderId, amount: PRICE, status: 'succeeded', createdAt: payment.createdAt, named: true }],
    keys: [{ state: 'completed', method: 'POST', path: '/v1/payments', responseStatus: 201, responseBody: created.body }],
  };
}

/**
 * The burst: BURST identical requests at once, alternating between the servers. Exactly one
 * performs the payment; every other one is a byte-identical replay of its 201 or a 409 while it is
 * in flight; no 5xx. Once it is done, a retry on each server replays the 201.
 */
async function sendBurst(
  servers: ServeProcess[],
  payer: Payer,
  key: string,
  body: PaymentRequest,
): Promise<{ created: Answer; payment: PaymentBody }> {
  const answers = await Promise.all(
    Array.from({ length: BURST }, (_, i) => postPayment(servers[i % servers.length]!, payer.token, key, body)),
  );
  assert.deepEqual(
    answers.filter((a) => a.status !== 201 && a.status !== 409).map((a) => `${a.status} ${a.body}`),
    [],
    'only 201 and 409',
  );
  const performed = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
  assert.equal(performed.length, 1, 'exactly one request performs the payment');
  const created = performed[0]!;
  const payment = assertPaymentCreated(created, { orderId: body.orderId ?? null, customerId: payer.userId, replayed: false });
  for (const answer of answers) {
    if (answer === created) continue;
    if (answer.status === 409) assertKeyInUse(answer);
    else assertReplayOf(answer, created);
  }
  for (const server of servers) assertReplayOf(await retryWhileInUse(server, payer.token, key, body), created);
  return { created, payment };
}

/**
 * Reads what a killed process left without touching it: the embedded data directory is read
 * through a copy, so its stale lock stays for the restarted process to recover.
 */
async function readLeftByCrash<T>(target: TargetDatabase, fn: (db: Db) => Promise<T>): Promise<T> {
  if (!target.dataDir) return withTargetDatabase(target, fn);
  const parent = await mkdtemp(path.join(tmpdir(), 'orderpay-crashed-'));
  try {
    const copy = path.join(parent, 'data');
    // Without the socket the killed server left (fs.cp refuses to copy a socket).
    await cp(target.dataDir, copy, { recursive: true, filter: (source) => source !== embeddedSocketPath(target.dataDir!) });
    return await withTargetDatabase({ ...target, dataDir: copy }, fn);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

const lockOwner = (target: TargetDatabase) => readFileSync(`${target.dataDir}.lock`, 'utf8');

/** Starts a process that SIGKILLs itself at the failpoint, posts the payment; returns what it left. */
async function crashDuringPayment(
  target: TargetDatabase,
  port: number,
  failpoint: FailpointName,
  payer: Payer,
  key: string,
  body: PaymentRequest,
): Promise<PaymentState> {
  const crashing = await startServe(
    serveEnv(target, port, { ORDERPAY_FAILPOINTS: `${failpoint}=kill`, ORDERPAY_IDEMPOTENCY_LOCK_SECONDS: '1' }),
  );
  // The connection dies with the process: no status, no body.
  await assert.rejects(postPayment(crashing, payer.token, key, body), { name: 'TypeError', message: 'fetch failed' });
  assert.deepEqual(await crashing.waitForExit(), { code: null, signal: 'SIGKILL' });
  if (target.dataDir) assert.equal(lockOwner(target), String(crashing.child.pid), 'a killed process cannot remove its lock');
  return readLeftByCrash(target, (db) => readPaymentState(db, payer, key));
}

/** The restart, without the failpoint, on the same database; its first retry not in use, and one more. */
async function retryAfterRestart(
  target: TargetDatabase,
  port: number,
  payer: Payer,
  key: string,
  body: PaymentRequest,
): Promise<{ first: Answer; again: Answer }> {
  return withServers(target, [port], async ([restarted]) => {
    if (target.dataDir) assert.equal(lockOwner(target), String(restarted!.child.pid), 'the restarted process took over the stale lock');
    const first = await retryWhileInUse(restarted!, payer.token, key, body);
    return { first, again: await postPayment(restarted!, payer.token, key, body) };
  });
}

const burstServers = serverUrl
  ? 'two orderpay serve processes on one PostgreSQL database'
  : 'one orderpay serve process (an embedded data directory admits one process; the two-process run needs TEST_DATABASE_URL)';

describe(`one Idempotency-Key, ${BURST} concurrent requests, ${burstServers}`, () => {
  test('a payment without an order is made exactly once and replayed to every later retry', async () => {
    const target = await createTargetDatabase();
    const payer = await createPayer(target);
    const key = `burst-${randomUUID()}`;
    const ports = serverUrl ? PORTS.burst : PORTS.burst.slice(0, 1);
    const { created, payment } = await withServers(target, ports, (servers) =>
      sendBurst(servers, payer, key, { amount: PRICE, currency: 'EUR' }),
    );

    const state = await withTargetDatabase(target, (db) => readPaymentState(db, payer, key));
    assert.deepEqual(state, { ...expectPaid(created, payment, null), order: { status: 'pending', version: 1 } });
  });

  test('a payment of an order is made exactly once and the order is paid once', async () => {
    const target = await createTargetDatabase();
    const payer = await createPayer(target);
    const key = `burst-${randomUUID()}`;
    const ports = serverUrl ? PORTS.burstOfOrder : PORTS.burstOfOrder.slice(0, 1);
    const body = { amount: PRICE, currency: 'EUR', orderId: payer.orderId };
    const { created, payment } = await withServers(target, ports, (servers) => sendBurst(servers, payer, key, body));

    const state = await withTargetDatabase(target, (db) => readPaymentState(db, payer, key));
    // version 2: one status change, pending → paid.
    assert.deepEqual(state, { ...expectPaid(created, payment, payer.orderId), order: { status: 'paid', version: 2 } });
  });
});

describe(`orderpay serve SIGKILLed in the middle of a payment, then restarted on the same ${DATABASE_LABEL} database`, () => {
  // Each recovery point of a payment, and whether the processor had named the charge when the process died there.
  const beforeTheOutcome: { point: FailpointName; named: boolean }[] = [
    { point: 'idempotency.after-recovery-point', named: false },
    { point: 'payments.before-confirm', named: true },
    { point: 'payments.before-outcome', named: true },
    { point: 'idempotency.before-commit', named: true },
  ];
  for (const [i, { point, named }] of beforeTheOutcome.entries()) {
    test(`killed at ${point}: the payment kept processing, nothing paid; after the restart the retry gets it paid once`, async () => {
      const target = await createTargetDatabase();
      const payer = await createPayer(target);
      const key = `crash-${randomUUID()}`;
      const body = { amount: PRICE, currency: 'EUR', orderId: payer.orderId };
      const crashPort = PORTS.killBefore[0]! + 10 * i;
      const restartPort = PORTS.killBefore[1]! + 10 * i;

      const crashed = await crashDuringPayment(target, crashPort, point, payer, key, body);
      assert.deepEqual(
        crashed.payments.map((p) => [p.orderId, p.status, p.named]),
        [[payer.orderId, 'processing', named]],
      );
      assert.deepEqual(crashed.order, { status: 'pending', version: 1 });
      assert.deepEqual(crashed.keys, [
        { state: 'in_flight', method: 'POST', path: '/v1/payments', responseStatus: null, responseBody: null },
      ]);

      // The restarted process's completer may pay it before the retry arrives: either way, one payment, the one recorded.
      const { first, again } = await retryAfterRestart(target, restartPort, payer, key, body);
      const payment = assertPaymentCreated(first, { orderId: payer.orderId, customerId: payer.userId, replayed: false });
      assert.equal(payment.id, crashed.payments[0]!.id);
      assertReplayOf(again, first);
      const state = await withTargetDatabase(target, (db) => readPaymentState(db, payer, key));
      assert.deepEqual(state, { ...expectPaid(first, payment, payer.orderId), order: { status: 'paid', version: 2 } });
    });
  }

  test('killed after the commit: the payment stands though no answer was sent; after the restart the retry replays its 201', async () => {
    const target = await createTargetDatabase();
    const payer = await createPayer(target);
    const key = `crash-${randomUUID()}`;
    const body = { amount: PRICE, currency: 'EUR', orderId: payer.orderId };
    const [crashPort, restartPort] = PORTS.killAfter as [number, number];

    const crashed = await crashDuringPayment(target, crashPort, 'idempotency.after-commit', payer, key, body);

    const { first, again } = await retryAfterRestart(target, restartPort, payer, key, body);
    const payment = assertPaymentCreated(first, { orderId: payer.orderId, customerId: payer.userId, replayed: true });
    assertReplayOf(again, first);
    // The replayed bytes are the response stored by the commit the client never heard of.
    const paid = { ...expectPaid(first, payment, payer.orderId), order: { status: 'paid', version: 2 } };
    assert.deepEqual(crashed, paid);
    assert.deepEqual(await withTargetDatabase(target, (db) => readPaymentState(db, payer, key)), paid);
  });
});
