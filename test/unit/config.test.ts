// Configuration parsing: defaults, and refusals with a message naming the variable.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('loadConfig', () => {
  test('defaults: both servers, no trusted proxy, port 3000 on 127.0.0.1', () => {
    const config = loadConfig({});
    assert.deepEqual(config.servers, { resource: true, authorization: true });
    assert.equal(config.trustProxy, false);
    assert.equal(config.port, 3000);
    assert.equal(config.publicUrl, 'http://127.0.0.1:3000');
    assert.equal(config.issuer, 'http://127.0.0.1:3000/oauth');
  });

  test('ORDERPAY_TRUST_PROXY: a hop count or addresses; "true" is refused', () => {
    assert.equal(loadConfig({ ORDERPAY_TRUST_PROXY: '1' }).trustProxy, 1);
    assert.equal(loadConfig({ ORDERPAY_TRUST_PROXY: '10.0.0.0/8,127.0.0.1' }).trustProxy, '10.0.0.0/8,127.0.0.1');
    assert.equal(loadConfig({ ORDERPAY_TRUST_PROXY: 'false' }).trustProxy, false);
    assert.throws(
      () => loadConfig({ ORDERPAY_TRUST_PROXY: 'true' }),
      (e: unknown) => e instanceof ConfigError && /ORDERPAY_TRUST_PROXY/.test(e.message),
    );
  });

  test('ORDERPAY_SERVERS: resource, authorization or both; anything else is refused', () => {
    assert.deepEqual(loadConfig({ ORDERPAY_SERVERS: 'resource' }).servers, { resource: true, authorization: false });
    assert.deepEqual(loadConfig({ ORDERPAY_SERVERS: 'authorization' }).servers, { resource: false, authorization: true });
    assert.throws(() => loadConfig({ ORDERPAY_SERVERS: 'payments' }), ConfigError);
  });

  test('idempotency keys: kept a day and locked 30 s by default; a lock must be at most half the retention', () => {
    assert.deepEqual(loadConfig({}).idempotency, { retentionSeconds: 86_400, lockSeconds: 30 });
    assert.deepEqual(
      loadConfig({ ORDERPAY_IDEMPOTENCY_RETENTION_SECONDS: '3600', ORDERPAY_IDEMPOTENCY_LOCK_SECONDS: '1800' }).idempotency,
      { retentionSeconds: 3600, lockSeconds: 1800 },
    );
    assert.throws(
      () => loadConfig({ ORDERPAY_IDEMPOTENCY_RETENTION_SECONDS: '3600', ORDERPAY_IDEMPOTENCY_LOCK_SECONDS: '1801' }),
      (e: unknown) => e instanceof ConfigError && /ORDERPAY_IDEMPOTENCY_LOCK_SECONDS/.test(e.message),
    );
    assert.throws(() => loadConfig({ ORDERPAY_IDEMPOTENCY_LOCK_SECONDS: '0' }), ConfigError);
    assert.throws(() => loadConfig({ ORDERPAY_IDEMPOTENCY_RETENTION_SECONDS: '59' }), ConfigError);
  });
});
