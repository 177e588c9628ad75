// The database store's leases (src/http/rate-limit/postgres-counters.ts) on a real database: a
// busy caller costs a round trip per block, not per request; a caller's first hit of a window
// takes one hit only; a spent window is not asked again for a second; the limit is a hard cap.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Queryable } from '../../../src/db/db.ts';
import { createPostgresCounters, largestBlock } from '../../../src/http/rate-limit/postgres-counters.ts';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../helpers/db.ts';
import { recordingLog } from '../../helpers/redis.ts';

const WINDOW_MS = 60_000;

describe(`rate-limit leases in ${serverUrl ? 'PostgreSQL' : 'PGlite'}`, () => {
  let database: TestDatabase;
  let statements = 0;
  /** The test database, counting the statements sent to it. */
  let db: Queryable;
  // A clock the tests move: mid-window to start with.
  let at = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS + WINDOW_MS / 2;
  const now = () => new Date(at);
  before(async () => {
    database = await createTestDatabase();
    db = {
      query: (sql, params) => {
        statements++;
        return database.db.query(sql, params);
      },
      exec: (sql) => database.db.exec(sql),
    };
  });
  after(() => database.drop());

  const hitsInDatabase = async (key: string) =>
    (await database.db.query<{ hits: number }>('SELECT hits FROM rate_limit_hits WHERE key = $1', [key])).rows.map((r) => r.hits);

  test('blocks are 1% of the limit, at most 1000; limits under 200 are counted one hit at a time', () => {
    assert.deepEqual([5, 199, 200, 600, 100_000, 1_000_000_000].map(largestBlock), [1, 1, 2, 6, 1000, 1000]);
  });

  test("a window's first hit leases one hit: a caller with one request strands nothing", async () => {
    const counters = createPostgresCounters(db, { now, log: recordingLog() });
    assert.deepEqual(await counters.hit('one-request', WINDOW_MS, 1000), { current: 1, ttl: WINDOW_MS / 2 });
    assert.deepEqual(await hitsInDatabase('one-request'), [1]);
  });

  test('a busy caller costs a statement per block, and the count it reports is exact', async () => {
    const counters = createPostgresCounters(db, { now, log: recordingLog() });
    statements = 0;
    for (let i = 1; i <= 5000; i++) assert.equal((await counters.hit('busy', WINDOW_MS, 100_000)).current, i);
    // Blocks of 1, 2, 4 … 512, then 1000 at a time: 16 leases for 5000 hits, one of them ahead of time.
    assert.ok(statements <= 17, `${statements} statements for 5000 hits`);
  });

  test('two processes never hand out more than the limit between them', async () => {
    const first = createPostgresCounters(db, { now, log: recordingLog() });
    const second = createPostgresCounters(db, { now, log: recordingLog() });
    const limit = 1000;
    let admitted = 0;
    await Promise.all(
      [first, second].map(async (counters) => {
        for (let i = 0; i < limit; i++) if ((await counters.hit('shared', WINDOW_MS, limit)).current <= limit) admitted++;
      }),
    );
    assert.equal(admitted, limit);
  });

  test('a spent window is refused from memory for a second, then asked again', async () => {
    const counters = createPostgresCounters(db, { now, log: recordingLog() });
    for (let i = 0; i < 3; i++) assert.ok((await counters.hit('spent', WINDOW_MS, 3)).current <= 3);
    statements = 0;
    for (let i = 0; i < 50; i++) assert.equal((await counters.hit('spent', WINDOW_MS, 3)).current, 4);
    assert.equal(statements, 1, 'one lease found the window spent; the other 49 refusals asked nothing');
    at += 1000;
    await counters.hit('spent', WINDOW_MS, 3);
    assert.equal(statements, 2);
  });

  test('hits given back make room at once, also in a window this process found spent', async () => {
    const counters = createPostgresCounters(db, { now, log: recordingLog() });
    for (let i = 1; i <= 2; i++) assert.equal((await counters.hit('given-back', WINDOW_MS, 2)).current, i);
    // A refused attempt counts as an attempt, as the sign-in limits always counted them.
    assert.equal((await counters.hit('given-back', WINDOW_MS, 2)).current, 3);
    await counters.giveBack('given-back', WINDOW_MS);
    await counters.giveBack('given-back', WINDOW_MS);
    assert.equal((await counters.hit('given-back', WINDOW_MS, 2)).current, 2);
    assert.deepEqual(await hitsInDatabase('given-back'), [2]);
  });

  test('the next window starts afresh', async () => {
    const counters = createPostgresCounters(db, { now, log: recordingLog() });
    await counters.hit('windows', WINDOW_MS, 1);
    assert.equal((await counters.hit('windows', WINDOW_MS, 1)).current, 2);
    at += WINDOW_MS;
    assert.equal((await counters.hit('windows', WINDOW_MS, 1)).current, 1);
  });

  test('an unreachable database rejects the hit: the caller decides what that means', async () => {
    const broken: Queryable = {
      query: () => database.db.query('SELECT * FROM no_such_table'),
      exec: async () => {},
    };
    const counters = createPostgresCounters(broken, { now, log: recordingLog() });
    await assert.rejects(counters.hit('unreachable', WINDOW_MS, 10));
  });
});
