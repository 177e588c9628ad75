// Webhooks in tests: endpoint rows inserted directly (with a secret sealed as the app seals it),
// and real HTTP receivers on 127.0.0.1 that record every request and verify each delivery's
// signature with the `standardwebhooks` package, as an integrator would.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { Webhook } from 'standardwebhooks';
import { type Config, loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/db.ts';
import { createSecretBox, generateSigningSecret } from '../../src/webhooks/secrets.ts';

export interface TestEndpoint {
  id: number;
  url: string;
  secret: string;
}

/**
 * The webhook configuration of the suites that deliver through the app's own dispatcher: private
 * addresses allowed (the receivers are on 127.0.0.1), due deliveries looked for every 20 ms, and
 * this retry schedule (seconds, comma-separated).
 */
export function deliveringWebhooks(retrySchedule: string): Config['webhooks'] {
  return loadConfig({
    NODE_ENV: 'test',
    ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
    ORDERPAY_WEBHOOKS_RETRY_SCHEDULE: retrySchedule,
    ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: '20',
  }).webhooks;
}

/** A webhook endpoint row (every event and API version 2 unless told). */
export async function insertWebhookEndpoint(
  db: Db,
  config: Config,
  fields: {
    url: string;
    enabledEvents?: string[];
    apiVersion?: number;
    secret?: string;
    /** A rotated-out secret that still signs until previousSecretExpiresAt. */
    previousSecret?: string;
    previousSecretExpiresAt?: Date;
  },
): Promise<TestEndpoint> {
  const box = createSecretBox(db, config.webhooks.secretKey);
  const secret = fields.secret ?? generateSigningSecret();
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO webhook_endpoints (url, enabled_events, api_version, secret, previous_secret, previous_secret_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [
      fields.url,
      fields.enabledEvents ?? ['*'],
      fields.apiVersion ?? 2,
      await box.seal(secret),
      fields.previousSecret === undefined ? null : await box.seal(fields.previousSecret),
      fields.previousSecretExpiresAt?.toISOString() ?? null,
    ],
  );
  return { id: rows[0]!.id, url: fields.url, secret };
}

/** Endpoints a test is done with: no later event of another test is delivered to them. */
export async function deleteWebhookEndpoints(db: Db, ...endpoints: TestEndpoint[]): Promise<void> {
  await db.query('DELETE FROM webhook_endpoints WHERE id = ANY($1::bigint[])', [endpoints.map((e) => e.id)]);
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** performance.now() when the request had arrived whole. */
  at: number;
}

type Answer = (request: ReceivedRequest, response: http.ServerResponse) => void;

/** 200 with a short body. */
export const answerOk: Answer = (_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** TCP connections accepted (a refused delivery never connects). */
  readonly connections: number;
  /** How the requests from now on are answered. */
  answer(next: Answer): void;
  /** Waits until `count` requests have arrived (and were answered, unless the answer holds them). */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1:port that answers every request with `answer` (default answerOk). */
export async function startReceiver(port: number, answer: Answer = answerOk): Promise<Receiver> {
  let current = answer;
  const requests: ReceivedRequest[] = [];
  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request: ReceivedRequest = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      requests.push(request);
      current(request, response);
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    get connections() {
      return connections;
    },
    answer(next) {
      current = next;
    },
    async waitForRequests(count, timeoutMs = 10_000) {
      await eventually(() => requests.length >= count, `${count} requests at ${port} (got ${requests.length})`, timeoutMs);
      return requests;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export interface RawReceiver {
  /** The URL of a path on it: each path answers as `answers` says for it. */
  url(path: string): string;
  /** Requests that arrived whole, per path. */
  sends(path: string): number;
  close(): Promise<void>;
}

/**
 * A receiver on 127.0.0.1:port that answers on the raw socket, for what no HTTP server would send:
 * each request to /<path>, once it has arrived whole, is counted and answered by answers[path],
 * which writes any bytes it likes (a status line that is not one, NUL in a header, a body that never
 * ends) and may leave the socket open.
 */
export async function startRawReceiver(port: number, answers: Record<string, (socket: net.Socket) => void>): Promise<RawReceiver> {
  const counts = new Map<string, number>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = received.subarray(0, headEnd).toString('latin1');
      const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
      if (received.length < headEnd + 4 + length) return;
      socket.off('data', onData);
      const path = /^POST \/(\S*) HTTP\/1\.1/.exec(head)?.[1] ?? '';
      counts.set(path, (counts.get(path) ?? 0) + 1);
      const answer = answers[path];
      if (answer) answer(socket);
      else socket.destroy();
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: (path) => `http://127.0.0.1:${port}/${path}`,
    sends: (path) => counts.get(path) ?? 0,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The request as a verified Standard Webhooks delivery: its parsed body, or a thrown WebhookVerificationError. */
export function verifyDelivery(secret: string, request: ReceivedRequest): Record<string, unknown> {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as Record<string, unknown>;
}

/** Polls until condition holds (it may be async), or fails the test with what it waited for. */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Runs with receivers on the ports, closed afterwards. */
export async function withReceivers(ports: number[], run: (receivers: Receiver[]) => Promise<void>): Promise<void> {
  const receivers = await Promise.all(ports.map((port) => startReceiver(port)));
  try {
    await run(receivers);
  } finally {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  }
}

/** Runs with endpoints, deleted afterwards so that later events are not delivered to them. */
export async function withEndpoints(db: Db, endpoints: TestEndpoint[], run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } finally {
    await deleteWebhookEndpoints(db, ...endpoints);
  }
}

/** Answers 204 after delayMs, counting the most requests it held at once. */
export function answerLater(delayMs: number): { answer: Answer; most(): number } {
  let inFlight = 0;
  let most = 0;
  return {
    answer(_request, response) {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        response.writeHead(204).end();
      }, delayMs);
    },
    most: () => most,
  };
}

/**
 * Answers the first request at once, then holds the next ones until `together` are held and answers
 * them all: a dispatcher that sent them one at a time would never be answered. most(): the most held at once.
 */
export function answerFirstThenTogether(together: number): { answer: Answer; most(): number } {
  let answered = 0;
  const held: http.ServerResponse[] = [];
  let most = 0;
  return {
    answer(_request, response) {
      if (answered++ === 0) return void response.writeHead(204).end();
      held.push(response);
      most = Math.max(most, held.length);
      if (held.length >= together) for (const waiting of held.splice(0)) waiting.writeHead(204).end();
    },
    most: () => most,
  };
}
