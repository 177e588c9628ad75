// Failures of the database driver that are not SQL errors (src/db/sqlstate.ts): a process out of
// file descriptors, a pool already ended, an unreachable server. Each is ours and passes: 503.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { databaseFailure } from '../../src/db/sqlstate.ts';

/** An error as Node's net module raises it when pg cannot open a connection. */
function systemError(code: string, syscall: string, message: string): Error {
  return Object.assign(new Error(message), { code, errno: -24, syscall });
}

describe('databaseFailure: what the driver throws besides SQL errors', () => {
  test('out of file descriptors (EMFILE, ENFILE) → SERVICE_UNAVAILABLE "overloaded", never an internal error', () => {
    for (const code of ['EMFILE', 'ENFILE']) {
      const failure = databaseFailure(systemError(code, 'connect', `connect ${code} 127.0.0.1:5432 - Local (undefined:undefined)`));
      assert.equal(failure?.code, 'SERVICE_UNAVAILABLE', code);
      assert.equal(failure?.detail, 'The server is overloaded; retry shortly.');
    }
  });

  test('a pool already ended (the process shutting down) → SERVICE_UNAVAILABLE', () => {
    const failure = databaseFailure(new Error('Cannot use a pool after calling end on the pool'));
    assert.equal(failure?.code, 'SERVICE_UNAVAILABLE');
    assert.equal(failure?.detail, 'The database is unreachable; retry shortly.');
  });

  test('a refused connection → SERVICE_UNAVAILABLE; an error of ours is none of these', () => {
    assert.equal(
      databaseFailure(systemError('ECONNREFUSED', 'connect', 'connect ECONNREFUSED 127.0.0.1:5432'))?.code,
      'SERVICE_UNAVAILABLE',
    );
    assert.equal(databaseFailure(new TypeError('x is not a function')), undefined);
    assert.equal(databaseFailure(systemError('ENOENT', 'open', 'no such file')), undefined);
  });
});
