// ORDERPAY_FAILPOINTS: the test-only fault injection read from the environment of a test process.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FailpointError, failpointFromEnv } from '../../src/core/failpoints.ts';

describe('failpointFromEnv', () => {
  test('unset or blank: no failpoint at all', () => {
    assert.equal(failpointFromEnv(undefined), undefined);
    assert.equal(failpointFromEnv('  '), undefined);
  });

  test('name=action pairs: the named point acts, the others pass', () => {
    const failpoint = failpointFromEnv('idempotency.after-commit=throw');
    assert.ok(failpoint);
    assert.doesNotThrow(() => failpoint('idempotency.before-commit'));
    assert.throws(() => failpoint('idempotency.after-commit'), /failpoint/);
  });

  test('the webhook delivery points are known (src/webhooks/dispatcher.ts)', () => {
    const failpoint = failpointFromEnv('webhooks.before-send=throw,webhooks.before-record=throw');
    assert.ok(failpoint);
    assert.throws(() => failpoint('webhooks.before-send'), /failpoint/);
    assert.throws(() => failpoint('webhooks.before-record'), /failpoint/);
    assert.doesNotThrow(() => failpoint('idempotency.before-commit'));
  });

  test('malformed pairs, unknown points and unknown actions are refused', () => {
    assert.throws(() => failpointFromEnv('idempotency.before-commit'), FailpointError);
    assert.throws(
      () => failpointFromEnv('idempotency.mid-commit=kill'),
      (e: unknown) => e instanceof FailpointError && /unknown failpoint "idempotency.mid-commit"/.test(e.message),
    );
    assert.throws(
      () => failpointFromEnv('idempotency.before-commit=explode'),
      (e: unknown) => e instanceof FailpointError && /unknown failpoint action/.test(e.message),
    );
  });
});
