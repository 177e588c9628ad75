// Paging cursors, pure (src/core/cursor.ts): what is signed verifies for its scope only, and
// nothing altered, cut, or of an unexpected shape gets through, even under a valid MAC.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { createCursorCodec, fitsSortType, hmacSha256 } from '../../src/core/cursor.ts';

const KEY = Buffer.alloc(32, 1);
const codec = createCursorCodec(KEY);
const SCOPE = '["orders",[["status","paid"]],["-createdAt","-id"]]';
const POSITION = { values: ['2026-11-22T13:25:04.120Z', 41], n: 40 };

/** A token as the codec writes one, around any payload text: what a holder of the key could sign. */
function signedByKey(payloadText: string, scope = SCOPE): string {
  const payload = Buffer.from(payloadText).toString('base64url');
  const mac = createHmac('sha256', KEY).update(`${payload}.${scope}`).digest().subarray(0, 16);
  return `${payload}.${mac.toString('base64url')}`;
}

/** The token with one bit of character i's byte flipped, kept base64url. */
function flipCharacter(token: string, i: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const replacement = alphabet[(alphabet.indexOf(token[i]!) + 1) % 64]!;
  return token.slice(0, i) + replacement + token.slice(i + 1);
}

describe('paging cursors (HMAC-SHA256, 128-bit tag)', () => {
  test('a cursor verifies for the scope it was signed for, giving back its position', () => {
    const token = codec.sign(SCOPE, POSITION);
    assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    assert.deepEqual(codec.verify(SCOPE, token), POSITION);
    assert.equal(token, signedByKey(JSON.stringify({ v: POSITION.values, n: 40 })));
  });

  test('another scope (collection, filters or sort) or another key does not verify it', () => {
    const token = codec.sign(SCOPE, POSITION);
    assert.equal(codec.verify('["orders",[["status","shipped"]],["-createdAt","-id"]]', token), undefined);
    assert.equal(codec.verify('["orders",[["status","paid"]],["createdAt","id"]]', token), undefined);
    assert.equal(codec.verify('["payments",[["status","paid"]],["-createdAt","-id"]]', token), undefined);
    assert.equal(createCursorCodec(Buffer.alloc(32, 2)).verify(SCOPE, token), undefined);
  });

  test('every character of the token altered, the token cut anywhere, or grown: refused', () => {
    const token = codec.sign(SCOPE, POSITION);
    for (let i = 0; i < token.length; i++) {
      if (token[i] === '.') continue;
      assert.equal(codec.verify(SCOPE, flipCharacter(token, i)), undefined, `character ${i} altered`);
    }
    for (let length = 0; length < token.length; length++) {
      assert.equal(codec.verify(SCOPE, token.slice(0, length)), undefined, `cut to ${length}`);
    }
    for (const grown of [`${token}A`, `${token}=`, `${token}.`, `${token}.x`, `A${token}`, `${token} `]) {
      assert.equal(codec.verify(SCOPE, grown), undefined, grown);
    }
  });

  test('garbage is refused without throwing', () => {
    for (const garbage of ['', '.', '..', 'abc', 'a.b', '%%%.%%%', 'eyJ2IjpbXX0', '!!!.!!!', 'a'.repeat(2048)]) {
      assert.equal(codec.verify(SCOPE, garbage), undefined, garbage);
    }
  });

  test('under a valid MAC, a payload that is not a position is refused', () => {
    const shapes = [
      'not json',
      'null',
      '[]',
      '{}',
      '{"v":[],"n":0}',
      '{"v":"2026","n":0}',
      '{"v":[1],"n":-1}',
      '{"v":[1],"n":1.5}',
      '{"v":[1],"n":"1"}',
      '{"v":[1]}',
      '{"v":[null],"n":0}',
      '{"v":[true],"n":0}',
      '{"v":[{"a":1}],"n":0}',
      '{"v":[[1]],"n":0}',
      '{"v":[1.5],"n":0}',
      '{"v":[1e300],"n":0}',
      `{"v":["${'x'.repeat(513)}"],"n":0}`,
      `{"v":[${Array.from({ length: 17 }, () => 1).join(',')}],"n":0}`,
      '{"v":[1],"n":9007199254740993}',
    ];
    for (const shape of shapes) assert.equal(codec.verify(SCOPE, signedByKey(shape)), undefined, shape);
    // The same shapes' good neighbour, signed the same way, passes: the refusals above are the shapes'.
    assert.deepEqual(codec.verify(SCOPE, signedByKey('{"v":[1,"paid"],"n":0}')), { values: [1, 'paid'], n: 0 });
  });

  test('fitsSortType: the value of each column type, and nothing else', () => {
    assert.ok(fitsSortType('integer', 41));
    assert.ok(!fitsSortType('integer', '41'));
    assert.ok(fitsSortType('text', 'paid'));
    assert.ok(!fitsSortType('text', 41));
    assert.ok(fitsSortType('timestamp', '2026-11-22T13:25:04.120Z'));
    for (const bad of ['2026-11-22', '2026-13-40T99:99:99.000Z', '2026-11-22T13:25:04Z', '2026-11-22 13:25:04.120+00', 'infinity', 1]) {
      assert.ok(!fitsSortType('timestamp', bad), String(bad));
    }
  });
});

test('hmacSha256 is HMAC-SHA256 (RFC 2104), for keys shorter than, as long as and longer than a block', () => {
  for (const length of [1, 32, 64, 65, 200]) {
    const key = randomBytes(length);
    const sign = hmacSha256(key);
    for (const message of ['', 'eyJ2IjpbMV0sIm4iOjB9.["orders",[],["-createdAt"]]', 'é€😀'.repeat(40)]) {
      assert.deepEqual(sign(message), createHmac('sha256', key).update(message).digest(), `key of ${length} bytes`);
    }
  }
  // RFC 4231 test case 2.
  assert.equal(
    hmacSha256(Buffer.from('Jefe'))('what do ya want for nothing?').toString('hex'),
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  );
});
