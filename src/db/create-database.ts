// createDatabase(config) → the Db for this configuration: PostgreSQL when DATABASE_URL is set,
// otherwise the embedded database in DATA_DIR. Either way, conflicting transactions are retried.
// openCommandDatabase(config) → the same for a command, which on the embedded database goes
// through `orderpay serve` when one runs there.
import type { Config } from '../config.ts';
import { DataDirInUseError } from './data-dir-lock.ts';
import type { Db } from './db.ts';
import { connectEmbeddedDatabase } from './embedded-socket-client.ts';
import { openPostgres, type PostgresOptions } from './postgres.ts';
import { withTransactionRetry } from './transaction.ts';

/** Where the database is and how to open it. */
export type DatabaseLocation = Pick<Config, 'databaseUrl' | 'dataDir'> & { db: PostgresOptions };

export async function createDatabase(config: DatabaseLocation): Promise<Db> {
  if (config.databaseUrl) return withTransactionRetry(await openPostgres(config.databaseUrl, config.db));
  // Loaded only for the embedded database: PGlite's module is a few MB of heap a process on
  // PostgreSQL would carry for nothing (docs/benchmarks.md, "Memory").
  const { openPglite } = await import('./pglite.ts');
  return withTransactionRetry(await openPglite(config.dataDir));
}

// A server still starting (migrating) holds the lock before its socket listens, and another
// command holds it for seconds at most: wait that long before calling the directory in use.
const COMMAND_WAIT_MS = 15_000;
const COMMAND_POLL_MS = 100;

/**
 * For a command: the running server's embedded database over its socket (DATA_DIR/orderpay.sock),
 * else the data directory opened directly, as `serve` does. PostgreSQL is opened as usual.
 */
export async function openCommandDatabase(config: DatabaseLocation): Promise<Db> {
  if (config.databaseUrl || config.dataDir.startsWith('memory://')) return createDatabase(config);
  const deadline = Date.now() + COMMAND_WAIT_MS;
  for (;;) {
    const served = await connectEmbeddedDatabase(config.dataDir);
    if (served) return withTransactionRetry(served);
    try {
      return await createDatabase(config);
    } catch (error) {
      if (!(error instanceof DataDirInUseError) || Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, COMMAND_POLL_MS));
  }
}
