// Whatever a receiver answers, a delivery is sent exactly as often as the retry schedule says
// (docs/webhooks.md "Delivery"): each answer below (NUL in a body or a status line, bytes that are
// not UTF-8, a body too large or too slow, a status that is no HTTP status, a head the HTTP parser
// refuses, a hang-up, silence) comes from a raw socket; the sends each receiver saw are counted
// against the schedule, the attempts listed through the API (and its OpenAPI document) with what
// the log kept of the answer, and every failed attempt is one warn line. Then the cases where an
// attempt cannot be recorded: the database refuses the row, or the process never records it.
// Port 29840.
import { SYSTEM_ACTOR } from '../../src/core/actor.ts';
import assert from 'node:assert/strict';
import type net from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { recordEvent } from '../../src/events/events.store.ts';
import { createStaffToken } from '../helpers/actors.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createProduct } from '../helpers/factories.ts';
import { TIMESTAMP } from '../http/webhooks/webhooks.ts';
import {
  deleteWebhookEndpoints,
  eventually,
  insertWebhookEndpoint,
  type RawReceiver,
  startRawReceiver,
  type TestEndpoint,
} from '../helpers/webhooks.ts';

const ATTEMPT_TIMEOUT_MS = 1000;
// Two retries at once: three sends at most, and no wait between them.
const WEBHOOKS = loadConfig({
  NODE_ENV: 'test',
  ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
  ORDERPAY_WEBHOOKS_RETRY_SCHEDULE: '0,0',
  ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '20',
}).webhooks;
const SCHEDULED_SENDS = WEBHOOKS.retryScheduleSeconds.length + 1;

interface ShownAttempt {
  attemptedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
}

/** A status line, Content-Length and the end of the head, as bytes. */
const head = (status: string, length: number) => Buffer.from(`HTTP/1.1 ${status}\r\nContent-Length: ${length}\r\n\r\n`, 'latin1');
/** Answers with these bytes (latin1: one byte per character) and closes. */
const bytes = (text: string | Buffer) => (socket: net.Socket) => socket.end(typeof text === 'string' ? Buffer.from(text, 'latin1') : text);

/** A response that never ends: writes its head, then `chunk` for as long as the client reads. */
function endless(status: string, chunk: Buffer) {
  return function answerEndlessly(socket: net.Socket) {
    socket.write(head(status, 10 * 1024 * 1024));
    const pump = () => {
      while (!socket.destroyed && socket.write(chunk)) {
        // Until the socket's buffer is full.
      }
      if (!socket.destroyed) socket.once('drain', pump);
    };
    pump();
  };
}

/** A head, then one byte of body every 20 ms until the client goes. */
function drip(status: string) {
  return function answerSlowly(socket: net.Socket) {
    socket.write(Buffer.concat([head(status, 1000), Buffer.from('d')]));
    const timer = setInterval(() => socket.write('d'), 20);
    socket.on('close', () => clearInterval(timer));
  };
}

const NOT_UTF8 = Buffer.from([0x6f, 0x6b, 0x20, 0xff, 0xfe, 0x20, 0xc0, 0x80, 0x20, 0xed, 0xa0, 0x80, 0x20, 0x01, 0x1b, 0x7f]);
const CUT_CHARACTER = Buffer.from(`${'x'.repeat(1023)}€€`, 'utf8');

/** What the log keeps of an attempt, less its time and duration. */
type KeptAnswer = Pick<ShownAttempt, 'statusCode' | 'error' | 'responseBody'>;

interface ReceiverCase {
  answer: (socket: net.Socket) => void;
  /** Every attempt records this (each attempt answers alike). */
  attempt: KeptAnswer;
  /** A 2xx: one send; anything else: the schedule's. */
  succeeds?: boolean;
  /** The body varies with timing: each must match, and stands in for attempt.responseBody. */
  bodyPattern?: RegExp;
}

const CASES: Record<string, ReceiverCase> = {
  'nul-ok': {
    answer: bytes('HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nok\0done'),
    succeeds: true,
    attempt: { statusCode: 200, error: null, responseBody: 'ok\u2400done' },
  },
  'nul-error': {
    answer: bytes('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 7\r\n\r\nfail\0ed'),
    attempt: { statusCode: 500, error: null, responseBody: 'fail\u2400ed' },
  },
  'not-utf8': {
    answer: bytes(Buffer.concat([head('200 OK', NOT_UTF8.length), NOT_UTF8])),
    succeeds: true,
    // WHATWG decoding: each byte that starts no valid sequence is one U+FFFD; control characters stay.
    attempt: { statusCode: 200, error: null, responseBody: 'ok \uFFFD\uFFFD \uFFFD\uFFFD \uFFFD\uFFFD\uFFFD \u0001\u001b\u007f' },
  },
  huge: {
    answer: endless('503 Service Unavailable', Buffer.from('a\0'.repeat(4096), 'latin1')),
    attempt: { statusCode: 503, error: null, responseBody: 'a\u2400'.repeat(512) },
  },
  'cut-character': {
    answer: bytes(Buffer.concat([head('500 Oops', CUT_CHARACTER.length), CUT_CHARACTER])),
    // The first KiB ends inside a €: the byte kept of it is not UTF-8 on its own.
    attempt: { statusCode: 500, error: null, responseBody: `${'x'.repeat(1023)}\uFFFD` },
  },
  'status-999': {
    answer: bytes('HTTP/1.1 999 Odd\r\nContent-Length: 2\r\n\r\nno'),
    attempt: { statusCode: null, error: 'answered with status 999, which is not an HTTP status (100-599)', responseBody: 'no' },
  },
  'status-000': {
    answer: bytes('HTTP/1.1 000 Zero\r\nContent-Length: 2\r\n\r\nno'),
    attempt: { statusCode: null, error: 'answered with status 0, which is not an HTTP status (100-599)', responseBody: 'no' },
  },
  'reason-nul': {
    answer: bytes('HTTP/1.1 200 O\0K\r\nContent-Length: 2\r\n\r\nok'),
    succeeds: true,
    attempt: { statusCode: 200, error: null, responseBody: 'ok' },
  },
  'header-nul': {
    answer: bytes('HTTP/1.1 200 OK\r\nX-Note: a\0b\r\nContent-Length: 2\r\n\r\nok'),
    attempt: { statusCode: null, error: 'HPE_INVALID_HEADER_TOKEN: Parse Error: Invalid header value char', responseBody: null },
  },
  'header-huge': {
    answer: bytes(`HTTP/1.1 200 OK\r\nX-Pad: ${'p'.repeat(64 * 1024)}\r\nContent-Length: 2\r\n\r\nok`),
    attempt: { statusCode: null, error: 'HPE_HEADER_OVERFLOW: Parse Error: Header overflow', responseBody: null },
  },
  'no-status-line': {
    answer: bytes('ok\0done\r\n\r\n'),
    attempt: { statusCode: null, error: 'HPE_INVALID_CONSTANT: Parse Error: Expected HTTP/, RTSP/ or ICE/', responseBody: null },
  },
  'hang-up': {
    answer: (socket) => socket.destroy(),
    attempt: { statusCode: null, error: 'ECONNRESET: socket hang up', responseBody: null },
  },
  'switching-protocols': {
    answer: bytes('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\0\0'),
    attempt: { statusCode: null, error: `timed out: no response within ${ATTEMPT_TIMEOUT_MS} ms`, responseBody: null },
  },
  'slow-head': {
    answer: (socket) => socket.write('HTTP/1.1 200 OK\r\nX-Slow: '),
    attempt: { statusCode: null, error: `timed out: no response within ${ATTEMPT_TIMEOUT_MS} ms`, responseBody: null },
  },
  'slow-body': {
    answer: drip('502 Bad Gateway'),
    // Cut at the deadline: the status is the answer, the body what had come.
    attempt: { statusCode: 502, error: null, responseBody: null },
    bodyPattern: /^d{1,1000}$/,
  },
  'short-body': {
    answer: bytes('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'),
    succeeds: true,
    attempt: { statusCode: 200, error: null, responseBody: 'abc' },
  },
};

const logLines: Record<string, unknown>[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _encoding, callback) {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
    callback();
  },
});

// The app's failpoint, armed by one test.
let failBeforeRecord = false;

let t: TestApp;
let receiver: RawReceiver;
let token: string;
const endpoints = new Map<string, TestEndpoint>();

before(async () => {
  t = await startTestApp({ webhooks: WEBHOOKS }, undefined, {
    webhookAttemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
    // The default level: what an operator sees.
    logger: { level: 'info', stream: logStream },
    failpoint: (name) => {
      if (name === 'webhooks.before-record' && failBeforeRecord) throw new Error('failpoint webhooks.before-record');
    },
  });
  token = await createStaffToken(t, ['webhooks:read']);
  receiver = await startRawReceiver(29840, {
    ...Object.fromEntries(Object.entries(CASES).map(([path, { answer }]) => [path, answer])),
    poison: bytes('HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\npoison'),
    ok: bytes('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'),
  });
});
after(async () => {
  await receiver?.close();
  await t?.close();
});

interface ShownDelivery {
  id: number;
  state: string;
  attemptCount: number;
  attempts: ShownAttempt[];
}

/** The endpoint's one delivery, as GET …/deliveries shows it (the response checked against the OpenAPI document). */
async function shownDelivery(endpoint: TestEndpoint): Promise<ShownDelivery> {
  const res = await t.request(token, { method: 'GET', url: `/v2/webhook-endpoints/${endpoint.id}/deliveries` });
  assert.equal(res.statusCode, 200, res.body);
  const { data } = res.json() as { data: ShownDelivery[] };
  assert.equal(data.length, 1);
  return data[0]!;
}

async function isFailing(endpoint: TestEndpoint): Promise<boolean> {
  const { rows } = await t.db.query<{ failing: boolean }>(
    'SELECT failing_since IS NOT NULL AS failing FROM webhook_endpoints WHERE id = $1',
    [endpoint.id],
  );
  return rows[0]!.failing;
}

/** Waits until every delivery to these endpoints is succeeded or failed: then none is sent again. */
async function settled(...waited: TestEndpoint[]): Promise<void> {
  await eventually(
    async () => {
      const { rows } = await t.db.query<{ open: number }>(
        `SELECT count(*)::int AS open FROM webhook_deliveries WHERE endpoint_id = ANY($1::bigint[]) AND state = 'pending'`,
        [waited.map((e) => e.id)],
      );
      return rows[0]!.open === 0;
    },
    'every delivery succeeded or failed',
    60_000,
  );
}

const warnings = (deliveryId: number) => logLines.filter((line) => line.level === 40 && line.deliveryId === deliveryId);

/** One warn line per failed attempt, numbered; the last says the schedule is used up; ids, reason, no secret, a short excerpt. */
function assertFailureLines(lines: Record<string, unknown>[], endpoint: TestEndpoint, shown: ShownDelivery): void {
  assert.equal(lines.length, shown.attemptCount);
  lines.forEach((line, index) => {
    const attempt = shown.attempts[index]!;
    assert.equal(line.endpointId, endpoint.id);
    assert.equal(line.deliveryId, shown.id);
    assert.match(String(line.eventId), /^evt_/);
    assert.equal(line.attempt, index + 1);
    assert.equal(line.reason, attempt.error ?? `HTTP ${attempt.statusCode}`);
    const last = index + 1 === lines.length;
    assert.equal(line.msg, last ? 'webhook attempt failed: the retry schedule is used up' : 'webhook attempt failed: retried later');
    assert.equal(line.state, last ? 'failed' : 'pending');
    const excerpt = line.responseExcerpt as string | undefined;
    assert.equal(excerpt, attempt.responseBody?.slice(0, 100));
    const text = JSON.stringify(line);
    assert.ok(!text.includes('whsec_') && !text.includes(endpoint.secret.slice('whsec_'.length)), text);
    assert.ok(!text.includes('127.0.0.1:29840'), `no URL in the log: ${text}`);
  });
}

describe('whatever a receiver answers: sent as often as the schedule says, each attempt listed with what was kept', () => {
  const shown = new Map<string, ShownDelivery>();
  const failing = new Map<string, boolean>();

  before(async () => {
    for (const path of Object.keys(CASES)) {
      endpoints.set(path, await insertWebhookEndpoint(t.db, t.config, { url: receiver.url(path), enabledEvents: ['product.updated'] }));
    }
    // One event: one delivery to each receiver, all under way at once.
    await recordEvent(t.db, 'product.updated', await createProduct(t.db), SYSTEM_ACTOR);
    await settled(...endpoints.values());
    for (const [path, endpoint] of endpoints) {
      shown.set(path, await shownDelivery(endpoint));
      failing.set(path, await isFailing(endpoint));
    }
    // No later event of another test goes to them.
    await deleteWebhookEndpoints(t.db, ...endpoints.values());
  });

  for (const [path, { attempt, succeeds, bodyPattern }] of Object.entries(CASES)) {
    const sends = succeeds ? 1 : SCHEDULED_SENDS;
    test(`${path}: ${sends} send(s), ${succeeds ? 'succeeded' : 'failed, the endpoint failing'}; every attempt listed with what was kept`, () => {
      const delivery = shown.get(path)!;
      assert.equal(receiver.sends(path), sends);
      assert.equal(delivery.state, succeeds ? 'succeeded' : 'failed');
      assert.equal(delivery.attemptCount, sends);
      assert.equal(delivery.attempts.length, sends);
      for (const { attemptedAt, durationMs, ...listed } of delivery.attempts) {
        assert.match(attemptedAt, TIMESTAMP);
        assert.ok(durationMs >= 0 && durationMs < ATTEMPT_TIMEOUT_MS + 1000, `${durationMs} ms`);
        if (bodyPattern) {
          assert.match(listed.responseBody ?? '', bodyPattern);
          assert.deepEqual({ ...listed, responseBody: null }, attempt);
        } else assert.deepEqual(listed, attempt);
      }
      assert.equal(failing.get(path), !succeeds);
      const lines = warnings(delivery.id);
      if (succeeds) assert.deepEqual(lines, []);
      else assertFailureLines(lines, endpoints.get(path)!, delivery);
    });
  }
});

/** The endpoint's delivery, failed after the schedule's sends, every attempt with no answer and this error. */
async function failedWithEveryAttempt(endpoint: TestEndpoint, path: string, error: string): Promise<ShownDelivery> {
  const delivery = await shownDelivery(endpoint);
  assert.equal(receiver.sends(path), SCHEDULED_SENDS);
  assert.deepEqual(
    {
      state: delivery.state,
      attemptCount: delivery.attemptCount,
      attempts: delivery.attempts.map(({ statusCode, error, responseBody }) => ({ statusCode, error, responseBody })),
    },
    {
      state: 'failed',
      attemptCount: SCHEDULED_SENDS,
      attempts: Array.from({ length: SCHEDULED_SENDS }, () => ({ statusCode: null, error, responseBody: null })),
    },
  );
  return delivery;
}

describe('an attempt that cannot be recorded', () => {
  test('the database refuses the row (a trigger, for any reason but the answer): recorded as failed without the answer, retried on the schedule, then failed', async () => {
    await t.db.query(`CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.response_body = 'poison' THEN RAISE EXCEPTION 'the test refuses this row'; END IF;
        RETURN NEW;
      END $$`);
    await t.db.query('CREATE TRIGGER refuse_poison BEFORE INSERT ON webhook_attempts FOR EACH ROW EXECUTE FUNCTION refuse_poison()');
    const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver.url('poison'), enabledEvents: ['product.created'] });
    try {
      await recordEvent(t.db, 'product.created', await createProduct(t.db), SYSTEM_ACTOR);
      await settled(endpoint);
      // The receiver answered 200 each time; the answer was never recorded, so each counts as failed.
      const delivery = await failedWithEveryAttempt(
        endpoint,
        'poison',
        'the answer could not be recorded (see the server log): counted as a failed attempt',
      );
      // Our failure, not the endpoint's: it is not marked failing.
      assert.equal(await isFailing(endpoint), false);
      const errors = logLines.filter((line) => line.level === 50 && line.deliveryId === delivery.id);
      assert.equal(errors.length, SCHEDULED_SENDS);
      for (const line of errors) {
        assert.equal(line.msg, 'webhook attempt could not be recorded: recorded as failed, without its answer');
        assert.match(JSON.stringify(line.err), /the test refuses this row/);
      }
      assertFailureLines(warnings(delivery.id), endpoint, delivery);
    } finally {
      await t.db.query('DROP TRIGGER refuse_poison ON webhook_attempts');
      await t.db.query('DROP FUNCTION refuse_poison()');
      await deleteWebhookEndpoints(t.db, endpoint);
    }
  });

  test('never recorded (the process stops each time after the receiver answered): each lost attempt logged, and no send beyond the schedule', async () => {
    const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver.url('ok'), enabledEvents: ['order.created'] });
    failBeforeRecord = true;
    try {
      await t.db.transaction((tx) => recordEvent(tx, 'order.created', { id: 1, status: 'pending' }, SYSTEM_ACTOR));
      for (let sent = 1; sent <= SCHEDULED_SENDS; sent++) {
        await eventually(() => receiver.sends('ok') === sent, `send ${sent}`);
        // Its lease runs out (as 60 s after a crash): claimed again, or failed once the schedule is used up.
        await t.db.query("UPDATE webhook_deliveries SET leased_until = now() - interval '1 second' WHERE endpoint_id = $1", [endpoint.id]);
      }
      await settled(endpoint);
      const delivery = await failedWithEveryAttempt(
        endpoint,
        'ok',
        'no outcome recorded: the process sending it stopped, or could not reach the database, before its lease ran out',
      );
      const lines = warnings(delivery.id).filter((line) => String(line.msg).startsWith('webhook attempt lost'));
      assert.deepEqual(
        lines.map((line) => [line.attempt, line.state, line.msg, line.endpointId, line.reason]),
        Array.from({ length: SCHEDULED_SENDS }, (_, index) => [
          index + 1,
          index + 1 < SCHEDULED_SENDS ? 'pending' : 'failed',
          index + 1 < SCHEDULED_SENDS ? 'webhook attempt lost: sent again' : 'webhook attempt lost: the retry schedule is used up',
          endpoint.id,
          'no outcome recorded before its lease ran out',
        ]),
      );
    } finally {
      failBeforeRecord = false;
      await deleteWebhookEndpoints(t.db, endpoint);
    }
  });

  test('a delivery due with its attempts all made (the schedule shortened since): failed without a send', async () => {
    // The event first (no endpoint subscribed), then a delivery of it inserted whole: no claim comes between.
    const eventId = await t.db.transaction((tx) => recordEvent(tx, 'order.shipped', { id: 1, status: 'shipped' }, SYSTEM_ACTOR));
    const endpoint = await insertWebhookEndpoint(t.db, t.config, { url: receiver.url('ok'), enabledEvents: ['order.shipped'] });
    const sentBefore = receiver.sends('ok');
    try {
      await t.db.query('INSERT INTO webhook_deliveries (endpoint_id, event_id, attempts) VALUES ($1, $2, $3)', [
        endpoint.id,
        eventId,
        SCHEDULED_SENDS,
      ]);
      await settled(endpoint);
      const delivery = await shownDelivery(endpoint);
      assert.deepEqual(
        { state: delivery.state, attemptCount: delivery.attemptCount, attempts: delivery.attempts },
        { state: 'failed', attemptCount: SCHEDULED_SENDS, attempts: [] },
      );
      assert.equal(receiver.sends('ok'), sentBefore);
      assert.deepEqual(
        warnings(delivery.id).map((line) => [line.msg, line.attempt, line.state, line.reason]),
        [['webhook delivery failed: the retry schedule is used up', SCHEDULED_SENDS, 'failed', 'the retry schedule is used up']],
      );
    } finally {
      await deleteWebhookEndpoints(t.db, endpoint);
    }
  });
});
