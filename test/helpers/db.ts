// A fresh, migrated database per test file: in-memory PGlite by default, or a new database on the
// PostgreSQL server named by TEST_DATABASE_URL (or DATABASE_URL), dropped afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';

export const serverUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || undefined;

/** `transaction` when TEST_DATABASE_URL goes through a transaction-mode pooler (scripts/pooled-tests.ts). */
export const serverPooler = process.env.TEST_DB_POOLER === 'transaction' ? 'transaction' : 'none';

/**
 * How soon a database that accepts connections again serves the application: at once directly;
 * behind a pooler, after its next server login attempt (server_login_retry, 1 s in
 * scripts/pooled-tests.ts).
 */
export const RECONNECT_BOUND_MS = 5000;

export const DB_OPTIONS = {
  pooler: serverPooler,
  poolMax: 5,
  connectTimeoutMs: 5000,
  statementTimeoutMs: 15_000,
  idleInTransactionTimeoutMs: 15_000,
} as const;

export interface TestDatabase {
  db: Db;
  /** Connection string of the test database (PostgreSQL only). */
  url: string | undefined;
  drop(): Promise<void>;
}

/** Runs one statement on the server's maintenance connection (PostgreSQL only). */
async function adminQuery(sql: string, params: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** An empty PostgreSQL database (not migrated), for tests of migrations themselves. */
export async function createEmptyServerDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `orderpay_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl!);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!serverUrl) {
    const db = await createDatabase({ databaseUrl: undefined, dataDir: 'memory://', db: DB_OPTIONS });
    await migrate(db);
    return { db, url: undefined, drop: () => db.close() };
  }
  const empty = await createEmptyServerDatabase();
  const db = await createDatabase({ databaseUrl: empty.url, dataDir: '', db: DB_OPTIONS });
  await migrate(db);
  return {
    db,
    url: empty.url,
    async drop() {
      await db.close();
      await empty.drop();
    },
  };
}

/**
 * Makes a test's database unreachable as a client sees it; returns what makes it reachable again.
 * PostgreSQL refuses new connections and cuts the open ones; the embedded database has no network,
 * so it is closed (and stays closed: the app must then not close it again).
 */
export async function makeDatabaseUnreachable(db: Db): Promise<() => Promise<void>> {
  if (db.kind !== 'postgres') {
    await db.close();
    return async () => {};
  }
  const { rows } = await db.query<{ name: string }>('SELECT current_database() AS name');
  const name = rows[0]!.name;
  await adminQuery(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
  await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  return () => adminQuery(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
}
