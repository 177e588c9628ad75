// The pure parts of operators' controls: which tokens a revoked user or client still has honoured
// (src/core/subject-revocation.ts), what an erased user's data becomes and which status a user is
// in (src/users/users.rules.ts), and a rotated secret's grace (src/auth/clients.rules.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClientMetadataError, DEFAULT_SECRET_GRACE, parseSecretGrace } from '../../src/auth/clients.rules.ts';
import type { Principal } from '../../src/core/principal.ts';
import { clientSubject, refusesTokenIssuedAt, subjectsOf, userSubject } from '../../src/core/subject-revocation.ts';
import { erasedUserPlaceholders, userStatus } from '../../src/users/users.rules.ts';

describe('refusesTokenIssuedAt', () => {
  const revokedAt = '2026-11-28T10:00:05.500Z';
  const revokedSecond = Date.parse(revokedAt) / 1000 - 0.5;

  test('disabled (or deleted): every token, issued before or after, is refused', () => {
    for (const issuedAt of [revokedSecond - 3600, revokedSecond, revokedSecond + 1, revokedSecond + 3600]) {
      assert.equal(refusesTokenIssuedAt({ revokedAt, restoredAt: null }, issuedAt), true, String(issuedAt));
    }
  });

  test('enabled again: tokens of a second before the one it was disabled in stay refused; later ones count', () => {
    const restored = { revokedAt, restoredAt: '2026-11-28T11:00:00.000Z' };
    assert.equal(refusesTokenIssuedAt(restored, revokedSecond - 600), true);
    assert.equal(refusesTokenIssuedAt(restored, revokedSecond - 1), true);
    // iat counts whole seconds: a token of the very second cannot be told from one just after.
    assert.equal(refusesTokenIssuedAt(restored, revokedSecond), false);
    assert.equal(refusesTokenIssuedAt(restored, revokedSecond + 1), false);
  });
});

describe('subjectsOf', () => {
  const caller = { clientId: 'op_app', scopes: new Set<string>(), apiVersion: 3 };

  test("a user's token speaks for the user and its client; a service's for the client alone", () => {
    const user: Principal = { kind: 'user', userId: 42, role: 'customer', subject: '42', ...caller };
    const service: Principal = { kind: 'service', subject: 'op_app', ...caller };
    assert.deepEqual(subjectsOf(user), ['user:42', 'client:op_app']);
    assert.deepEqual(subjectsOf(service), ['client:op_app']);
    assert.equal(userSubject(42), 'user:42');
    assert.equal(clientSubject('op_app'), 'client:op_app');
  });
});

describe('users.rules', () => {
  test('placeholders name no one: only the id, which orders and payments carry anyway, in a domain no one can own', () => {
    assert.deepEqual(erasedUserPlaceholders(42), { email: 'erased-user-42@erased.invalid', name: 'Erased user' });
    assert.notEqual(erasedUserPlaceholders(42).email, erasedUserPlaceholders(43).email, 'unique, as every email must be');
  });

  test('status: erased over disabled over active', () => {
    const at = '2026-11-28T10:00:00.000Z';
    assert.equal(userStatus({ disabledAt: null, erasedAt: null }), 'active');
    assert.equal(userStatus({ disabledAt: at, erasedAt: null }), 'disabled');
    assert.equal(userStatus({ disabledAt: at, erasedAt: at }), 'erased');
  });
});

describe('parseSecretGrace', () => {
  test('a whole number of seconds, minutes, hours or days; 0 for none', () => {
    assert.equal(parseSecretGrace(DEFAULT_SECRET_GRACE), 24 * 3600);
    assert.equal(parseSecretGrace('90s'), 90);
    assert.equal(parseSecretGrace('15m'), 900);
    assert.equal(parseSecretGrace('7d'), 7 * 24 * 3600);
    assert.equal(parseSecretGrace('30d'), 30 * 24 * 3600);
    assert.equal(parseSecretGrace('0'), 0);
    assert.equal(parseSecretGrace('0s'), 0);
  });

  test('anything else, or more than 30 days, is refused naming what was given', () => {
    for (const text of ['', '24', '1.5h', '-1h', '2w', '24 h', 'h', '1H', '99999999s']) {
      assert.throws(
        () => parseSecretGrace(text),
        (error: unknown) => error instanceof ClientMetadataError && error.message.includes(`"${text}"`),
        text,
      );
    }
    assert.throws(() => parseSecretGrace('31d'), /longer than the 30 days/);
    assert.throws(() => parseSecretGrace('721h'), /longer than the 30 days/);
  });
});
