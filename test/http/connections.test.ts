// The HTTP edge on a real socket: how long a client may take (ORDERPAY_HTTP_*_TIMEOUT_MS), how many
// connections it may hold (ORDERPAY_HTTP_MAX_CONNECTIONS), and requests Node's HTTP parser refuses:
// each one answered as a problem with Connection: close, the connection then closed with a FIN.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { loadConfig, type Config } from '../../src/config.ts';
import { ERRORS, problemSlug, type ErrorCode } from '../../src/core/errors.ts';
import { createCustomer } from '../helpers/actors.ts';
import { PUBLIC_URL, startTestApp, type TestApp } from '../helpers/app.ts';
import { PROBLEM_JSON } from '../helpers/problems.ts';
import { createHoldableProcessor } from './idempotency/gates.ts';
import { closedWithin, connect, onlyResponse, parseResponses, type RawResponse } from '../helpers/raw-http.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The app on a real socket of this file's port range, with these HTTP limits. */
async function listeningApp(port: number, http: Partial<Config['http']>): Promise<TestApp> {
  const t = await startTestApp({ http: { ...loadConfig({}).http, ...http } });
  await t.app.listen({ host: '127.0.0.1', port });
  return t;
}

/** A problem written by the server before closing the connection: the whole response. */
function assertClosingProblem(
  response: RawResponse,
  code: ErrorCode,
  detail: string,
  { instance, requestId }: { instance?: string; requestId?: string } = {},
): void {
  const { status, title } = ERRORS[code];
  assert.equal(response.status, status, response.body);
  assert.equal(response.headers['content-type'], PROBLEM_JSON);
  assert.equal(response.headers['cache-control'], 'no-store');
  assert.equal(response.headers.connection, 'close');
  assert.equal(response.headers['x-content-type-options'], 'nosniff');
  assert.ok(!Number.isNaN(Date.parse(response.headers.date ?? '')), 'a Date header');
  assert.equal(Number(response.headers['content-length']), Buffer.byteLength(response.body));
  const id = response.headers['x-request-id'] ?? '';
  if (requestId === undefined) assert.match(id, UUID);
  else assert.equal(id, requestId);
  assert.deepEqual(JSON.parse(response.body), {
    type: `${PUBLIC_URL}/problems/${problemSlug(code)}`,
    title,
    status,
    detail,
    // A request not read as far as its path is named by its new id (docs/errors.md).
    instance: instance ?? `urn:uuid:${id}`,
    code,
    requestId: id,
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('timeouts: ORDERPAY_HTTP_HEADERS_TIMEOUT_MS, ORDERPAY_HTTP_REQUEST_TIMEOUT_MS, ORDERPAY_HTTP_KEEP_ALIVE_TIMEOUT_MS', () => {
  const PORT = 29710;
  let t: TestApp;
  before(async () => {
    t = await listeningApp(PORT, { headersTimeoutMs: 300, requestTimeoutMs: 700, keepAliveTimeoutMs: 400 });
  });
  after(() => t.close());

  test('headers that have not all arrived within the headers timeout → 408 REQUEST_TIMEOUT, and the connection is closed', async () => {
    const connection = await connect(PORT);
    const start = performance.now();
    connection.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n');
    const end = await closedWithin(connection, 3000);
    const elapsed = end.at - start;
    assert.ok(elapsed >= 290 && elapsed < 1500, `closed after ${elapsed} ms`);
    assert.equal(end.finished, true, 'a FIN, not a reset');
    assert.equal(end.error, undefined);
    assertClosingProblem(onlyResponse(end.received), 'REQUEST_TIMEOUT', 'The request did not arrive in time.');
    connection.socket.destroy();
  });

  test('a body trickling in past the request timeout → 408 naming the request, and the connection is closed', async () => {
    const { token } = await createCustomer(t);
    const connection = await connect(PORT);
    const start = performance.now();
    connection.socket.write(
      'POST /v1/orders?x=1 HTTP/1.1\r\nHost: orderpay.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n' +
        `Authorization: Bearer ${token}\r\nX-Request-Id: trickle-1\r\n\r\n{`,
    );
    // One byte every 50 ms: never idle, never done.
    const trickle = setInterval(() => connection.socket.writable && connection.socket.write(' '), 50);
    try {
      const end = await closedWithin(connection, 3000);
      const elapsed = end.at - start;
      assert.ok(elapsed >= 690 && elapsed < 2000, `closed after ${elapsed} ms`);
      assert.equal(end.finished, true);
      assertClosingProblem(onlyResponse(end.received), 'REQUEST_TIMEOUT', 'The request did not arrive in time.', {
        instance: '/v1/orders',
        requestId: 'trickle-1',
      });
    } finally {
      clearInterval(trickle);
      connection.socket.destroy();
    }
  });

  test('an idle kept-alive connection is closed (FIN) after the keep-alive timeout', async () => {
    const connection = await connect(PORT);
    connection.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n\r\n');
    await connection.receivedUntil((text) => text.endsWith('{"status":"ok"}'));
    const answeredAt = performance.now();
    const end = await closedWithin(connection, 4000);
    const idle = end.at - answeredAt;
    // Node waits keepAliveTimeoutBuffer (1 s) beyond the timeout it announces.
    assert.ok(idle >= 350 && idle < 3000, `closed after ${idle} ms idle`);
    assert.equal(end.finished, true);
    assert.equal(end.error, undefined);
    assert.equal(onlyResponse(end.received).status, 200);
    connection.socket.destroy();
  });
});

describe('ORDERPAY_HTTP_MAX_CONNECTIONS', () => {
  const PORT = 29711;
  let t: TestApp;
  before(async () => {
    t = await listeningApp(PORT, { maxConnections: 2 });
  });
  after(() => t.close());

  async function servedConnection() {
    const connection = await connect(PORT);
    connection.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n\r\n');
    await connection.receivedUntil((text) => text.endsWith('{"status":"ok"}'));
    return connection;
  }

  test('a connection beyond the cap is closed on arrival, counted in /metrics; one freed is taken again', async () => {
    const first = await servedConnection();
    const second = await servedConnection();
    const third = await connect(PORT);
    third.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n\r\n');
    const refused = await closedWithin(third, 2000);
    assert.equal(refused.received, '', 'nothing is read or answered on it');
    third.socket.destroy();
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /^orderpay_http_connections_dropped_total 1$/m);

    // The kept ones are still served.
    second.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n\r\n');
    await second.receivedUntil((text) => parseResponses(text).length === 2);
    first.socket.destroy();
    await sleep(50);
    const fourth = await servedConnection();
    for (const connection of [second, fourth]) connection.socket.destroy();
  });
});

describe("requests Node's HTTP parser refuses → problems, and the connection closed", () => {
  const PORT = 29712;
  let t: TestApp;
  before(async () => {
    t = await listeningApp(PORT, {});
  });
  after(() => t.close());

  const cases: [string, string, ErrorCode, string, string?][] = [
    ['an unknown method', 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n', 'REQUEST_MALFORMED', 'The request method is not one this server knows.'],
    [
      'a TLS handshake on the plain port',
      '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03',
      'REQUEST_MALFORMED',
      'The request method is not one this server knows.',
    ],
    ['a space in the request target', 'GET /a b HTTP/1.1\r\nHost: x\r\n\r\n', 'REQUEST_MALFORMED', 'The request line is malformed.'],
    ['HTTP/9.9', 'GET / HTTP/9.9\r\nHost: x\r\n\r\n', 'REQUEST_MALFORMED', 'The request line is malformed.'],
    [
      'a header name with a space',
      'GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n',
      'REQUEST_MALFORMED',
      'A header field is malformed.',
    ],
    [
      'headers over 16 KiB',
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      'REQUEST_HEADERS_TOO_LARGE',
      'The request line and header fields exceed 16 KiB.',
    ],
    [
      'Content-Length with Transfer-Encoding',
      'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n',
      'REQUEST_MALFORMED',
      'Transfer-Encoding must end with chunked, and comes without Content-Length (RFC 9112 §6.1, §6.3).',
    ],
    [
      'two Content-Length fields',
      'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
      'REQUEST_MALFORMED',
      'The request has more than one Content-Length (RFC 9112 §6.3).',
    ],
    [
      'a Content-Length list',
      'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 2\r\n\r\n',
      'REQUEST_MALFORMED',
      'Content-Length is not one valid number (RFC 9112 §6.3).',
    ],
    [
      'a bad chunk size, read after the headers',
      'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      'REQUEST_MALFORMED',
      'A chunk size of the chunked body is not valid.',
      '/v1/orders',
    ],
    [
      'an Expect other than 100-continue (RFC 9110 §10.1.1)',
      'POST /v1/orders HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      'REQUEST_EXPECTATION_FAILED',
      'The only expectation this server meets is Expect: 100-continue.',
      '/v1/orders',
    ],
  ];

  for (const [what, raw, code, detail, instance] of cases) {
    test(`${what} → ${ERRORS[code].status} ${code}`, async () => {
      const connection = await connect(PORT);
      connection.socket.write(Buffer.from(raw, 'latin1'));
      const end = await closedWithin(connection, 3000);
      assert.equal(end.finished, true, 'the server ends the connection with a FIN after the answer');
      assert.equal(end.error, undefined);
      assertClosingProblem(onlyResponse(end.received), code, detail, { instance });
      connection.socket.destroy();
    });
  }
});

describe('draining at shutdown (app.drainConnections, called by SIGTERM)', () => {
  const PORT = 29713;
  const processor = createHoldableProcessor();
  let t: TestApp;
  before(async () => {
    t = await startTestApp({}, undefined, { paymentProcessor: processor.processor });
    await t.app.listen({ host: '127.0.0.1', port: PORT });
  });
  after(() => t.close());

  async function keptAlive() {
    const connection = await connect(PORT);
    connection.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n\r\n');
    await connection.receivedUntil((text) => text.endsWith('{"status":"ok"}'));
    return connection;
  }

  test('idle connections get a FIN at once, stalled ones are cut off, a request read meanwhile gets 503, the one in flight its answer', async () => {
    const { token } = await createCustomer(t);
    const held = processor.holdNextCharge();
    const inFlight = await connect(PORT);
    const payment = '{"amount":1500,"currency":"EUR"}';
    inFlight.socket.write(
      `POST /v1/payments HTTP/1.1\r\nHost: orderpay.test\r\nAuthorization: Bearer ${token}\r\nIdempotency-Key: drain-1\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${payment.length}\r\n\r\n${payment}`,
    );
    await held.reached;
    const idle = await keptAlive();
    const stalledHeaders = await connect(PORT);
    stalledHeaders.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n');
    const stalledBody = await connect(PORT);
    stalledBody.socket.write(
      `POST /v1/orders HTTP/1.1\r\nHost: orderpay.test\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
    );
    const late = await keptAlive();
    await sleep(50);

    // Sent before the drain begins, read after: it must be answered, not reset.
    late.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n\r\n');
    const start = performance.now();
    let drainedAt: number | undefined;
    const drained = t.app.drainConnections().then(() => (drainedAt = performance.now()));

    const [lateEnd, idleEnd, headersEnd, bodyEnd] = await Promise.all([
      closedWithin(late, 2000),
      closedWithin(idle, 2000),
      closedWithin(stalledHeaders, 2000),
      closedWithin(stalledBody, 2000),
    ]);
    const [ok, refused] = parseResponses(lateEnd.received);
    assert.equal(ok?.status, 200);
    assert.ok(refused, `a second answer on the late connection: ${JSON.stringify(lateEnd.received)}`);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.connection, 'close');
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers['content-type'], PROBLEM_JSON);
    assert.deepEqual(JSON.parse(refused.body), {
      type: `${PUBLIC_URL}/problems/service-unavailable`,
      title: ERRORS.SERVICE_UNAVAILABLE.title,
      status: 503,
      detail: 'The server is shutting down; retry on a new connection.',
      instance: '/livez',
      code: 'SERVICE_UNAVAILABLE',
      requestId: refused.headers['x-request-id'],
    });
    for (const [name, end, received] of [
      ['late', lateEnd, lateEnd.received],
      ['idle', idleEnd, idle.received()],
      ['stalled headers', headersEnd, ''],
      ['stalled body', bodyEnd, ''],
    ] as const) {
      assert.equal(end.finished, true, `${name}: the server closed it with a FIN`);
      assert.equal(end.error, undefined, `${name}: no reset`);
      assert.ok(end.at - start < 500, `${name}: closed ${end.at - start} ms after the drain began`);
      assert.equal(end.received, received, `${name}: nothing more was sent`);
    }

    // The payment in flight keeps its connection until answered, and is told it closes.
    assert.equal(drainedAt, undefined, 'the drain waits for the request in flight');
    assert.equal(inFlight.received(), '');
    held.release();
    const paid = await closedWithin(inFlight, 2000);
    const answer = onlyResponse(paid.received);
    assert.equal(answer.status, 201, answer.body);
    assert.equal(answer.headers.connection, 'close');
    assert.equal(paid.finished, true);
    await drained;
    assert.ok(drainedAt! - start < 2000, `drained ${drainedAt! - start} ms after it began`);
    for (const connection of [inFlight, idle, stalledHeaders, stalledBody, late]) connection.socket.destroy();
  });
});

describe('a client that closes before its declared body has arrived', () => {
  const PORT = 29714;
  const ABORTED = 'the client closed the connection before the request body arrived';
  const lines: { level: number; msg: string }[] = [];
  let settled: (() => void) | undefined;
  let t: TestApp;
  before(async () => {
    const stream = new Writable({
      write(chunk, _encoding, done) {
        const line = JSON.parse(String(chunk)) as { level: number; msg: string };
        lines.push(line);
        // What the server made of the abort: its info line, or (the fault) an error line.
        if (line.msg === ABORTED || line.level >= 50) settled?.();
        done();
      },
    });
    t = await startTestApp({}, undefined, { logger: { level: 'info', stream } as never });
    await t.app.listen({ host: '127.0.0.1', port: PORT });
  });
  after(() => t.close());

  test('is logged at info as the client going away, with no error line (not a server or database failure)', async () => {
    const { token } = await createCustomer(t);
    for (const path of ['/v1/orders', '/v1/payments']) {
      const connection = await connect(PORT);
      const handled = new Promise<void>((resolve) => {
        settled = resolve;
      });
      // Once the server reads the body (its stream starts flowing), the client goes away.
      t.app.server.once('request', (request) => request.once('resume', () => connection.socket.destroy()));
      connection.socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nIdempotency-Key: k-${path}\r\nContent-Length: 100\r\n\r\n{"amount":`,
      );
      await handled;
    }
    assert.equal(lines.filter((line) => line.msg === ABORTED).length, 2);
    assert.deepEqual(
      lines.filter((line) => line.level >= 50),
      [],
    );
  });
});
