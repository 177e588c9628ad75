// Password and client-secret hashing: scrypt with the parameters in the string, a random salt,
// NFC normalisation, and a false (never a throw or a stall) for anything malformed.
import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  checkPasswordPolicy,
  DUMMY_PASSWORD_HASH,
  hashClientSecret,
  hashPassword,
  SCRYPT_PARAMS,
  verifyClientSecret,
  verifyPassword,
} from '../../src/auth/passwords.ts';

const FORMAT = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([\w-]+)\$([\w-]+)$/;

describe('hashPassword', () => {
  test('encodes scrypt, N, r, p, a 16-byte salt and a 32-byte key, all base64url', async () => {
    const hash = await hashPassword('correct horse battery staple');
    const [, n, r, p, salt, key] = FORMAT.exec(hash) ?? assert.fail(`unexpected format: ${hash}`);
    assert.deepEqual({ N: Number(n), r: Number(r), p: Number(p) }, { N: 2 ** 15, r: 8, p: 1 });
    assert.equal(Buffer.from(salt!, 'base64url').length, 16);
    assert.equal(Buffer.from(key!, 'base64url').length, 32);
    assert.ok(!hash.includes('correct horse'));
  });

  test('is plain scrypt: an independent computation gives the same key', async () => {
    const hash = await hashPassword('s3cret-passphrase');
    const [, , , , salt, key] = FORMAT.exec(hash)!;
    const expected = scryptSync('s3cret-passphrase', Buffer.from(salt!, 'base64url'), 32, {
      N: 2 ** 15,
      r: 8,
      p: 1,
      maxmem: 64 * 1024 * 1024,
    });
    assert.equal(key, expected.toString('base64url'));
  });

  test('salts every hash: the same password hashes differently twice', async () => {
    const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
    assert.notEqual(a, b);
    assert.notEqual(a.split('$')[4], b.split('$')[4]);
  });
});

describe('verifyPassword', () => {
  test('accepts the password and refuses any other', async () => {
    const hash = await hashPassword('hunter2hunter2');
    assert.equal(await verifyPassword(hash, 'hunter2hunter2'), true);
    for (const wrong of ['hunter2hunter3', 'Hunter2hunter2', 'hunter2hunter2 ', '', 'hunter2hunter']) {
      assert.equal(await verifyPassword(hash, wrong), false, JSON.stringify(wrong));
    }
  });

  test('compares Unicode passwords after NFC normalisation', async () => {
    const composed = 'caf\u00e9-p\u00e4ssword';
    const decomposed = composed.normalize('NFD');
    assert.notEqual(composed, decomposed);
    assert.equal(await verifyPassword(await hashPassword(composed), decomposed), true);
    assert.equal(await verifyPassword(await hashPassword(decomposed), composed), true);
  });

  test('verifies hashes made with other parameters, read from the string', async () => {
    const salt = Buffer.from('0123456789abcdef');
    const key = scryptSync('older password', salt, 32, { N: 2 ** 14, r: 8, p: 1 });
    const older = `scrypt$16384$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
    assert.equal(await verifyPassword(older, 'older password'), true);
    assert.equal(await verifyPassword(older, 'other password'), false);
  });

  test('a malformed or unsupported hash is false, not an exception', async () => {
    const good = await hashPassword('a good password');
    const [, n, r, p, salt, key = ''] = FORMAT.exec(good)!;
    const malformed = [
      '',
      'not a hash',
      good.slice(0, -1) + '$',
      `bcrypt$${n}$${r}$${p}$${salt}$${key}`,
      `scrypt$${n}$${r}$${p}$${salt}`,
      `scrypt$${n}$${r}$${p}$${salt}$${key}$extra`,
      `scrypt$30000$${r}$${p}$${salt}$${key}`, // N not a power of two
      `scrypt$0$${r}$${p}$${salt}$${key}`,
      `scrypt$-32768$${r}$${p}$${salt}$${key}`,
      `scrypt$${n}$0$${p}$${salt}$${key}`,
      `scrypt$${n}$${r}$1e3$${salt}$${key}`,
      `scrypt$1073741824$${r}$${p}$${salt}$${key}`, // 1 TiB of memory: refused before any work
      `scrypt$${n}$${r}$${p}$${salt}$${key.slice(0, 8)}`, // key too short to mean anything
      `scrypt$${n}$${r}$${p}$$${key}`,
      `scrypt$${n}$${r}$${p}$${salt}$${key.slice(0, -2)}!!`,
      '$2b$12$abcdefghijklmnopqrstuuOR5gOGQ9Sxv2E8KyKQjHVuC1oE.vDO2',
    ];
    for (const hash of malformed) assert.equal(await verifyPassword(hash, 'a good password'), false, hash);
  });
});

describe('DUMMY_PASSWORD_HASH', () => {
  test('is well formed with the current parameters, so verifying against it costs what a real check costs', () => {
    const [, n, r, p, salt, key] = FORMAT.exec(DUMMY_PASSWORD_HASH) ?? assert.fail('malformed dummy hash');
    assert.deepEqual({ N: Number(n), r: Number(r), p: Number(p) }, SCRYPT_PARAMS);
    assert.equal(Buffer.from(salt!, 'base64url').length, 16);
    assert.equal(Buffer.from(key!, 'base64url').length, 32);
  });

  test('matches no password anyone would type', async () => {
    for (const guess of ['', 'password', 'dummy', 'scrypt']) assert.equal(await verifyPassword(DUMMY_PASSWORD_HASH, guess), false);
  });
});

describe('checkPasswordPolicy', () => {
  test('at least 8 and at most 1024 characters, counted as code points', () => {
    assert.equal(checkPasswordPolicy('12345678'), undefined);
    assert.match(checkPasswordPolicy('1234567') ?? '', /at least 8 characters/);
    assert.match(checkPasswordPolicy('') ?? '', /at least 8 characters/);
    assert.equal(checkPasswordPolicy('🔑'.repeat(8)), undefined);
    assert.match(checkPasswordPolicy('🔑'.repeat(7)) ?? '', /at least 8/);
    assert.equal(checkPasswordPolicy('x'.repeat(1024)), undefined);
    assert.match(checkPasswordPolicy('x'.repeat(1025)) ?? '', /at most 1024 characters/);
  });
});

describe('client secrets', () => {
  test('are hashed and verified like passwords', async () => {
    const secret = 'QPVFyeW2c4WI_CJqA57kbGYlGh4fSzLuqysjXeTzo1I';
    const hash = await hashClientSecret(secret);
    assert.match(hash, FORMAT);
    assert.ok(!hash.includes(secret));
    assert.equal(await verifyClientSecret(hash, secret), true);
    assert.equal(await verifyClientSecret(hash, secret.slice(1)), false);
  });
});
