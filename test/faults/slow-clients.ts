// Slow clients (slowloris): many connections each trickling its request one byte at a time, half
// of them never finishing the headers, half sending full headers and then a body that never
// completes. The server must cut them (and keep serving everyone else); this records when it does.
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** How many file descriptors a process of this machine may open (ulimit -n); undefined when unlimited. */
export function openFileLimit(): number | undefined {
  const value = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  return /^\d+$/.test(value) ? Number(value) : undefined;
}

/**
 * The flood size: ORDERPAY_FAULTS_SLOW_CLIENTS, or by default 500, and never more than a quarter
 * of the fd limit (each connection costs a descriptor here and one in the server).
 */
export function floodSize(): number {
  const chosen = process.env.ORDERPAY_FAULTS_SLOW_CLIENTS;
  if (chosen !== undefined) {
    if (!/^[1-9]\d*$/.test(chosen)) throw new Error('ORDERPAY_FAULTS_SLOW_CLIENTS must be a positive integer');
    return Number(chosen);
  }
  const limit = openFileLimit();
  return Math.min(500, limit === undefined ? 500 : Math.floor(limit / 4));
}

/** Headers that never end, or complete headers and a body that never does. */
export type SlowKind = 'headers' | 'body';

interface SlowConnection {
  kind: SlowKind;
  socket: net.Socket;
  openedAt: number;
  /** When the server closed it (ms after it opened); undefined while open or when we closed it. */
  closedAfterMs: number | undefined;
  /** The status line the server sent before closing, if any (e.g. HTTP/1.1 408). */
  answer: string | undefined;
  /** Ours: stop trickling and close. */
  end(): void;
}

export interface SlowFlood {
  readonly size: number;
  /** Connections of this kind (all when not given) the server has closed so far: how long each lasted. */
  closedAfterMs(kind?: SlowKind): number[];
  /** Connections of this kind (all when not given) still open. */
  open(kind?: SlowKind): number;
  /** Status lines the server answered the slow requests with, counted. */
  answers(): Record<string, number>;
  /** Closes what is still open from our side. */
  end(): void;
}

export interface FloodOptions {
  port: number;
  connections: number;
  /** Sent by the body tricklers, so their requests pass authentication and reach the body parser. */
  token: string;
  /** A byte per connection every this many ms. */
  trickleMs?: number;
}

const kindOf = (index: number): SlowKind => (index % 2 === 0 ? 'headers' : 'body');

function requestHead(kind: SlowKind, index: number, token: string): string {
  if (kind === 'headers') {
    // Headers that never end.
    return `POST /v2/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nX-Slow: `;
  }
  // Complete headers, then a body that never completes.
  return (
    `POST /v2/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
    `Content-Type: application/json\r\nIdempotency-Key: slow-${index}\r\nContent-Length: 4096\r\n\r\n{"items":[`
  );
}

/** Opens the connections (in batches, so the listen backlog is not what refuses them) and starts trickling. */
export async function startSlowFlood(options: FloodOptions): Promise<SlowFlood> {
  const trickleMs = options.trickleMs ?? 1000;
  const connections: SlowConnection[] = [];
  /** Resolves once connected (and the head sent) or refused. */
  const open = (index: number) =>
    new Promise<void>((resolve) => {
      const kind = kindOf(index);
      const socket = net.connect({ host: '127.0.0.1', port: options.port });
      let endedByUs = false;
      const timer = setInterval(() => {
        if (socket.writable) socket.write(kind === 'headers' ? 'a' : ' ');
      }, trickleMs);
      const connection: SlowConnection = {
        kind,
        socket,
        openedAt: performance.now(),
        closedAfterMs: undefined,
        answer: undefined,
        end() {
          endedByUs = true;
          clearInterval(timer);
          socket.destroy();
        },
      };
      connections.push(connection);
      socket.setNoDelay(true);
      socket.on('connect', () => {
        connection.openedAt = performance.now();
        socket.write(requestHead(kind, index, options.token));
        resolve();
      });
      socket.on('data', (chunk: Buffer) => {
        connection.answer ??= chunk.toString('latin1').split('\r\n', 1)[0];
      });
      // Reset or refused (the server out of descriptors, or cutting it): counted as closed by the server.
      socket.on('error', () => resolve());
      socket.on('close', () => {
        clearInterval(timer);
        if (!endedByUs) connection.closedAfterMs = Math.round(performance.now() - connection.openedAt);
        resolve();
      });
    });
  for (let i = 0; i < options.connections; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, options.connections - i) }, (_, j) => open(i + j)));
    await sleep(20);
  }
  return {
    size: options.connections,
    closedAfterMs: (kind) =>
      connections.flatMap((c) => (c.closedAfterMs === undefined || (kind && c.kind !== kind) ? [] : [c.closedAfterMs])),
    open: (kind) => connections.filter((c) => !c.socket.destroyed && (!kind || c.kind === kind)).length,
    answers: () => {
      const counts: Record<string, number> = {};
      for (const c of connections) if (c.answer) counts[c.answer] = (counts[c.answer] ?? 0) + 1;
      return counts;
    },
    end: () => {
      for (const c of connections) c.end();
    },
  };
}
