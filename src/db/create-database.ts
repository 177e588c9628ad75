// createDatabase(config) → the Db for this configuration: PostgreSQL when DATABASE_URL is set,
// otherwise the embedded database in DATA_DIR. Either way, conflicting transactions are retried.
import type { Config } from '../config.ts';
import type { Db } from './db.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';
import { withTransactionRetry } from './transaction.ts';

export async function createDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'db'>): Promise<Db> {
  return withTransactionRetry(config.databaseUrl ? await openPostgres(config.databaseUrl, config.db) : await openPglite(config.dataDir));
}
