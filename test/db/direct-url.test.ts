// ORDERPAY_DB_DIRECT_URL: migrations go over the direct connection, not through DATABASE_URL
// (which behind a pooler may cut a long DDL statement). Checked on PostgreSQL: the embedded
// database has no second way in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db } from '../../src/db/db.ts';
import { loadMigrations, migrateDatabase } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createEmptyServerDatabase, DB_OPTIONS, serverUrl } from '../helpers/db.ts';

/** A database every query of which fails: had the migrations gone through it, they would have failed. */
const unusable: Db = {
  kind: 'postgres',
  poolStats: () => ({ max: 0, open: 0, inUse: 0, waiting: 0 }),
  query: () => Promise.reject(new Error('migrations must not go through DATABASE_URL')),
  exec: () => Promise.reject(new Error('migrations must not go through DATABASE_URL')),
  transaction: () => Promise.reject(new Error('migrations must not go through DATABASE_URL')),
  close: async () => {},
};

test('with ORDERPAY_DB_DIRECT_URL set, every migration is applied over the direct connection', async (context) => {
  if (!serverUrl) {
    context.diagnostic('the embedded database has no direct connection beside it: checked on PostgreSQL');
    return;
  }
  const empty = await createEmptyServerDatabase();
  try {
    const config = { db: { ...DB_OPTIONS, pooler: 'transaction' as const, directUrl: empty.url, readUrl: undefined, readMaxLagMs: 5000 } };
    const applied = await migrateDatabase(config, unusable);
    assert.deepEqual(
      applied,
      (await loadMigrations()).map((m) => m.version),
    );
    const check = await openPostgres(empty.url, DB_OPTIONS);
    try {
      const { rows } = await check.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
      assert.equal(rows[0]!.n, applied.length);
    } finally {
      await check.close();
    }
    // Without it, they go through the database given (here the unusable one, which fails).
    await assert.rejects(migrateDatabase({ db: { ...config.db, directUrl: undefined } }, unusable), /must not go through DATABASE_URL/);
  } finally {
    await empty.drop();
  }
});
