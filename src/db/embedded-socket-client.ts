// A command's Db when `orderpay serve` holds the embedded database: the same interface as
// src/db/pglite.ts, each statement sent over DATA_DIR's socket (src/db/embedded-socket-server.ts)
// and run by the server on its one connection. Like PGlite itself, one thing at a time.
import net, { type Socket } from 'node:net';
import type { Db, Queryable, QueryResult } from './db.ts';
import {
  decodeError,
  embeddedSocketPath,
  readFrames,
  writeFrame,
  type SocketRequest,
  type SocketResponse,
} from './embedded-socket-frames.ts';
import { flushOutbox, openOutbox, outboxCommitted } from './outbox.ts';
import { createSerialQueue, serialPoolStats } from './serial-queue.ts';

/** Connects to the server's socket; undefined when no server listens there. */
function connectToSocket(socketPath: string): Promise<Socket | undefined> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    socket.once('connect', () => {
      socket.off('error', onError);
      resolve(socket);
    });
    const onError = (error: NodeJS.ErrnoException) => {
      // No socket, or one a crashed server left behind.
      if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') resolve(undefined);
      else reject(error);
    };
    socket.once('error', onError);
  });
}

/** Sends requests in order and matches each response to the oldest request still waiting. */
function createCaller(socket: Socket): { call(request: SocketRequest): Promise<QueryResult<unknown> | undefined>; closed: Promise<void> } {
  const waiting: { resolve(response: SocketResponse): void; reject(error: Error): void }[] = [];
  readFrames(socket, (response) => waiting.shift()?.resolve(response as SocketResponse));
  let lost: Error | undefined;
  socket.on('error', (error) => (lost ??= error));
  const closed = new Promise<void>((resolve) => {
    socket.once('close', () => {
      // SQLSTATE 08006 connection_failure, as a dropped PostgreSQL connection would report it.
      lost = Object.assign(new Error(`the orderpay server closed the embedded database's socket${lost ? `: ${lost.message}` : ''}`), {
        code: '08006',
      });
      for (const request of waiting.splice(0)) request.reject(lost);
      resolve();
    });
  });
  return {
    closed,
    async call(request) {
      if (lost) throw lost;
      const response = await new Promise<SocketResponse>((resolve, reject) => {
        waiting.push({ resolve, reject });
        writeFrame(socket, request);
      });
      if (!response.ok) throw decodeError(response.error);
      return response.result;
    },
  };
}

/** The embedded database through the running server, or undefined when none serves DATA_DIR. */
export async function connectEmbeddedDatabase(dataDir: string): Promise<Db | undefined> {
  const socket = await connectToSocket(embeddedSocketPath(dataDir));
  if (!socket) return undefined;
  const { call, closed } = createCaller(socket);
  const exclusive = createSerialQueue();
  const remote: Queryable = {
    query: async <T>(sql: string, params?: readonly unknown[]) => (await call({ op: 'query', sql, params })) as QueryResult<T>,
    exec: async (sql) => void (await call({ op: 'exec', sql })),
  };
  return {
    kind: 'pglite',
    poolStats: () => serialPoolStats(exclusive),
    query: <T>(sql: string, params?: readonly unknown[]) => exclusive(() => remote.query<T>(sql, params)),
    exec: (sql) => exclusive(() => remote.exec(sql)),
    transaction: (fn) =>
      exclusive(async () => {
        await call({ op: 'begin' });
        try {
          openOutbox(remote);
          const result = await fn(remote);
          await flushOutbox(remote);
          await call({ op: 'commit' });
          outboxCommitted(remote);
          return result;
        } catch (error) {
          await call({ op: 'rollback' }).catch(() => undefined);
          throw error;
        }
      }),
    close: () =>
      exclusive(async () => {
        socket.end();
        await closed;
      }),
  };
}
