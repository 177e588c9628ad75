// Process entry: load configuration → open and migrate the database → build the app → listen.
// The only module that listens (HTTP, and on the embedded database the socket commands reach it
// through); SIGTERM/SIGINT drain the connections (src/http/connections.ts), then close the database.
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { ensureActiveSigningKey } from './auth/keys.store.ts';
import type { Config } from './config.ts';
import { createDatabase } from './db/create-database.ts';
import type { Db } from './db/db.ts';
import { serveEmbeddedDatabase, SocketPathTooLongError, type EmbeddedSocket } from './db/embedded-socket-server.ts';
import { migrate } from './db/migrate.ts';
import { failpointFromEnv } from './http/idempotency/failpoints.ts';
import { seedDemoData } from './seed.ts';
import { countUsers } from './users/users.store.ts';

export interface RunningServer {
  app: FastifyInstance;
  db: Db;
  url: string;
  stop(): Promise<void>;
}

/** On the embedded database, commands run beside the server reach it through DATA_DIR's socket. */
async function serveToCommands(config: Config, db: Db, app: FastifyInstance): Promise<EmbeddedSocket | undefined> {
  if (db.kind !== 'pglite' || config.dataDir.startsWith('memory://')) return undefined;
  try {
    return await serveEmbeddedDatabase(db, config.dataDir, { idleInTransactionTimeoutMs: config.db.idleInTransactionTimeoutMs });
  } catch (error) {
    if (!(error instanceof SocketPathTooLongError)) throw error;
    app.log.warn(`${error.message}: commands cannot reach the embedded database while this server runs (choose a shorter DATA_DIR)`);
    return undefined;
  }
}

export async function startServer(config: Config): Promise<RunningServer> {
  const db = await createDatabase(config);
  let commandSocket: EmbeddedSocket | undefined;
  try {
    await migrate(db);
    if (config.seedOnEmpty && (await countUsers(db)) === 0) await seedDemoData(db);
    await ensureActiveSigningKey(db);
    // Crash tests stop a real process at a named point of a write: never outside NODE_ENV=test.
    const failpoint = config.env === 'test' ? failpointFromEnv(process.env.ORDERPAY_FAILPOINTS) : undefined;
    const app = await buildApp(config, db, { failpoint });
    commandSocket = await serveToCommands(config, db, app);
    await app.listen({ host: config.host, port: config.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    let stopping: Promise<void> | undefined;
    return {
      app,
      db,
      url,
      // Drained before Fastify closes: its onClose hooks (background jobs, the provider) must not
      // run under a request still in flight.
      stop: () =>
        (stopping ??= app
          .drainConnections()
          .then(() => app.close())
          .finally(() => commandSocket?.close())
          .finally(() => db.close())),
    };
  } catch (error) {
    await commandSocket?.close();
    await db.close().catch(() => undefined);
    throw error;
  }
}

/** Stops the server on SIGTERM/SIGINT: stop accepting, finish in-flight requests, close the pool. */
export function stopOnSignals(server: RunningServer): void {
  const shutdown = (signal: NodeJS.Signals) => {
    server.app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
