// createDatabase(config) → the Db for this configuration: PostgreSQL when DATABASE_URL is set,
// otherwise the embedded database in DATA_DIR.
import type { Config } from '../config.ts';
import type { Db } from './db.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

export function createDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'db'>): Promise<Db> {
  return config.databaseUrl ? openPostgres(config.databaseUrl, config.db) : openPglite(config.dataDir);
}
