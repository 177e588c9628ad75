// Where /metrics is served and who may read it, as the configuration decides: on the API's port
// by default, not at all in production unless a token or a port of its own is set; a token too
// short to be safe, or a port that is the API's, is refused without echoing the token.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

const TOKEN = 'a'.repeat(24) + 'B-._~+/9'.repeat(2);

describe('metrics configuration', () => {
  test('by default: on the API listener, no token', () => {
    assert.deepEqual(loadConfig({ HOST: '0.0.0.0' }).metrics, { listener: 'api', port: undefined, host: '0.0.0.0', token: undefined });
    assert.equal(loadConfig({ NODE_ENV: 'test' }).metrics.listener, 'api');
  });

  test('in production: not served unless a token or a port of its own is set', () => {
    assert.equal(loadConfig({ NODE_ENV: 'production' }).metrics.listener, 'none');
    assert.deepEqual(loadConfig({ NODE_ENV: 'production', ORDERPAY_METRICS_TOKEN: TOKEN }).metrics, {
      listener: 'api',
      port: undefined,
      host: '127.0.0.1',
      token: TOKEN,
    });
    assert.deepEqual(loadConfig({ NODE_ENV: 'production', ORDERPAY_METRICS_PORT: '9464' }).metrics, {
      listener: 'own',
      port: 9464,
      host: '127.0.0.1',
      token: undefined,
    });
  });

  test('a port of its own, on HOST or on ORDERPAY_METRICS_HOST', () => {
    assert.deepEqual(loadConfig({ HOST: '0.0.0.0', ORDERPAY_METRICS_PORT: '9464' }).metrics.host, '0.0.0.0');
    assert.deepEqual(loadConfig({ HOST: '0.0.0.0', ORDERPAY_METRICS_PORT: '9464', ORDERPAY_METRICS_HOST: '10.1.2.3' }).metrics, {
      listener: 'own',
      port: 9464,
      host: '10.1.2.3',
      token: undefined,
    });
  });

  test("ORDERPAY_METRICS_PORT: 1–65535, not the API's port", () => {
    for (const port of ['0', '65536', 'metrics']) {
      assert.throws(
        () => loadConfig({ ORDERPAY_METRICS_PORT: port }),
        (e: unknown) => e instanceof ConfigError && e.message.startsWith('ORDERPAY_METRICS_PORT'),
        port,
      );
    }
    assert.throws(
      () => loadConfig({ PORT: '8080', ORDERPAY_METRICS_PORT: '8080' }),
      (e: unknown) => e instanceof ConfigError && e.message === 'ORDERPAY_METRICS_PORT must differ from PORT',
    );
  });

  test('ORDERPAY_METRICS_TOKEN: at least 32 bearer-token characters; the refusal does not echo it', () => {
    for (const token of ['short-secret', 'x'.repeat(31), `${'x'.repeat(32)} y`, `${'x'.repeat(32)}"`, `${'é'.repeat(40)}`]) {
      assert.throws(
        () => loadConfig({ ORDERPAY_METRICS_TOKEN: token }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message === 'ORDERPAY_METRICS_TOKEN must be at least 32 characters of A-Z a-z 0-9 - . _ ~ + / (e.g. openssl rand -hex 32)',
        token,
      );
    }
    assert.equal(loadConfig({ ORDERPAY_METRICS_TOKEN: `${'x'.repeat(32)}==` }).metrics.token, `${'x'.repeat(32)}==`);
  });
});
