// Versioned SQL migrations (src/db/migrations/NNNN_name.sql), applied in order inside one
// transaction that first takes an advisory lock, so two processes starting at once apply each
// migration exactly once: the second waits, then finds nothing left to do.
import { readdir, readFile } from 'node:fs/promises';
import type { Config } from '../config.ts';
import type { Db } from './db.ts';
import { openPostgres } from './postgres.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
// Arbitrary constant naming "orderpay migrations" in pg_advisory_xact_lock's key space.
const MIGRATION_LOCK_KEY = 7_202_611_220;

export interface Migration {
  version: string;
  sql: string;
}

export async function loadMigrations(): Promise<Migration[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({ version: file.replace(/\.sql$/, ''), sql: await readFile(new URL(file, MIGRATIONS_DIR), 'utf8') })),
  );
}

/** Applies every pending migration; returns the versions applied by this call. */
export async function migrate(db: Db): Promise<string[]> {
  const migrations = await loadMigrations();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await tx.query<{ version: string }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => r.version));
    const pending = migrations.filter((m) => !applied.has(m.version));
    for (const migration of pending) {
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
    }
    return pending.map((m) => m.version);
  });
}

/**
 * Migrates through ORDERPAY_DB_DIRECT_URL when it is set, else through db: a pooler in front may
 * cut a long DDL statement at its query timeout, and migrations are the one job that wants a
 * server connection of its own for their whole length.
 */
export async function migrateDatabase(config: Pick<Config, 'db'>, db: Db): Promise<string[]> {
  if (config.db.directUrl === undefined) return migrate(db);
  const direct = await openPostgres(config.db.directUrl, { ...config.db, pooler: 'none', poolMax: 1 });
  try {
    return await migrate(direct);
  } finally {
    await direct.close();
  }
}
