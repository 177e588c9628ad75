// Process entry: load configuration → open and migrate the database → build the app → listen.
// The only module that listens (HTTP, and on the embedded database the socket commands reach it
// through); SIGTERM/SIGINT drain the connections (src/http/connections.ts), then close the database.
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { ensureActiveSigningKey } from './auth/keys.store.ts';
import { ConfigError, type Config } from './config.ts';
import { createDatabase } from './db/create-database.ts';
import type { Db } from './db/db.ts';
import { serveEmbeddedDatabase, SocketPathTooLongError, type EmbeddedSocket } from './db/embedded-socket-server.ts';
import { migrateDatabase } from './db/migrate.ts';
import { failpointFromEnv } from './core/failpoints.ts';
import { buildMetricsApp } from './http/metrics-listener.ts';
import { PROCESSOR_REQUIRED } from './payments/processors.ts';
import { seedDemoData } from './seed.ts';
import { countUsers } from './users/users.store.ts';

export interface RunningServer {
  app: FastifyInstance;
  db: Db;
  url: string;
  /** Where /metrics answers when it has a listener of its own (ORDERPAY_METRICS_PORT). */
  metricsUrl: string | undefined;
  stop(): Promise<void>;
}

/** Where a listener is told to listen, and the variables that said so. */
interface ListenAt {
  host: string;
  port: number | undefined;
  hostName: string;
  portName: string;
}

/** Why a listener cannot listen where the configuration says, by the system's error code. */
const LISTEN_REFUSALS: Record<string, (at: ListenAt) => string> = {
  EADDRINUSE: ({ host, port, portName }) =>
    `${portName} ${port} is in use on ${host} by another process: stop it, or set ${portName} to a free port`,
  EACCES: ({ port, portName }) =>
    `${portName} ${port} needs privileges this process does not have (ports below 1024): set ${portName} to 1024 or above`,
  EADDRNOTAVAIL: ({ host, hostName }) =>
    `${hostName} ${host} is not an address of this machine: set ${hostName} to one of its addresses, or 0.0.0.0 for all`,
  ENOTFOUND: ({ host, hostName }) =>
    `${hostName} ${host} does not resolve to an address: set ${hostName} to an address of this machine, or 0.0.0.0 for all`,
  EAI_AGAIN: ({ host, hostName }) => `${hostName} ${host} could not be resolved (DNS did not answer): set ${hostName} to an IP address`,
};

/** Listens; a port or host the configuration got wrong is a ConfigError (one line, exit 2), not a stack trace. */
async function listenOn(app: FastifyInstance, at: ListenAt): Promise<void> {
  try {
    await app.listen({ host: at.host, port: at.port });
  } catch (error) {
    const refusal = LISTEN_REFUSALS[(error as NodeJS.ErrnoException).code ?? ''];
    if (refusal) throw new ConfigError(refusal(at));
    throw error;
  }
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
  // Refused before anything is opened: production never pays through a processor it was not told of.
  if (config.servers.resource && config.payments.processor === undefined) throw new ConfigError(PROCESSOR_REQUIRED);
  const db = await createDatabase(config);
  let app: FastifyInstance | undefined;
  let metricsApp: FastifyInstance | undefined;
  let commandSocket: EmbeddedSocket | undefined;
  try {
    await migrateDatabase(config, db);
    if (config.seedOnEmpty && (await countUsers(db)) === 0) await seedDemoData(db);
    await ensureActiveSigningKey(db);
    // Crash tests stop a real process at a named point of a write: never outside NODE_ENV=test.
    const failpoint = config.env === 'test' ? failpointFromEnv(process.env.ORDERPAY_FAILPOINTS) : undefined;
    app = await buildApp(config, db, { failpoint });
    commandSocket = await serveToCommands(config, db, app);
    if (config.metrics.listener === 'own') {
      const listener = await buildMetricsApp(app);
      metricsApp = listener;
      // Scraped while the API drains; closed with it.
      app.addHook('onClose', async function closeMetricsListener() {
        await listener.close();
      });
      await listenOn(listener, {
        host: config.metrics.host,
        port: config.metrics.port,
        hostName: 'ORDERPAY_METRICS_HOST',
        portName: 'ORDERPAY_METRICS_PORT',
      });
    }
    await listenOn(app, { host: config.host, port: config.port, hostName: 'HOST', portName: 'PORT' });
    const url = listeningUrl(app, config.host, config.port);
    const metricsUrl = metricsApp && `${listeningUrl(metricsApp, config.metrics.host, config.metrics.port)}/metrics`;
    if (metricsUrl) app.log.info({ metricsUrl }, 'metrics served on their own listener');
    if (config.metrics.listener === 'none')
      app.log.warn('/metrics is not served: in production set ORDERPAY_METRICS_TOKEN or ORDERPAY_METRICS_PORT (docs/deploy.md)');
    let stopping: Promise<void> | undefined;
    const started = app;
    return {
      app,
      db,
      url,
      metricsUrl,
      // Drained before Fastify closes: its onClose hooks (background jobs, the provider) must not
      // run under a request still in flight.
      stop: () =>
        (stopping ??= started
          .drainConnections()
          .then(() => started.close())
          .finally(() => commandSocket?.close())
          .finally(() => db.close())),
    };
  } catch (error) {
    // What started with the app (background jobs, the webhook listener's connection) ends with it.
    await app?.close().catch(() => undefined);
    await metricsApp?.close().catch(() => undefined);
    await commandSocket?.close();
    await db.close().catch(() => undefined);
    throw error;
  }
}

function listeningUrl(app: FastifyInstance, host: string, configuredPort: number | undefined): string {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : configuredPort;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** How long a shutdown may take, from its start, before the process gives up on it and exits 1. */
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
    // The limit counts from the shutdown's start: a signal during start-up waits for the start
    // (migrations, seeding), however long it takes, rather than ending the process halfway.
    setTimeout(() => process.exit(1), SHUTDOWN_LIMIT_MS).unref();
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
