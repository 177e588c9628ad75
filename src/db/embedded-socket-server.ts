// `orderpay serve` shares its embedded database with commands run beside it (`users create`,
// `tokens issue`, …): a Unix socket in DATA_DIR, mode 0600, where each connection is a session
// whose statements and transactions go through the same one-at-a-time queue as the server's own
// requests (src/db/pglite.ts). A command's transaction holds that queue from BEGIN to COMMIT, so
// nothing of the server's runs inside it, nor anything of the command's inside the server's.
import { rmSync } from 'node:fs';
import net, { type Socket } from 'node:net';
import type { Db, Queryable } from './db.ts';
import {
  embeddedSocketPath,
  encodeError,
  readFrames,
  writeFrame,
  type SocketRequest,
  type SocketResponse,
} from './embedded-socket-frames.ts';

// sockaddr_un.sun_path is 108 bytes on Linux (104 on macOS), its terminating NUL included.
const MAX_SOCKET_PATH_BYTES = 103;

export class SocketPathTooLongError extends Error {}

export interface EmbeddedSocket {
  readonly path: string;
  /** Stops accepting, ends every session (rolling back an open transaction), removes the socket. */
  close(): Promise<void>;
}

interface OpenTransaction {
  tx: Queryable;
  end(commit: boolean): Promise<void>;
}

const ROLLED_BACK = Symbol('rolled back by the command');

/** BEGIN on the server's queue, held until the command commits or rolls back. */
async function beginTransaction(db: Db): Promise<OpenTransaction> {
  let decide!: (commit: boolean) => void;
  const decision = new Promise<boolean>((resolve) => (decide = resolve));
  let started!: (tx: Queryable) => void;
  const ready = new Promise<Queryable>((resolve) => (started = resolve));
  let runs = 0;
  const finished = db.transaction(async (tx) => {
    // The statements came from the command and are gone: a transaction retried after a conflict
    // (src/db/transaction.ts, which PGlite, one connection, never raises) cannot be replayed here.
    if (++runs > 1) throw new Error('a command’s transaction cannot be retried by the server');
    started(tx);
    if (!(await decision)) throw ROLLED_BACK;
  });
  // A failed BEGIN rejects `finished` before `ready` resolves.
  const tx = await Promise.race([ready, finished.then(() => ready)]);
  return {
    tx,
    end: async (commit) => {
      decide(commit);
      await finished.catch((error: unknown) => {
        if (error !== ROLLED_BACK) throw error;
      });
    },
  };
}

function writeResponse(socket: Socket, response: SocketResponse): void {
  try {
    writeFrame(socket, response);
  } catch (error) {
    // A value V8 cannot serialise: the command gets the failure instead of a hang.
    writeFrame(socket, { ok: false, error: encodeError(error) });
  }
}

/** One command's connection; settles once it has closed and its transaction is rolled back. */
function serveSession(socket: Socket, db: Db, idleInTransactionTimeoutMs: number): Promise<void> {
  let open: OpenTransaction | undefined;
  let idle: NodeJS.Timeout | undefined;
  let answered: Promise<void> = Promise.resolve();

  async function perform(request: SocketRequest): Promise<SocketResponse> {
    const target = open?.tx ?? db;
    switch (request.op) {
      case 'query':
        return { ok: true, result: await target.query(request.sql, request.params) };
      case 'exec':
        await target.exec(request.sql);
        return { ok: true };
      case 'begin':
        if (open) throw new Error('a transaction is already open on this connection');
        open = await beginTransaction(db);
        return { ok: true };
      default: {
        const ending = open;
        open = undefined;
        await ending?.end(request.op === 'commit');
        return { ok: true };
      }
    }
  }

  async function answer(request: SocketRequest): Promise<void> {
    clearTimeout(idle);
    const response = await perform(request).catch((error: unknown): SocketResponse => ({ ok: false, error: encodeError(error) }));
    if (!socket.destroyed) writeResponse(socket, response);
    // Like PostgreSQL's idle_in_transaction_session_timeout: a command that stalls inside a
    // transaction must not hold the server's queue, and with it every request, for ever.
    if (open) idle = setTimeout(() => socket.destroy(), idleInTransactionTimeoutMs);
  }

  readFrames(socket, (request) => {
    answered = answered.then(() => answer(request as SocketRequest)).catch(() => void socket.destroy());
  });
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    socket.once('close', () => {
      clearTimeout(idle);
      answered = answered.then(async () => {
        const ending = open;
        open = undefined;
        await ending?.end(false).catch(() => undefined);
      });
      resolve(answered);
    });
  });
}

/** Listens on DATA_DIR's socket. Call it while holding the data directory's lock. */
export async function serveEmbeddedDatabase(
  db: Db,
  dataDir: string,
  options: { idleInTransactionTimeoutMs: number },
): Promise<EmbeddedSocket> {
  const socketPath = embeddedSocketPath(dataDir);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    throw new SocketPathTooLongError(`the socket path ${socketPath} is longer than ${MAX_SOCKET_PATH_BYTES} bytes`);
  }
  // Only the holder of the lock listens here, so a socket already present is a crashed server's.
  rmSync(socketPath, { force: true });
  const sockets = new Set<Socket>();
  const sessions = new Set<Promise<void>>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    const session = serveSession(socket, db, options.idleInTransactionTimeoutMs).finally(() => {
      sockets.delete(socket);
      sessions.delete(session);
    });
    sessions.add(session);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Owner-only from the moment it exists (bind happens inside listen(), synchronously), not
    // after a chmod that another local user could race.
    const umask = process.umask(0o177);
    try {
      server.listen(socketPath, () => resolve());
    } finally {
      process.umask(umask);
    }
  });
  let closing: Promise<void> | undefined;
  return {
    path: socketPath,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await Promise.all([...sessions]);
        await closed;
      })()),
  };
}
