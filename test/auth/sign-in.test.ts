// Signing in over the real database (PGlite by default, PostgreSQL with TEST_DATABASE_URL), its
// limits counted in the database and in Redis alike: the per-account limit and the account lookup
// use one key (src/core/email.ts), so no spelling of an address reaches the account outside its
// limit. PostgreSQL's lower() folds "İ" (U+0130) to "i" under most locales while JavaScript's
// toLowerCase() makes it "i̇": each "i" in an address used to double the guesses an attacker had.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashPassword } from '../../src/auth/passwords.ts';
import { LOGIN_FAILURES_PER_ACCOUNT } from '../../src/auth/rate-limits.ts';
import { signIn } from '../../src/auth/sign-in.service.ts';
import { systemClock } from '../../src/core/clock.ts';
import { emailKey } from '../../src/core/email.ts';
import type { Db } from '../../src/db/db.ts';
import type { Counters } from '../../src/http/rate-limit/counters.ts';
import { createPostgresCounters } from '../../src/http/rate-limit/postgres-counters.ts';
import { createRedisCounters } from '../../src/http/rate-limit/redis-counters.ts';
import { findUserByEmail, insertUser, setUserDisabled } from '../../src/users/users.store.ts';
import { createTestDatabase, serverUrl, type TestDatabase } from '../helpers/db.ts';
import { dropRedisKeys, recordingLog, TEST_REDIS_URL, UNREACHABLE_REDIS_URL, uniqueRedisPrefix } from '../helpers/redis.ts';

const PASSWORD = 'correct horse battery';
const DATABASE = serverUrl ? 'PostgreSQL' : 'PGlite';

const STORES: { name: string; open(db: Db, prefix: string): Promise<Counters> }[] = [
  { name: `counted in ${DATABASE}`, open: async (db) => createPostgresCounters(db, { now: systemClock, log: recordingLog() }) },
  { name: 'counted in Redis', open: (_db, prefix) => createRedisCounters(TEST_REDIS_URL, prefix, recordingLog()) },
];

for (const store of STORES) {
  describe(`sign-in limits and lookup share one key (${DATABASE}, ${store.name})`, () => {
    let database: TestDatabase;
    let db: Db;
    let counters: Counters;
    const prefix = uniqueRedisPrefix();
    before(async () => {
      database = await createTestDatabase();
      db = database.db;
      counters = await store.open(db, prefix);
      await insertUser(db, { email: 'Alice@Example.com', name: 'Alice', role: 'customer', passwordHash: await hashPassword(PASSWORD) });
      await insertUser(db, { email: 'bob@example.com', name: 'Bob', role: 'customer', passwordHash: await hashPassword(PASSWORD) });
    });
    after(async () => {
      await counters.close();
      await dropRedisKeys(prefix);
      await database.drop();
    });

    const attempt = (email: string, password: string, ip: string) => signIn(db, counters, { email, password, ip });

    test('case and surrounding spaces do not matter: the right password signs in', async () => {
      assert.equal((await attempt('  alice@EXAMPLE.com ', PASSWORD, '10.0.0.1')).kind, 'signed-in');
    });

    test('a non-ASCII spelling of the address finds no account, with the right password too', async () => {
      for (const spelling of ['alİce@example.com', 'alıce@example.com', 'ａlice@example.com', 'alice@examplé.com']) {
        assert.equal(emailKey(spelling), undefined, spelling);
        assert.equal(await findUserByEmail(db, spelling), undefined, spelling);
        assert.equal((await attempt(spelling, PASSWORD, '10.0.0.2')).kind, 'refused', spelling);
      }
    });

    test('an address with characters no store keeps (NUL, controls) is refused, and its attempts are counted like any other', async () => {
      const limit = LOGIN_FAILURES_PER_ACCOUNT.limit;
      for (const typed of ['eve\u0000@example.com', 'eve\u0001\u007f@example.com']) {
        for (let i = 0; i < limit; i++)
          assert.equal((await attempt(typed, PASSWORD, `10.0.5.${i}`)).kind, 'refused', JSON.stringify(typed));
        assert.equal((await attempt(typed, PASSWORD, '10.0.5.200')).kind, 'blocked', JSON.stringify(typed));
      }
    });

    test('a successful sign-in gives its attempt back: only failures use up the budget', async () => {
      const limit = LOGIN_FAILURES_PER_ACCOUNT.limit;
      for (let i = 0; i < limit - 1; i++) assert.equal((await attempt('bob@example.com', 'wrong', `10.0.3.${i}`)).kind, 'refused');
      assert.equal((await attempt('bob@example.com', PASSWORD, '10.0.3.100')).kind, 'signed-in');
      // Without the give-back the success would have been the last attempt of the budget.
      assert.equal((await attempt('bob@example.com', 'wrong', '10.0.3.101')).kind, 'refused');
      const blocked = await attempt('bob@example.com', PASSWORD, '10.0.3.102');
      assert.equal(blocked.kind, 'blocked');
      assert.ok(blocked.kind === 'blocked' && blocked.retryAfterSeconds > 0 && blocked.retryAfterSeconds <= 15 * 60);
    });

    test('once the account is locked, no spelling of its address signs in', async () => {
      for (let i = 0; i < 5; i++) assert.equal((await attempt('alice@example.com', 'wrong password', `10.0.1.${i}`)).kind, 'refused');
      for (const spelling of ['alice@example.com', 'ALICE@example.com', 'alİce@example.com', 'alİce@EXAMPLE.COM']) {
        const result = await attempt(spelling, PASSWORD, '10.0.2.1');
        assert.notEqual(result.kind, 'signed-in', spelling);
      }
      assert.equal((await attempt('Alice@Example.com', PASSWORD, '10.0.2.2')).kind, 'blocked');
    });
  });
}

describe(`a disabled account (${DATABASE})`, () => {
  test('is refused with the right password exactly as with a wrong one, and the attempt counts as failed', async () => {
    const database = await createTestDatabase();
    const counters = await createPostgresCounters(database.db, { now: systemClock, log: recordingLog() });
    try {
      const dana = await insertUser(database.db, {
        email: 'dana@example.com',
        name: 'Dana',
        role: 'customer',
        passwordHash: await hashPassword(PASSWORD),
      });
      const attempt = (password: string, ip: string) => signIn(database.db, counters, { email: 'dana@example.com', password, ip });
      assert.equal((await attempt(PASSWORD, '10.0.6.1')).kind, 'signed-in');
      await setUserDisabled(database.db, dana.id, true);
      assert.deepEqual(await attempt(PASSWORD, '10.0.6.2'), { kind: 'refused' });
      assert.deepEqual(await attempt('wrong password', '10.0.6.3'), { kind: 'refused' });
      // Not given back: the refusal costs the budget a wrong password would, so nothing tells them apart.
      for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT.limit - 2; i++)
        assert.equal((await attempt(PASSWORD, `10.0.6.${10 + i}`)).kind, 'refused');
      assert.equal((await attempt(PASSWORD, '10.0.6.100')).kind, 'blocked');
      await setUserDisabled(database.db, dana.id, false);
      assert.equal((await attempt(PASSWORD, '10.0.6.101')).kind, 'blocked', 'enabled again, the limit still holds');
    } finally {
      await counters.close();
      await database.drop();
    }
  });
});

describe(`sign-in while its limits cannot be counted (${DATABASE}, Redis unreachable)`, () => {
  test('the attempt is refused as unavailable (Retry-After 1 s), whatever the password', async () => {
    const database = await createTestDatabase();
    const log = recordingLog();
    const counters = await createRedisCounters(UNREACHABLE_REDIS_URL, uniqueRedisPrefix(), log);
    try {
      await insertUser(database.db, {
        email: 'carol@example.com',
        name: 'Carol',
        role: 'customer',
        passwordHash: await hashPassword(PASSWORD),
      });
      const result = await signIn(database.db, counters, { email: 'carol@example.com', password: PASSWORD, ip: '10.0.4.1' });
      assert.equal(result.kind, 'unavailable');
      assert.ok(result.kind === 'unavailable' && result.retryAfterSeconds === 1 && result.cause instanceof Error, 'the cause, for the log');
      assert.ok(log.warnings.length >= 1, 'the unreachable Redis is logged');
    } finally {
      await counters.close();
      await database.drop();
    }
  });
});
