// Userinfo rules, pure: which claims a token's scopes release (OpenID Connect Core §5.4), and that
// only a user's token granted openid is for the endpoint (§5.3, RFC 6750 §3.1 insufficient_scope).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Principal } from '../../src/core/principal.ts';
import { releaseClaims, requireOpenidUser, UserinfoRefusal } from '../../src/auth/userinfo.rules.ts';

const CLAIMS = { sub: '7', email: 'ada@example.test', email_verified: false, name: 'Ada' };

const scopes = (scope: string): ReadonlySet<string> => new Set(scope.split(' ').filter(Boolean));

describe('releaseClaims (OpenID Connect Core §5.4)', () => {
  test('each scope releases its claims and nothing else; sub always', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['openid', { sub: '7' }],
      ['', { sub: '7' }],
      ['openid profile', { sub: '7', name: 'Ada' }],
      ['openid email', { sub: '7', email: 'ada@example.test', email_verified: false }],
      ['openid profile email offline_access orders:read', CLAIMS],
    ];
    for (const [scope, expected] of cases) assert.deepEqual(releaseClaims(CLAIMS, scopes(scope)), expected, scope);
  });

  test('a scope named like an Object property releases nothing', () => {
    assert.deepEqual(releaseClaims(CLAIMS, scopes('openid constructor toString __proto__ hasOwnProperty')), { sub: '7' });
  });

  test('a claim the account does not have is left out, not sent as null', () => {
    assert.deepEqual(releaseClaims({ sub: '8', email: 'x@example.test' }, scopes('openid profile email')), {
      sub: '8',
      email: 'x@example.test',
    });
  });
});

describe('requireOpenidUser (§5.3: a token granted openid)', () => {
  const caller = { clientId: 'app', subject: '7', apiVersion: 3 };
  const user = (scope: string): Principal => ({ ...caller, kind: 'user', userId: 7, role: 'customer', scopes: scopes(scope) });

  test("a user's token with openid: the user's id", () => {
    assert.equal(requireOpenidUser(user('openid orders:read')), 7);
  });

  test('without openid, or a service’s token: 403 insufficient_scope naming openid', () => {
    const service: Principal = { ...caller, kind: 'service', scopes: scopes('openid orders:read') };
    for (const principal of [user('orders:read profile email'), user(''), service]) {
      assert.throws(
        () => requireOpenidUser(principal),
        (error: unknown) =>
          error instanceof UserinfoRefusal && error.status === 403 && error.error === 'insufficient_scope' && error.scope === 'openid',
      );
    }
  });
});
