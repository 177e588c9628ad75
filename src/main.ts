// Process entry: load configuration → open and migrate the database → build the app → listen.
// The only module that listens; SIGTERM/SIGINT drain the connections (src/http/connections.ts),
// then close the database.
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { ensureActiveSigningKey } from './auth/keys.store.ts';
import type { Config } from './config.ts';
import { createDatabase } from './db/create-database.ts';
import type { Db } from './db/db.ts';
import { migrate } from './db/migrate.ts';
import { failpointFromEnv } from './http/idempotency/failpoints.ts';
import { buildMetricsApp } from './http/metrics-listener.ts';
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

export async function startServer(config: Config): Promise<RunningServer> {
  const db = await createDatabase(config);
  let metricsApp: FastifyInstance | undefined;
  try {
    await migrate(db);
    if (config.seedOnEmpty && (await countUsers(db)) === 0) await seedDemoData(db);
    await ensureActiveSigningKey(db);
    // Crash tests stop a real process at a named point of a write: never outside NODE_ENV=test.
    const failpoint = config.env === 'test' ? failpointFromEnv(process.env.ORDERPAY_FAILPOINTS) : undefined;
    const app = await buildApp(config, db, { failpoint });
    if (config.metrics.listener === 'own') {
      const listener = await buildMetricsApp(app);
      metricsApp = listener;
      // Scraped while the API drains; closed with it.
      app.addHook('onClose', async function closeMetricsListener() {
        await listener.close();
      });
      await listener.listen({ host: config.metrics.host, port: config.metrics.port });
    }
    await app.listen({ host: config.host, port: config.port });
    const url = listeningUrl(app, config.host, config.port);
    const metricsUrl = metricsApp && `${listeningUrl(metricsApp, config.metrics.host, config.metrics.port)}/metrics`;
    if (metricsUrl) app.log.info({ metricsUrl }, 'metrics served on their own listener');
    if (config.metrics.listener === 'none')
      app.log.warn('/metrics is not served: in production set ORDERPAY_METRICS_TOKEN or ORDERPAY_METRICS_PORT (docs/deploy.md)');
    let stopping: Promise<void> | undefined;
    return {
      app,
      db,
      url,
      metricsUrl,
      // Drained before Fastify closes: its onClose hooks (background jobs, the provider) must not
      // run under a request still in flight.
      stop: () =>
        (stopping ??= app
          .drainConnections()
          .then(() => app.close())
          .finally(() => db.close())),
    };
  } catch (error) {
    await metricsApp?.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
}

function listeningUrl(app: FastifyInstance, host: string, configuredPort: number | undefined): string {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : configuredPort;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
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
