// The storage layer on the configured database (PGlite by default, PostgreSQL with
// TEST_DATABASE_URL): value parsing identical on both drivers, transactions that neither
// interleave nor leak, and migrations applied exactly once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Db, Queryable } from '../../src/db/db.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { createEmptyServerDatabase, createTestDatabase, DB_OPTIONS, serverUrl, type TestDatabase } from '../helpers/db.ts';

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/;

/** Read-modify-write through two statements, so a second caller in between would lose an update. */
async function incrementCounter(tx: Queryable, name: string, lock: boolean): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(`SELECT n FROM storage_counters WHERE name = $1${lock ? ' FOR UPDATE' : ''}`, [name]);
  const next = rows[0]!.n + 1;
  await tx.query('UPDATE storage_counters SET n = $2 WHERE name = $1', [name, next]);
  return next;
}

describe(`storage layer (${serverUrl ? 'PostgreSQL' : 'PGlite'})`, () => {
  let database: TestDatabase;
  let db: Db;

  before(async () => {
    database = await createTestDatabase();
    db = database.db;
    await db.exec(`
      CREATE TABLE storage_counters (name text PRIMARY KEY, n bigint NOT NULL);
      CREATE TABLE storage_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run text NOT NULL, label text NOT NULL, at timestamptz NOT NULL DEFAULT now()
      );
    `);
  });
  after(() => database.drop());

  test('the configured driver is the one the environment names', () => {
    assert.equal(db.kind, serverUrl ? 'postgres' : 'pglite');
  });

  describe('value parsing, identical on both drivers', () => {
    test('int2, int4, int8, count(*) and identity ids come back as JS numbers', async () => {
      const { rows } = await db.query(
        `SELECT 3::int2 AS small, 7::int4 AS regular, 42::int8 AS big, 9007199254740991::int8 AS max_safe, -9007199254740991::int8 AS min_safe,
                (SELECT count(*) FROM generate_series(1, 5)) AS counted, NULL::int8 AS missing, ARRAY[1, NULL, 3]::int8[] AS list`,
      );
      assert.deepEqual(rows, [
        {
          small: 3,
          regular: 7,
          big: 42,
          max_safe: 9007199254740991,
          min_safe: -9007199254740991,
          counted: 5,
          missing: null,
          list: [1, null, 3],
        },
      ]);

      const inserted = await db.query<{ id: number }>(
        "INSERT INTO storage_events (run, label) VALUES ('ints', 'a'), ('ints', 'b') RETURNING id",
      );
      assert.equal(inserted.rowCount, 2);
      for (const row of inserted.rows) assert.ok(Number.isSafeInteger(row.id) && row.id > 0, `id ${String(row.id)} is a number`);
      // An int8 parameter round-trips as the same number.
      const echoed = await db.query<{ id: number }>('SELECT id FROM storage_events WHERE id = $1', [inserted.rows[1]!.id]);
      assert.deepEqual(echoed.rows, [{ id: inserted.rows[1]!.id }]);
    });

    test('an int8 outside the exact range of a JS number is an error, never a rounded number', async () => {
      await assert.rejects(db.query('SELECT 9007199254740993::int8 AS x'), {
        name: 'RangeError',
        message: 'int8 value 9007199254740993 exceeds the safe integer range',
      });
      await assert.rejects(db.query('SELECT ARRAY[9007199254740993]::int8[] AS x'), { name: 'RangeError' });
      // The failed parse leaves the connection usable.
      assert.deepEqual((await db.query('SELECT 1::int8 AS one')).rows, [{ one: 1 }]);
    });

    test('timestamptz comes back as an RFC 3339 string in UTC, at least milliseconds, microseconds kept, whatever offset went in', async () => {
      const { rows } = await db.query(
        `SELECT '2026-01-02 03:04:05.123456+02'::timestamptz AS with_offset,
                '2026-01-02 03:04:05+00'::timestamptz AS whole_second,
                '2026-06-30 23:59:59.5-07:30'::timestamptz AS negative_offset,
                '2026-03-29 01:30:00 Europe/Berlin'::timestamptz AS named_zone,
                ARRAY['2026-01-02 03:04:05.000001+00'::timestamptz, NULL] AS list,
                NULL::timestamptz AS missing`,
      );
      assert.deepEqual(rows, [
        {
          with_offset: '2026-01-02T01:04:05.123456Z',
          whole_second: '2026-01-02T03:04:05.000Z',
          negative_offset: '2026-07-01T07:29:59.500Z',
          named_zone: '2026-03-29T00:30:00.000Z',
          list: ['2026-01-02T03:04:05.000001Z', null],
          missing: null,
        },
      ]);
    });

    test('timestamptz(3) is exactly milliseconds: rounded to them, trailing zeros written', async () => {
      const { rows } = await db.query(
        `SELECT '2026-01-02 03:04:05.123456+00'::timestamptz(3) AS rounded,
                '2026-01-02 03:04:05.9996+00'::timestamptz(3) AS next_second,
                '2026-01-02 03:04:05.1+00'::timestamptz(3) AS tenths`,
      );
      assert.deepEqual(rows, [
        { rounded: '2026-01-02T03:04:05.123Z', next_second: '2026-01-02T03:04:06.000Z', tenths: '2026-01-02T03:04:05.100Z' },
      ]);
    });

    test('now() and a stored default are RFC 3339 UTC strings that round-trip as parameters', async () => {
      const { rows } = await db.query<{ id: number; at: string; now: string }>(
        "INSERT INTO storage_events (run, label) VALUES ('ts', 'default') RETURNING id, at, now() AS now",
      );
      const { id, at, now } = rows[0]!;
      assert.match(at, RFC3339_UTC);
      assert.equal(at, now, 'the default is the statement time');
      assert.ok(!Number.isNaN(Date.parse(at)));
      // Written back as a parameter, the string is the same instant, read back the same way.
      await db.query("INSERT INTO storage_events (run, label, at) VALUES ('ts', 'copy', $1)", [at]);
      const copies = await db.query("SELECT label, at FROM storage_events WHERE run = 'ts' ORDER BY id");
      assert.deepEqual(copies.rows, [
        { label: 'default', at },
        { label: 'copy', at },
      ]);
      const same = await db.query('SELECT at = $2::timestamptz AS same FROM storage_events WHERE id = $1', [id, at]);
      assert.deepEqual(same.rows, [{ same: true }]);
    });

    test('inside a transaction the same parsers apply', async () => {
      const row = await db.transaction(async (tx) => {
        const { rows } = await tx.query("SELECT 5::int8 AS n, '2026-01-02 03:04:05.25+01'::timestamptz AS at");
        return rows[0];
      });
      assert.deepEqual(row, { n: 5, at: '2026-01-02T02:04:05.250Z' });
    });

    test('booleans, jsonb, char(n) and text come back as their JS forms', async () => {
      const { rows } = await db.query(`SELECT true AS yes, '{"a":[1,"x"]}'::jsonb AS doc, 'EUR'::char(3) AS currency, 'ü😀'::text AS word`);
      assert.deepEqual(rows, [{ yes: true, doc: { a: [1, 'x'] }, currency: 'EUR', word: 'ü😀' }]);
    });
  });

  describe('transactions', () => {
    test('20 concurrent read-modify-write transactions and concurrent plain queries never interleave', async () => {
      const run = `concurrency-${Date.now()}`;
      await db.query('INSERT INTO storage_counters (name, n) VALUES ($1, 0)', [run]);
      // On PostgreSQL the row lock serialises the writers; on PGlite (one connection, where a lock
      // held by "another" transaction would be our own) only the adapter's queue can.
      const lock = db.kind === 'postgres';
      const failing = new Set([3, 8, 13, 18]);
      const transactions = Array.from({ length: 20 }, (_, i) =>
        db.transaction(async (tx) => {
          const value = await incrementCounter(tx, run, lock);
          await tx.query('INSERT INTO storage_events (run, label) VALUES ($1, $2)', [run, `tx-${i}`]);
          if (failing.has(i)) throw new Error(`transaction ${i} fails after writing`);
          return value;
        }),
      );
      const plain = Array.from({ length: 20 }, (_, i) =>
        db.query('INSERT INTO storage_events (run, label) VALUES ($1, $2)', [run, `plain-${i}`]),
      );
      const reads = Array.from({ length: 10 }, () => db.query<{ n: number }>('SELECT n FROM storage_counters WHERE name = $1', [run]));

      const settled = await Promise.allSettled(transactions);
      await Promise.all([...plain, ...reads]);

      const committed = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const rejected = settled.flatMap((s, i) => (s.status === 'rejected' ? [[i, (s.reason as Error).message]] : []));
      assert.deepEqual(
        rejected,
        [...failing].map((i) => [i, `transaction ${i} fails after writing`]),
      );
      // Every committed increment saw the previous committed one: no lost update, no duplicate.
      assert.deepEqual(
        [...committed].sort((a, b) => a - b),
        Array.from({ length: 16 }, (_, i) => i + 1),
      );
      const counter = await db.query<{ n: number }>('SELECT n FROM storage_counters WHERE name = $1', [run]);
      assert.deepEqual(counter.rows, [{ n: 16 }]);
      // No plain statement ran inside (and was rolled back with) a failing transaction.
      const { rows } = await db.query<{ label: string }>('SELECT label FROM storage_events WHERE run = $1 ORDER BY label', [run]);
      const expected = [
        ...Array.from({ length: 20 }, (_, i) => `plain-${i}`),
        ...Array.from({ length: 20 }, (_, i) => i)
          .filter((i) => !failing.has(i))
          .map((i) => `tx-${i}`),
      ].sort();
      assert.deepEqual(
        rows.map((r) => r.label),
        expected,
      );
      for (const read of await Promise.all(reads)) assert.ok(read.rows[0]!.n >= 0 && read.rows[0]!.n <= 16);
    });

    test('a transaction that throws rolls back its writes and rethrows the same error', async () => {
      const run = `rollback-${Date.now()}`;
      const failure = new Error('changed my mind');
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO storage_events (run, label) VALUES ($1, $2)', [run, 'inside']);
          await tx.exec(`INSERT INTO storage_counters (name, n) VALUES ('${run}', 1)`);
          const { rows } = await tx.query<{ n: number }>('SELECT count(*) AS n FROM storage_events WHERE run = $1', [run]);
          assert.equal(rows[0]!.n, 1, 'the transaction sees its own write');
          throw failure;
        }),
        (error) => error === failure,
      );
      assert.deepEqual((await db.query('SELECT label FROM storage_events WHERE run = $1', [run])).rows, []);
      assert.deepEqual((await db.query('SELECT n FROM storage_counters WHERE name = $1', [run])).rows, []);
    });

    test('a statement error aborts and rolls back the transaction; the next one starts clean', async () => {
      const run = `sql-error-${Date.now()}`;
      await db.query('INSERT INTO storage_counters (name, n) VALUES ($1, 0)', [run]);
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('UPDATE storage_counters SET n = 99 WHERE name = $1', [run]);
          await tx.query('INSERT INTO storage_counters (name, n) VALUES ($1, 1)', [run]);
        }),
        (error: unknown) => (error as { code?: string }).code === '23505',
      );
      assert.deepEqual((await db.query('SELECT n FROM storage_counters WHERE name = $1', [run])).rows, [{ n: 0 }]);
      const value = await db.transaction((tx) => incrementCounter(tx, run, true));
      assert.equal(value, 1);
      assert.deepEqual((await db.query('SELECT n FROM storage_counters WHERE name = $1', [run])).rows, [{ n: 1 }]);
    });

    test('a transaction returns what its function returns, after COMMIT', async () => {
      const run = `commit-${Date.now()}`;
      const result = await db.transaction(async (tx) => {
        await tx.query('INSERT INTO storage_events (run, label) VALUES ($1, $2)', [run, 'kept']);
        return { ok: true };
      });
      assert.deepEqual(result, { ok: true });
      assert.deepEqual((await db.query('SELECT label FROM storage_events WHERE run = $1', [run])).rows, [{ label: 'kept' }]);
    });
  });

  describe('migrations', () => {
    test('a second migrate() on a migrated database applies nothing and changes no record', async () => {
      const versions = (await loadMigrations()).map((m) => m.version);
      assert.ok(versions.length > 0);
      const recorded = async () =>
        (await db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
      assert.deepEqual(await recorded(), versions);
      assert.deepEqual(await migrate(db), []);
      assert.deepEqual(await migrate(db), []);
      assert.deepEqual(await recorded(), versions);
    });

    test('migration files are versioned NNNN_name, unique, and load in order', async () => {
      const migrations = await loadMigrations();
      const versions = migrations.map((m) => m.version);
      assert.deepEqual(versions, [...versions].sort());
      for (const version of versions) assert.match(version, /^\d{4}_[a-z0-9_]+$/);
      assert.equal(new Set(versions).size, versions.length);
    });

    test('0006 pins the clients registered before it to API version 1, the version they were built against', async () => {
      const empty = serverUrl ? await createEmptyServerDatabase() : undefined;
      const fresh = await createDatabase({ databaseUrl: empty?.url, dataDir: empty ? '' : 'memory://', db: DB_OPTIONS });
      try {
        // The database as it stood before 0006: migrated that far, with a client registered.
        const earlier = (await loadMigrations()).filter((m) => m.version < '0006');
        await fresh.exec('CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
        for (const migration of earlier) {
          await fresh.exec(migration.sql);
          await fresh.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
        }
        await fresh.query("INSERT INTO oauth_clients (client_id, client_name, metadata) VALUES ('op_existing', 'Existing', '{}')");

        assert.equal((await migrate(fresh))[0], '0006_client_api_version');
        const { rows } = await fresh.query<{ api_version: number }>(
          "SELECT api_version FROM oauth_clients WHERE client_id = 'op_existing'",
        );
        assert.deepEqual(rows, [{ api_version: 1 }]);
      } finally {
        await fresh.close();
        await empty?.drop();
      }
    });

    test(
      serverUrl
        ? 'PostgreSQL: two processes migrating one empty database at once apply each migration exactly once (advisory lock)'
        : 'PGlite: two concurrent migrate() calls on one empty embedded database apply each migration exactly once',
      async () => {
        const versions = (await loadMigrations()).map((m) => m.version);
        let first: Db;
        let second: Db;
        let drop: () => Promise<void>;
        if (serverUrl) {
          // Two Db instances: two pools, as two processes starting at once would have.
          const empty = await createEmptyServerDatabase();
          first = await createDatabase({ databaseUrl: empty.url, dataDir: '', db: DB_OPTIONS });
          second = await createDatabase({ databaseUrl: empty.url, dataDir: '', db: DB_OPTIONS });
          drop = async () => {
            await first.close();
            await second.close();
            await empty.drop();
          };
        } else {
          // PGlite is one process's own database: two processes cannot open it, so the equivalent is
          // two overlapping calls through the one handle.
          first = await createDatabase({ databaseUrl: undefined, dataDir: 'memory://', db: DB_OPTIONS });
          second = first;
          drop = () => first.close();
        }
        try {
          const [a, b] = await Promise.all([migrate(first), migrate(second)]);
          // One call did all the work; the other waited and found nothing left.
          assert.deepEqual(
            [a, b].sort((x, y) => y.length - x.length),
            [versions, []],
          );
          const { rows } = await first.query<{ version: string; copies: number }>(
            'SELECT version, count(*) AS copies FROM schema_migrations GROUP BY version ORDER BY version',
          );
          assert.deepEqual(
            rows,
            versions.map((version) => ({ version, copies: 1 })),
          );
          // The schema is usable from both handles.
          const tables = await second.query<{ n: number }>(
            "SELECT count(*) AS n FROM information_schema.tables WHERE table_name IN ('orders', 'order_items', 'products', 'users')",
          );
          assert.deepEqual(tables.rows, [{ n: 4 }]);
          assert.deepEqual(await migrate(second), []);
        } finally {
          await drop();
        }
      },
    );
  });
});
