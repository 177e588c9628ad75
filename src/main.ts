// Process entry: load configuration → open and migrate the database → build the app → listen.
// The only module that listens; SIGTERM/SIGINT drain the connections (src/http/connections.ts),
// then close the database.
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { ensureActiveSigningKey } from './auth/keys.store.ts';
import { ConfigError, type Config } from './config.ts';
import { createDatabase } from './db/create-database.ts';
import type { Db } from './db/db.ts';
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

/** Why the server cannot listen where the configuration says, by the system's error code. */
const LISTEN_REFUSALS: Record<string, (config: Config) => string> = {
  EADDRINUSE: ({ host, port }) => `PORT ${port} is in use on ${host} by another process: stop it, or set PORT to a free port`,
  EACCES: ({ port }) => `PORT ${port} needs privileges this process does not have (ports below 1024): set PORT to 1024 or above`,
  EADDRNOTAVAIL: ({ host }) => `HOST ${host} is not an address of this machine: set HOST to one of its addresses, or 0.0.0.0 for all`,
  ENOTFOUND: ({ host }) => `HOST ${host} does not resolve to an address: set HOST to an address of this machine, or 0.0.0.0 for all`,
  EAI_AGAIN: ({ host }) => `HOST ${host} could not be resolved (DNS did not answer): set HOST to an IP address`,
};

/** Listens; a port or host the configuration got wrong is a ConfigError (one line, exit 2), not a stack trace. */
async function listenOn(app: FastifyInstance, config: Config): Promise<void> {
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    const refusal = LISTEN_REFUSALS[(error as NodeJS.ErrnoException).code ?? ''];
    if (refusal) throw new ConfigError(refusal(config));
    throw error;
  }
}

export async function startServer(config: Config): Promise<RunningServer> {
  const db = await createDatabase(config);
  try {
    await migrate(db);
    if (config.seedOnEmpty && (await countUsers(db)) === 0) await seedDemoData(db);
    await ensureActiveSigningKey(db);
    // Crash tests stop a real process at a named point of a write: never outside NODE_ENV=test.
    const failpoint = config.env === 'test' ? failpointFromEnv(process.env.ORDERPAY_FAILPOINTS) : undefined;
    const app = await buildApp(config, db, { failpoint });
    await listenOn(app, config);
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
          .finally(() => db.close())),
    };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}

/** How long a shutdown may take before the process gives up on it and exits 1. */
const SHUTDOWN_LIMIT_MS = 15_000;

export interface StopSignals {
  /**
   * Hands over the server to stop. When a signal came while it was starting, it is stopped at
   * once and this returns true.
   */
  serve(server: RunningServer): boolean;
}

/**
 * From now on, SIGTERM and SIGINT stop the server: stop accepting, finish in-flight requests,
 * close the pool, exit 0. Installed before the server starts, so that a signal during start-up
 * (migrations, seeding) stops it once it is up instead of killing it halfway. A repeated signal
 * changes nothing: a terminal's Ctrl-C reaches every process of its group and `npm start` forwards
 * it again, so the server gets it twice (docs/deploy.md, "Signals").
 */
export function listenForStopSignals(): StopSignals {
  let server: RunningServer | undefined;
  let received: NodeJS.Signals | undefined;
  const shutdown = (running: RunningServer, signal: NodeJS.Signals) => {
    running.app.log.info({ signal }, 'shutting down');
    running.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        running.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) {
      server?.app.log.debug({ signal }, 'already shutting down');
      return;
    }
    received = signal;
    setTimeout(() => process.exit(1), SHUTDOWN_LIMIT_MS).unref();
    if (server) shutdown(server, signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    serve(running) {
      server = running;
      if (received) shutdown(running, received);
      return received !== undefined;
    },
  };
}
