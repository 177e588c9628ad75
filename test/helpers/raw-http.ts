// HTTP/1.1 on a raw TCP socket, for what no HTTP client will send or show: malformed requests,
// requests that stall half-way, and how the server ends a connection (a FIN, or a reset).
import assert from 'node:assert/strict';
import net from 'node:net';

/** How a connection ended, and everything the server sent on it. */
export interface ConnectionEnd {
  /** Everything received, as latin1 text (byte for byte). */
  received: string;
  /** The server closed its side with a FIN (our socket saw 'end'). */
  finished: boolean;
  /** The socket error, when there was one (ECONNRESET: the server reset the connection). */
  error: string | undefined;
  /** performance.now() when the socket closed. */
  at: number;
}

export interface RawConnection {
  socket: net.Socket;
  /** What the server sent so far. */
  received(): string;
  /**
   * Settles when the server has ended the connection: its FIN arrived ('end'), or the socket
   * closed (a reset, or our own destroy).
   */
  closed: Promise<ConnectionEnd>;
  /** Resolves once the server has sent something that `done` accepts. */
  receivedUntil(done: (text: string) => boolean, timeoutMs?: number): Promise<string>;
}

/**
 * Connects to 127.0.0.1:port. The socket stays half-open when the server ends its side, as a client
 * with a request still to write would: what it writes then is met by a reset if the server has
 * stopped reading.
 */
export async function connect(port: number): Promise<RawConnection> {
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  let received = '';
  let finished = false;
  let error: string | undefined;
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    received += chunk;
  });
  socket.on('end', () => {
    finished = true;
  });
  socket.on('error', (e: NodeJS.ErrnoException) => {
    error = e.code ?? e.message;
  });
  const closed = new Promise<ConnectionEnd>((resolve) => {
    const settle = () => resolve({ received, finished, error, at: performance.now() });
    socket.on('end', settle);
    socket.on('close', settle);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    received: () => received,
    closed,
    async receivedUntil(done, timeoutMs = 5000) {
      const deadline = performance.now() + timeoutMs;
      while (!done(received)) {
        if (socket.destroyed && !done(received)) throw new Error(`connection closed; received: ${JSON.stringify(received)}`);
        if (performance.now() > deadline)
          throw new Error(`nothing acceptable within ${timeoutMs} ms; received: ${JSON.stringify(received)}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return received;
    },
  };
}

/** Waits for the server to end the connection, failing after timeoutMs (it never did). */
export async function closedWithin(connection: RawConnection, timeoutMs: number): Promise<ConnectionEnd> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      connection.socket.destroy();
      reject(
        new Error(`the server did not close the connection within ${timeoutMs} ms; received: ${JSON.stringify(connection.received())}`),
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([connection.closed, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export interface RawResponse {
  status: number;
  /** Header names in lower case; a repeated field's values joined with ", ". */
  headers: Record<string, string>;
  body: string;
}

/** The responses in a received byte stream (Content-Length framed, as ours all are). */
export function parseResponses(text: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = text;
  while (rest.length > 0) {
    const headEnd = rest.indexOf('\r\n\r\n');
    assert.notEqual(headEnd, -1, `an incomplete response head: ${JSON.stringify(rest)}`);
    const [statusLine = '', ...fields] = rest.slice(0, headEnd).split('\r\n');
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
    assert.ok(status, `not a status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string> = {};
    for (const field of fields) {
      const colon = field.indexOf(':');
      const name = field.slice(0, colon).toLowerCase();
      const value = field.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const length = Number(headers['content-length'] ?? 0);
    const bodyStart = headEnd + 4;
    const body = Buffer.from(rest.slice(bodyStart), 'latin1').subarray(0, length).toString('utf8');
    responses.push({ status: Number(status[1]), headers, body });
    rest = rest.slice(bodyStart + length);
  }
  return responses;
}

/** The one response a connection carried. */
export function onlyResponse(text: string): RawResponse {
  const responses = parseResponses(text);
  assert.equal(responses.length, 1, `expected one response, got ${responses.length}: ${JSON.stringify(text)}`);
  return responses[0]!;
}
