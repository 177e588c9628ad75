// Transactions PostgreSQL aborts as a deadlock (40P01) or serialization failure (40001) did
// nothing, so src/db/transaction.ts runs them again, a bounded number of times; other errors
// pass through at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/db/db.ts';
import { retryConflicts, TRANSACTION_ATTEMPTS } from '../../src/db/transaction.ts';
import { createTestDatabase, serverUrl, type TestDatabase } from '../helpers/db.ts';

/** An error as both drivers raise it: an Error with the SQLSTATE in `code`. */
const sqlError = (code: string) => Object.assign(new Error(`SQLSTATE ${code}`), { code });

describe('retryConflicts', () => {
  for (const code of ['40001', '40P01']) {
    test(`${code}: run again until it succeeds, within ${TRANSACTION_ATTEMPTS} attempts`, async () => {
      let attempts = 0;
      const result = await retryConflicts(async () => {
        attempts++;
        if (attempts < TRANSACTION_ATTEMPTS) throw sqlError(code);
        return 'done';
      });
      assert.equal(result, 'done');
      assert.equal(attempts, TRANSACTION_ATTEMPTS);
    });
  }

  test(`a conflict on every attempt: the last one is thrown after ${TRANSACTION_ATTEMPTS} attempts`, async () => {
    let attempts = 0;
    await assert.rejects(
      retryConflicts(async () => {
        attempts++;
        throw sqlError('40P01');
      }),
      (error: unknown) => (error as { code?: string }).code === '40P01',
    );
    assert.equal(attempts, TRANSACTION_ATTEMPTS);
  });

  test('any other error is thrown at once, never retried', async () => {
    for (const error of [sqlError('23505'), sqlError('57014'), new Error('not a database error')]) {
      let attempts = 0;
      await assert.rejects(
        retryConflicts(async () => {
          attempts++;
          throw error;
        }),
        (thrown: unknown) => thrown === error,
      );
      assert.equal(attempts, 1);
    }
  });
});

// PGlite runs one transaction at a time, so two of them can never deadlock there.
if (serverUrl) {
  describe('a real deadlock on PostgreSQL', () => {
    let database: TestDatabase;
    let db: Db;

    before(async () => {
      database = await createTestDatabase();
      db = database.db;
      await db.exec(`CREATE TABLE retry_counters (id int PRIMARY KEY, n int NOT NULL);
        INSERT INTO retry_counters VALUES (1, 0), (2, 0);`);
    });
    after(() => database.drop());

    test('two transactions locking two rows in opposite orders: PostgreSQL aborts one, which runs again; both commit once', async () => {
      let runs = 0;
      let arrived = 0;
      let release!: () => void;
      const bothHoldOneRow = new Promise<void>((resolve) => (release = resolve));
      const meet = () => {
        if (++arrived === 2) release();
        return bothHoldOneRow;
      };
      const lockInOrder = (first: number, second: number) =>
        db.transaction(async (tx) => {
          runs++;
          await tx.query('UPDATE retry_counters SET n = n + 1 WHERE id = $1', [first]);
          // The first attempts meet here, each holding one row and wanting the other's; a retry does not wait.
          await meet();
          await tx.query('UPDATE retry_counters SET n = n + 1 WHERE id = $1', [second]);
        });
      await Promise.all([lockInOrder(1, 2), lockInOrder(2, 1)]);
      assert.equal(runs, 3, 'one of the two ran a second time');
      const { rows } = await db.query<{ id: number; n: number }>('SELECT id, n FROM retry_counters ORDER BY id');
      assert.deepEqual(rows, [
        { id: 1, n: 2 },
        { id: 2, n: 2 },
      ]);
    });
  });
}
