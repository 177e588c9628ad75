// Signing in over the real database (PGlite by default, PostgreSQL with TEST_DATABASE_URL): the
// per-account limit and the account lookup use one key (src/core/email.ts), so no spelling of an
// address reaches the account outside its limit. PostgreSQL's lower() folds "İ" (U+0130) to "i"
// under most locales while JavaScript's toLowerCase() makes it "i̇": each "i" in an address used
// to double the guesses an attacker had.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashPassword } from '../../src/auth/passwords.ts';
import { signIn } from '../../src/auth/sign-in.service.ts';
import { emailKey } from '../../src/core/email.ts';
import type { Db } from '../../src/db/db.ts';
import { findUserByEmail, insertUser } from '../../src/users/users.store.ts';
import { createTestDatabase, serverUrl, type TestDatabase } from '../helpers/db.ts';

const PASSWORD = 'correct horse battery';

describe(`sign-in limits and lookup share one key (${serverUrl ? 'PostgreSQL' : 'PGlite'})`, () => {
  let database: TestDatabase;
  let db: Db;
  before(async () => {
    database = await createTestDatabase();
    db = database.db;
    await insertUser(db, { email: 'Alice@Example.com', name: 'Alice', role: 'customer', passwordHash: await hashPassword(PASSWORD) });
  });
  after(() => database.drop());

  const attempt = (email: string, password: string, ip: string) => signIn(db, { email, password, ip, now: new Date() });

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

  test('once the account is locked, no spelling of its address signs in', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await attempt('alice@example.com', 'wrong password', `10.0.1.${i}`)).kind, 'refused');
    for (const spelling of ['alice@example.com', 'ALICE@example.com', 'alİce@example.com', 'alİce@EXAMPLE.COM']) {
      const result = await attempt(spelling, PASSWORD, '10.0.2.1');
      assert.notEqual(result.kind, 'signed-in', spelling);
    }
    assert.equal((await attempt('Alice@Example.com', PASSWORD, '10.0.2.2')).kind, 'blocked');
  });
});
