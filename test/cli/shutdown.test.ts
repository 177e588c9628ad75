// SIGTERM to a real `orderpay serve` with connections open on raw sockets (docs/deploy.md,
// "Shutdown"): idle connections get a FIN at once, stalled requests are cut off, requests that
// reach the server are answered (503 with Connection: close once it drains), none is reset, and the
// process exits 0 at once rather than waiting out its 15-second limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { closedWithin, connect, parseResponses, type RawConnection } from '../helpers/raw-http.ts';
import {
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  startServe,
  type Env,
  type ServeProcess,
} from './orderpay-process.ts';

after(cleanUpProcessesAndDatabases);

const STAFF = 'staff@example.com';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function keptAlive(port: number): Promise<RawConnection> {
  const connection = await connect(port);
  connection.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n\r\n');
  await connection.receivedUntil((text) => text.endsWith('{"status":"ok"}'));
  return connection;
}

describe(`SIGTERM with connections open (${DATABASE_LABEL})`, () => {
  let env: Env;
  before(async () => {
    env = commandEnv((await createTargetDatabase()).env);
  });

  async function serveOn(port: number): Promise<{ server: ServeProcess; port: number }> {
    const server = await startServe({ ...env, PORT: String(port) });
    return { server, port: Number(new URL(server.listening.url).port) };
  }

  test('idle connections get a FIN, stalled requests are cut off, and the process exits 0 at once', async () => {
    const { server, port } = await serveOn(29720);
    try {
      const idle = await keptAlive(port);
      const stalledHeaders = await connect(port);
      stalledHeaders.socket.write('GET /v1/orders HTTP/1.1\r\nHost: orderpay.test\r\n');
      const stalledBody = await connect(port);
      stalledBody.socket.write(
        `POST /v1/products HTTP/1.1\r\nHost: orderpay.test\r\nAuthorization: Bearer ${server.listening.demoTokens[STAFF]}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{"name":',
      );
      await sleep(100);

      const start = performance.now();
      const exit = await server.stop('SIGTERM', 10_000);
      const stoppedAfter = performance.now() - start;
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.ok(stoppedAfter < 3000, `exited ${stoppedAfter} ms after the signal`);
      assert.equal(server.stderr(), '');

      for (const [name, connection, received] of [
        ['idle', idle, idle.received()],
        ['stalled headers', stalledHeaders, ''],
        ['stalled body', stalledBody, ''],
      ] as const) {
        const end = await closedWithin(connection, 1000);
        assert.equal(end.finished, true, `${name}: closed with a FIN`);
        assert.equal(end.error, undefined, `${name}: not reset`);
        assert.equal(end.received, received, `${name}: nothing more was sent`);
        connection.socket.destroy();
      }
    } finally {
      await server.stop();
    }
  });

  test('a request a client still sends on a kept-alive connection after the FIN is dropped, not met by a reset', async () => {
    const { server, port } = await serveOn(29722);
    try {
      const connections = await Promise.all(Array.from({ length: 5 }, () => keptAlive(port)));
      const answered = connections.map((connection) => connection.received());
      server.child.kill('SIGTERM');
      for (const connection of connections) {
        const end = await closedWithin(connection, 2000);
        assert.equal(end.finished, true, 'the idle connection gets a FIN');
        // A client that has not noticed the close yet sends its next request.
        connection.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n\r\n');
      }
      // And another: a write to a connection the peer has reset fails (EPIPE, ECONNRESET).
      await sleep(100);
      for (const connection of connections) connection.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n\r\n');
      assert.deepEqual(await server.waitForExit(5000), { code: 0, signal: null });
      await sleep(200);
      connections.forEach((connection, i) => {
        assert.equal(connection.received(), answered[i], 'nothing more was sent');
        assert.equal(connection.socket.errored, null, `no reset: ${connection.socket.errored}`);
        connection.socket.destroy();
      });
    } finally {
      await server.stop();
    }
  });

  test('requests sent on kept-alive connections with the signal are answered (200, or 503 with Connection: close) or meet a FIN, never a reset', async () => {
    const { server, port } = await serveOn(29721);
    try {
      const connections = await Promise.all(Array.from({ length: 20 }, () => keptAlive(port)));
      server.child.kill('SIGTERM');
      for (const connection of connections) connection.socket.write('GET /livez HTTP/1.1\r\nHost: orderpay.test\r\n\r\n');

      for (const connection of connections) {
        const end = await closedWithin(connection, 5000);
        assert.equal(end.error, undefined, `no reset; received ${JSON.stringify(end.received)}`);
        assert.equal(end.finished, true);
        const [first, late, ...more] = parseResponses(end.received);
        assert.equal(first?.status, 200);
        assert.deepEqual(more, []);
        if (late && late.status !== 200) {
          assert.equal(late.status, 503, late.body);
          assert.equal(late.headers.connection, 'close');
          assert.equal(late.headers['retry-after'], '1');
          assert.equal(JSON.parse(late.body).code, 'SERVICE_UNAVAILABLE');
        }
        connection.socket.destroy();
      }
      assert.deepEqual(await server.waitForExit(5000), { code: 0, signal: null });
    } finally {
      await server.stop();
    }
  });
});
