// The idempotency rules, pure: reading the Idempotency-Key header (bare or an RFC 8941 sf-string),
// the canonical JSON and fingerprint a key is bound to, and what a request finds on a taken key.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DomainError } from '../../src/core/errors.ts';
import { problemHeaders } from '../../src/http/problem.ts';
import {
  canonicalJson,
  decideOnTakenKey,
  fingerprintRequest,
  IDEMPOTENCY_KEY_PATTERN,
  MAX_KEY_LENGTH,
  parseIdempotencyKey,
  type KeyRecord,
  type RequestBinding,
} from '../../src/idempotency/idempotency.rules.ts';

/** Asserts the whole 400 IDEMPOTENCY_KEY_INVALID problem the header parser throws. */
function assertInvalidKey(header: string, reason: string): void {
  assert.throws(
    () => parseIdempotencyKey(header),
    (error: unknown) => {
      assert.ok(error instanceof DomainError);
      assert.equal(error.code, 'IDEMPOTENCY_KEY_INVALID');
      assert.equal(error.status, 400);
      assert.equal(error.detail, `Idempotency-Key ${reason}.`);
      assert.deepEqual(error.options, { errors: [{ parameter: 'idempotency-key', detail: `Idempotency-Key ${reason}` }] });
      return true;
    },
    JSON.stringify(header),
  );
}

const TOO_LONG = `is longer than ${MAX_KEY_LENGTH} characters`;
const NOT_VISIBLE = 'must be visible ASCII characters (or a quoted string)';

describe('parseIdempotencyKey: bare keys are 1–255 visible ASCII characters', () => {
  test('the limit is 255', () => assert.equal(MAX_KEY_LENGTH, 255));

  for (const key of ['a', '5f0c7a8e-3b7e-4f57-9a61-1d2f0c6e8b11', '!~', 'x'.repeat(255), '"abc', 'abc"', '"a"b"', String.raw`"a\nb"`]) {
    test(`${JSON.stringify(key.length > 40 ? `${key.slice(0, 10)}…(${key.length})` : key)} is its own key`, () => {
      assert.equal(parseIdempotencyKey(key), key);
    });
  }

  test('256 characters → too long', () => assertInvalidKey('x'.repeat(256), TOO_LONG));
  test('empty → is empty', () => assertInvalidKey('', 'is empty'));

  const invisible: [string, string][] = [
    ['a space inside', 'a b'],
    ['a leading space', ' a'],
    ['a tab', 'a\tb'],
    ['NUL', 'a\0'],
    ['U+0001', '\x01'],
    ['DEL', 'a\x7f'],
    ['é (non-ASCII)', 'café'],
    ['an emoji', 'key-😀'],
    ['U+00A0 (no-break space)', 'a\u00a0b'],
    ['a newline', 'a\nb'],
  ];
  for (const [name, header] of invisible) test(`${name} → must be visible ASCII`, () => assertInvalidKey(header, NOT_VISIBLE));
});

describe('parseIdempotencyKey: an RFC 8941 sf-string names the key it quotes', () => {
  const quoted: [string, string][] = [
    ['"abc"', 'abc'],
    ['"a b"', 'a b'], // a space is allowed inside an sf-string (§3.3.3)
    ['" "', ' '],
    [String.raw`"a\"b"`, 'a"b'],
    [String.raw`"a\\b"`, String.raw`a\b`],
    [String.raw`"\\\""`, String.raw`\"`],
    [`"${'y'.repeat(255)}"`, 'y'.repeat(255)],
    // 255 escaped quotes unescape to 255 characters: the limit applies to the key, not the header.
    [`"${String.raw`\"`.repeat(255)}"`, '"'.repeat(255)],
  ];
  for (const [header, key] of quoted) {
    test(`${header.length > 40 ? `${header.slice(0, 12)}…(${header.length})` : header} → ${JSON.stringify(key.length > 20 ? `${key.slice(0, 5)}…(${key.length})` : key)}`, () => {
      assert.equal(parseIdempotencyKey(header), key);
    });
  }

  test('"abc" and abc are the same key', () => assert.equal(parseIdempotencyKey('"abc"'), parseIdempotencyKey('abc')));
  test('"" → is empty', () => assertInvalidKey('""', 'is empty'));
  test('256 quoted characters → too long', () => assertInvalidKey(`"${'y'.repeat(256)}"`, TOO_LONG));
  test('256 escaped quotes → too long (counted after unescaping)', () => assertInvalidKey(`"${String.raw`\"`.repeat(256)}"`, TOO_LONG));
  test('a quoted string over 255 is too long, not "not visible"', () => assertInvalidKey(`"${'a b'.repeat(100)}"`, TOO_LONG));

  // Not an sf-string (a control or non-ASCII character inside the quotes): read as a bare key,
  // which then fails for the character, not for the quotes.
  for (const [name, header] of [
    ['a tab', '"a\tb"'],
    ['é', '"café"'],
    ['DEL', '"a\x7f"'],
  ] as const) {
    test(`quotes around ${name} → must be visible ASCII`, () => assertInvalidKey(header, NOT_VISIBLE));
  }
  test('quotes around a space-bearing key with an invalid escape are a bare key, which a space makes invalid', () => {
    assertInvalidKey(String.raw`"a b\n"`, NOT_VISIBLE);
  });
});

describe('canonicalJson: object keys sorted at every depth (RFC 8785 order), arrays in order', () => {
  test('nested objects are sorted at every level, inside arrays too', () => {
    const value = { b: 1, a: { d: [{ z: 1, y: { q: true, p: null } }, 3], c: null } };
    assert.equal(canonicalJson(value), '{"a":{"c":null,"d":[{"y":{"p":null,"q":true},"z":1},3]},"b":1}');
  });

  test('arrays keep their order', () => {
    assert.equal(canonicalJson([3, 1, 2]), '[3,1,2]');
    assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
  });

  test('reordered keys give the same text; no whitespace', () => {
    assert.equal(canonicalJson({ amount: 100, currency: 'EUR', orderId: 7 }), canonicalJson({ orderId: 7, currency: 'EUR', amount: 100 }));
    assert.equal(canonicalJson({ orderId: 7, currency: 'EUR', amount: 100 }), '{"amount":100,"currency":"EUR","orderId":7}');
  });

  test('unicode keys sort by UTF-16 code units (uppercase, lowercase, Latin-1, astral, BMP-high)', () => {
    const value = { '\uffff': 6, '😀': 5, é: 4, z: 3, a: 2, Z: 1 };
    assert.equal(canonicalJson(value), '{"Z":1,"a":2,"z":3,"é":4,"😀":5,"\uffff":6}');
  });

  test('strings are JSON-escaped, keys included', () => {
    assert.equal(canonicalJson({ 'k"\\': 'line\nbreak', t: '\u0001' }), '{"k\\"\\\\":"line\\nbreak","t":"\\u0001"}');
  });

  test('scalars and empty containers', () => {
    assert.deepEqual([null, true, false, 0, -1.5, 'x', {}, []].map(canonicalJson), [
      'null',
      'true',
      'false',
      '0',
      '-1.5',
      '"x"',
      '{}',
      '[]',
    ]);
    assert.equal(canonicalJson(undefined), 'null');
  });

  test('the same value parsed from differently ordered JSON texts is the same text', () => {
    const a = JSON.parse('{"x":{"b":[1,{"d":2,"c":3}],"a":"A"},"y":[]}');
    const b = JSON.parse('{"y":[],"x":{"a":"A","b":[1,{"c":3,"d":2}]}}');
    assert.equal(canonicalJson(a), canonicalJson(b));
  });
});

describe('fingerprintRequest: SHA-256 of the API version and the canonical body', () => {
  const body = { amount: 1250, currency: 'EUR', orderId: 42 };

  test('is base64url SHA-256 over "v<version>\\n<canonical JSON>"', () => {
    const expected = createHash('sha256').update('v1\n{"amount":1250,"currency":"EUR","orderId":42}').digest('base64url');
    assert.equal(fingerprintRequest(1, body), expected);
    assert.match(fingerprintRequest(1, body), /^[A-Za-z0-9_-]{43}$/);
  });

  test('reordered keys (at any depth) → the same fingerprint', () => {
    assert.equal(fingerprintRequest(1, { orderId: 42, currency: 'EUR', amount: 1250 }), fingerprintRequest(1, body));
    assert.equal(fingerprintRequest(1, { a: { y: 1, x: 2 } }), fingerprintRequest(1, { a: { x: 2, y: 1 } }));
  });

  test('another API version → another fingerprint', () => {
    assert.notEqual(fingerprintRequest(2, body), fingerprintRequest(1, body));
  });

  test('another value, type, field or element order → another fingerprint', () => {
    const others = [
      { ...body, amount: 1251 },
      { ...body, currency: 'USD' },
      { amount: 1250, currency: 'EUR' },
      { ...body, orderId: '42' },
      { ...body, extra: null },
      [body],
      { a: [1, 2] },
      { a: [2, 1] },
    ];
    const prints = [body, ...others].map((b) => fingerprintRequest(1, b));
    assert.equal(new Set(prints).size, prints.length);
  });

  test('no body and a null body are the same request; an empty object is not', () => {
    assert.equal(fingerprintRequest(1, undefined), fingerprintRequest(1, null));
    assert.notEqual(fingerprintRequest(1, {}), fingerprintRequest(1, null));
  });
});

describe('decideOnTakenKey: what a request finds on a key already in the table', () => {
  const binding: RequestBinding = { method: 'POST', path: '/payments', fingerprint: fingerprintRequest(1, { amount: 1, currency: 'EUR' }) };
  const response = { status: 201, headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"id":1}' };
  const record = (fields: Partial<KeyRecord> = {}): KeyRecord => ({
    id: 7,
    ...binding,
    state: 'completed',
    expired: false,
    lockExpired: false,
    response,
    ...fields,
  });

  function assertRefused(
    decision: ReturnType<typeof decideOnTakenKey>,
    code: string,
    detail: string,
    headers?: Record<string, string>,
  ): void {
    assert.equal(decision.kind, 'refuse');
    if (decision.kind !== 'refuse') return;
    assert.equal(decision.problem.code, code);
    assert.equal(decision.problem.detail, detail);
    assert.deepEqual(decision.problem.options, {});
    // Retry-After comes from the catalogue entry of the code, as the problem is rendered.
    assert.deepEqual(problemHeaders(decision.problem), headers ?? {});
  }

  const reusedFor = (operation: string) =>
    `This Idempotency-Key was used for ${operation}; a key belongs to one operation. Use a new key for this request.`;
  const REUSED_BODY =
    'This Idempotency-Key was used with a different request body; a retry must repeat the original request exactly. Use a new key for a new request.';
  const IN_USE = 'A request with this Idempotency-Key is still being processed; retry after the Retry-After delay to receive its result.';

  test('completed, same method, path and body → replay the stored response', () => {
    assert.deepEqual(decideOnTakenKey(record(), binding), { kind: 'replay', response });
  });

  test('another path → 422 IDEMPOTENCY_KEY_REUSED naming the original operation (even when completed)', () => {
    const decision = decideOnTakenKey(record(), { ...binding, path: '/v1/payments' });
    assertRefused(decision, 'IDEMPOTENCY_KEY_REUSED', reusedFor('POST /payments'));
    assert.equal(decision.kind === 'refuse' && decision.problem.status, 422);
  });

  test('another method → IDEMPOTENCY_KEY_REUSED naming the original operation', () => {
    assertRefused(decideOnTakenKey(record({ method: 'PUT' }), binding), 'IDEMPOTENCY_KEY_REUSED', reusedFor('PUT /payments'));
  });

  test('another body → IDEMPOTENCY_KEY_REUSED about the body', () => {
    assertRefused(decideOnTakenKey(record(), { ...binding, fingerprint: 'other' }), 'IDEMPOTENCY_KEY_REUSED', REUSED_BODY);
  });

  test('another path and another body → the operation is named first', () => {
    assertRefused(
      decideOnTakenKey(record(), { ...binding, path: '/orders', fingerprint: 'other' }),
      'IDEMPOTENCY_KEY_REUSED',
      reusedFor('POST /payments'),
    );
  });

  test('in flight with another body → REUSED, not IN_USE: the retry is wrong whatever becomes of the first', () => {
    const inFlight = record({ state: 'in_flight', response: undefined });
    assertRefused(decideOnTakenKey(inFlight, { ...binding, fingerprint: 'other' }), 'IDEMPOTENCY_KEY_REUSED', REUSED_BODY);
    assertRefused(
      decideOnTakenKey({ ...inFlight, lockExpired: true }, { ...binding, fingerprint: 'other' }),
      'IDEMPOTENCY_KEY_REUSED',
      REUSED_BODY,
    );
  });

  test('in flight, lock held → 409 IDEMPOTENCY_KEY_IN_USE with Retry-After: 1', () => {
    const decision = decideOnTakenKey(record({ state: 'in_flight', response: undefined }), binding);
    assertRefused(decision, 'IDEMPOTENCY_KEY_IN_USE', IN_USE, { 'retry-after': '1' });
    assert.equal(decision.kind === 'refuse' && decision.problem.status, 409);
  });

  test('in flight, lock lapsed → take over', () => {
    assert.deepEqual(decideOnTakenKey(record({ state: 'in_flight', response: undefined, lockExpired: true }), binding), {
      kind: 'take-over',
    });
  });

  test('completed: a lapsed lock does not matter, the response is replayed', () => {
    assert.deepEqual(decideOnTakenKey(record({ lockExpired: true }), binding), { kind: 'replay', response });
  });
});

describe('IDEMPOTENCY_KEY_PATTERN (what the OpenAPI documents say of the header)', () => {
  const pattern = new RegExp(IDEMPOTENCY_KEY_PATTERN, 'u');
  const accepts = (header: string) => {
    try {
      parseIdempotencyKey(header);
      return true;
    } catch {
      return false;
    }
  };

  test('accepts exactly what parseIdempotencyKey accepts: edge cases', () => {
    const bare = 'k'.repeat(MAX_KEY_LENGTH);
    const cases = [
      '',
      'a',
      bare,
      `${bare}k`,
      '""',
      '"a"',
      '" "',
      '"a b"',
      'a b',
      '"\\"x"',
      '"a\\b"',
      '"a\\"',
      '"a"b"',
      '"',
      `"${bare}"`,
      `"${bare}k"`,
      `"${'\\"'.repeat(MAX_KEY_LENGTH)}"`,
      'é',
      '"é"',
      '\t',
      '"\t"',
    ];
    for (const header of cases) assert.equal(pattern.test(header), accepts(header), JSON.stringify(header));
  });

  test('accepts exactly what parseIdempotencyKey accepts: 20,000 random headers', () => {
    // A fixed linear congruential sequence: the same headers on every run, so a disagreement is reproducible.
    let state = 42;
    const next = () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return state;
    };
    const alphabet = ['"', '\\', ' ', 'a', 'Z', '~', '\t', 'é', ',', '\x7f'];
    for (let i = 0; i < 20_000; i++) {
      const length = next() % 12;
      let header = '';
      for (let j = 0; j < length; j++) header += alphabet[next() % alphabet.length];
      if (next() % 4 === 0) header = `"${header}"`;
      assert.equal(pattern.test(header), accepts(header), JSON.stringify(header));
    }
  });
});
