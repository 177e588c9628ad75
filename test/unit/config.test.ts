// Configuration parsing: defaults, refusals with a message naming each bad variable, and the README kept in step with the schema.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { listConfigurationVariables } from '../../src/config.schema.ts';

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

  test('rate limits: 600 reads, 120 writes, 30 payments a minute in the database by default; Redis when REDIS_URL is set', () => {
    assert.deepEqual(loadConfig({}).rateLimits, {
      windowSeconds: 60,
      reads: 600,
      writes: 120,
      payments: 30,
      redisUrl: undefined,
      redisKeyPrefix: 'orderpay:ratelimit:',
    });
    const configured = loadConfig({
      REDIS_URL: 'redis://:secret@cache.internal:6380/2',
      ORDERPAY_RATE_LIMIT_REDIS_PREFIX: 'shop:',
      ORDERPAY_RATE_LIMIT_WINDOW_SECONDS: '10',
      ORDERPAY_RATE_LIMIT_READS: '100',
      ORDERPAY_RATE_LIMIT_WRITES: '20',
      ORDERPAY_RATE_LIMIT_PAYMENTS: '1',
    }).rateLimits;
    assert.deepEqual(configured, {
      windowSeconds: 10,
      reads: 100,
      writes: 20,
      payments: 1,
      redisUrl: 'redis://:secret@cache.internal:6380/2',
      redisKeyPrefix: 'shop:',
    });
    for (const [name, value] of [
      ['ORDERPAY_RATE_LIMIT_READS', '0'],
      ['ORDERPAY_RATE_LIMIT_PAYMENTS', '1000000001'],
      ['ORDERPAY_RATE_LIMIT_WINDOW_SECONDS', '3601'],
      ['REDIS_URL', 'cache.internal:6379'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (e: unknown) => e instanceof ConfigError && e.message.startsWith(name),
        `${name}=${value}`,
      );
    }
  });

  test('ORDERPAY_CORS_ORIGINS: exact origins; unset, any loopback origin in development and none otherwise', () => {
    assert.deepEqual(loadConfig({}).cors, { origins: [], anyLoopbackOrigin: true });
    assert.deepEqual(loadConfig({ NODE_ENV: 'test' }).cors, { origins: [], anyLoopbackOrigin: false });
    assert.deepEqual(loadConfig({ NODE_ENV: 'production' }).cors, { origins: [], anyLoopbackOrigin: false });
    const listed = loadConfig({ ORDERPAY_CORS_ORIGINS: ' https://shop.example.com, http://localhost:5173 ,http://[::1]:8080' }).cors;
    assert.deepEqual(listed, {
      origins: ['https://shop.example.com', 'http://localhost:5173', 'http://[::1]:8080'],
      anyLoopbackOrigin: false,
    });
    assert.ok(Object.isFrozen(listed.origins));
    assert.deepEqual(loadConfig({ NODE_ENV: 'production', ORDERPAY_CORS_ORIGINS: 'https://shop.example.com' }).cors.origins, [
      'https://shop.example.com',
    ]);
    const refusals: [string, string][] = [
      ['https://shop.example.com/', ' (a browser sends https://shop.example.com)'],
      ['https://shop.example.com/app', ' (a browser sends https://shop.example.com)'],
      ['https://Shop.Example.com', ' (a browser sends https://shop.example.com)'],
      ['https://shop.example.com:443', ' (a browser sends https://shop.example.com)'],
      ['*', ''],
      ['null', ''],
      ['shop.example.com', ''],
      ['ftp://files.example.com', ''],
    ];
    for (const [origin, hint] of refusals) {
      assert.throws(
        () => loadConfig({ ORDERPAY_CORS_ORIGINS: `https://ok.example.com,${origin}` }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message ===
            `ORDERPAY_CORS_ORIGINS must list origins, scheme://host[:port] without a path or trailing slash (e.g. https://shop.example.com), got "${origin}"${hint}`,
        origin,
      );
    }
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

  test('payments: the simulator outside production, a retry schedule of about 16 hours, 5 s of waiting in v1 and v2, an hour for a customer to act, the simulator at once', () => {
    const config = loadConfig({});
    assert.deepEqual(config.payments, {
      processor: 'simulator',
      retryScheduleSeconds: [1, 5, 30, 120, 600, 1800, 3600, 7200, 14400, 28800],
      waitMs: 5000,
      actionExpirySeconds: 3600,
      simulatorLatencyMs: 0,
      stripe: { secretKey: undefined, webhookSecret: undefined, apiBase: undefined },
    });
    // Inside the 24 hours Stripe replays a request under its idempotency key.
    const hours = config.payments.retryScheduleSeconds.reduce((sum, s) => sum + s, 0) / 3600;
    assert.ok(hours > 15 && hours < 24, `${hours} hours`);
    assert.deepEqual(
      loadConfig({
        ORDERPAY_PAYMENTS_RETRY_SCHEDULE: '2,4',
        ORDERPAY_PAYMENTS_WAIT_MS: '0',
        ORDERPAY_PAYMENTS_ACTION_EXPIRY_SECONDS: '10',
        ORDERPAY_SIMULATOR_LATENCY_MS: '300',
      }).payments,
      {
        processor: 'simulator',
        retryScheduleSeconds: [2, 4],
        waitMs: 0,
        actionExpirySeconds: 10,
        simulatorLatencyMs: 300,
        stripe: { secretKey: undefined, webhookSecret: undefined, apiBase: undefined },
      },
    );
    // Stripe: its keys and, for tests or a proxy, another API host.
    assert.deepEqual(
      loadConfig({
        ORDERPAY_PAYMENT_PROCESSOR: 'stripe',
        STRIPE_SECRET_KEY: 'sk_test_abc123',
        STRIPE_WEBHOOK_SECRET: 'whsec_abc123',
        ORDERPAY_STRIPE_API_BASE: 'http://127.0.0.1:12111',
      }).payments.stripe,
      { secretKey: 'sk_test_abc123', webhookSecret: 'whsec_abc123', apiBase: 'http://127.0.0.1:12111' },
    );
    assert.throws(() => loadConfig({ STRIPE_SECRET_KEY: 'pk_test_abc' }), ConfigError);
    assert.throws(() => loadConfig({ ORDERPAY_STRIPE_API_BASE: 'http://127.0.0.1:12111/v1' }), ConfigError);
    // Production names its processor: none by default (serve then refuses to start with the API).
    assert.equal(loadConfig({ NODE_ENV: 'production' }).payments.processor, undefined);
    assert.equal(loadConfig({ NODE_ENV: 'production', ORDERPAY_PAYMENT_PROCESSOR: 'simulator' }).payments.processor, 'simulator');
    assert.throws(() => loadConfig({ ORDERPAY_PAYMENT_PROCESSOR: 'paypal' }), ConfigError);
    for (const [name, bad] of [
      ['ORDERPAY_PAYMENTS_WAIT_MS', '60001'],
      ['ORDERPAY_PAYMENTS_ACTION_EXPIRY_SECONDS', '9'],
      ['ORDERPAY_SIMULATOR_LATENCY_MS', '-1'],
    ] as const) {
      assert.throws(() => loadConfig({ [name]: bad }), ConfigError, `${name}=${bad}`);
    }
  });

  test('a retry schedule or a secret key of the wrong form is named with the form it must have (the key not echoed)', () => {
    for (const name of ['ORDERPAY_PAYMENTS_RETRY_SCHEDULE', 'ORDERPAY_WEBHOOKS_RETRY_SCHEDULE']) {
      assert.throws(
        () => loadConfig({ [name]: '1,,2' }),
        (e: unknown) =>
          e instanceof ConfigError && e.message === `${name} must be whole seconds separated by commas (e.g. 5,300,1800), got "1,,2"`,
      );
    }
    assert.throws(
      () => loadConfig({ ORDERPAY_WEBHOOKS_SECRET_KEY: 'not-a-key' }),
      (e: unknown) =>
        e instanceof ConfigError && e.message === 'ORDERPAY_WEBHOOKS_SECRET_KEY must be 32 bytes in base64 (openssl rand -base64 32)',
    );
  });

  test('events and webhooks: 30 days of events, no private addresses, the 3-day retry schedule; private addresses are refused in production', () => {
    const config = loadConfig({});
    assert.deepEqual(config.events, { retentionDays: 30 });
    assert.deepEqual(config.webhooks, {
      allowPrivate: false,
      retryScheduleSeconds: [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 72000],
      secretKey: undefined,
      pollIntervalMs: 1000,
      maxRatePerEndpoint: 1000,
      deliver: true,
    });
    // About three days from the first attempt to the last.
    const days = config.webhooks.retryScheduleSeconds.reduce((sum, s) => sum + s, 0) / 86_400;
    assert.ok(days > 2.9 && days < 3.1, `${days} days`);
    assert.equal(loadConfig({ ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true', NODE_ENV: 'test' }).webhooks.allowPrivate, true);
    assert.throws(
      () => loadConfig({ ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true', NODE_ENV: 'production' }),
      (error: unknown) =>
        error instanceof ConfigError && error.message === 'ORDERPAY_WEBHOOKS_ALLOW_PRIVATE=true is refused when NODE_ENV=production',
    );
    assert.deepEqual(loadConfig({ ORDERPAY_WEBHOOKS_RETRY_SCHEDULE: '1,2' }).webhooks.retryScheduleSeconds, [1, 2]);
    for (const bad of ['1,,2', '1 2', '-1', '1.5', 'x']) {
      assert.throws(() => loadConfig({ ORDERPAY_WEBHOOKS_RETRY_SCHEDULE: bad }), ConfigError, bad);
    }
    const key = Buffer.alloc(32, 1).toString('base64');
    assert.equal(loadConfig({ ORDERPAY_WEBHOOKS_SECRET_KEY: key }).webhooks.secretKey, key);
    assert.throws(() => loadConfig({ ORDERPAY_WEBHOOKS_SECRET_KEY: Buffer.alloc(16).toString('base64') }), ConfigError);
    assert.throws(() => loadConfig({ ORDERPAY_EVENTS_RETENTION_DAYS: '0' }), ConfigError);
  });

  test('API v1 dates: published defaults; a sunset less than 6 months after the deprecation is refused', () => {
    assert.deepEqual(loadConfig({}).apiDeprecations, [
      { version: 1, deprecation: new Date('2026-12-01T00:00:00Z'), sunset: new Date('2027-06-01T00:00:00Z') },
    ]);
    const dates = (deprecation: string, sunset: string) =>
      loadConfig({ ORDERPAY_API_V1_DEPRECATION: deprecation, ORDERPAY_API_V1_SUNSET: sunset }).apiDeprecations[0];
    assert.deepEqual(dates('2027-01-31T12:00:00+01:00', '2027-07-31T11:00:00Z')?.sunset, new Date('2027-07-31T11:00:00Z'));
    assert.throws(
      () => dates('2027-01-31T12:00:00Z', '2027-07-31T11:59:59Z'),
      (e: unknown) => e instanceof ConfigError && /ORDERPAY_API_V1_SUNSET must be at least 6 months after/.test(e.message),
    );
    for (const impossible of ['2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z']) {
      assert.throws(
        () => dates(impossible, '2030-01-01T00:00:00Z'),
        (e: unknown) => e instanceof ConfigError && e.message.startsWith('ORDERPAY_API_V1_DEPRECATION must be an RFC 3339 date-time'),
        impossible,
      );
    }
    assert.throws(
      () => dates('next week', '2030-01-01T00:00:00Z'),
      (e: unknown) => e instanceof ConfigError && /ORDERPAY_API_V1_DEPRECATION must be an RFC 3339 date-time/.test(e.message),
    );
  });
});

describe('loadConfig: the one schema of the environment', () => {
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.message;
    }
    assert.fail(`accepted ${JSON.stringify(env)}`);
  };

  test('NODE_ENV: unset means development; anything but development, test or production is refused', () => {
    assert.equal(loadConfig({}).env, 'development');
    for (const env of ['development', 'test', 'production'] as const) assert.equal(loadConfig({ NODE_ENV: env }).env, env);
    for (const typo of ['prod', 'staging', 'Production', 'dev']) {
      assert.equal(refusal({ NODE_ENV: typo }), `NODE_ENV must be one of development, test, production, got "${typo}"`);
    }
  });

  test('several bad variables are reported together, in one message naming each', () => {
    assert.equal(
      refusal({ PORT: 'abc', LOG_LEVEL: 'loud', NODE_ENV: 'prod', ORDERPAY_SERVERS: 'payments', ORDERPAY_DB_POOL_MAX: '0' }),
      [
        'PORT must be a whole number, got "abc"',
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
        'NODE_ENV must be one of development, test, production, got "prod"',
        'ORDERPAY_SERVERS must list resource and/or authorization, got "payments"',
        'ORDERPAY_DB_POOL_MAX must be between 1 and 1000, got 0',
      ].join('; '),
    );
  });

  test('whole numbers are decimal digits only', () => {
    assert.equal(loadConfig({ PORT: '8080' }).port, 8080);
    for (const raw of ['1e3', '0x10', ' 7', '7 ', '-1', '1.5', '+7', '١']) {
      assert.equal(refusal({ ORDERPAY_DB_POOL_MAX: raw }), `ORDERPAY_DB_POOL_MAX must be a whole number, got "${raw}"`);
    }
    assert.equal(refusal({ PORT: '65536' }), 'PORT must be between 0 and 65535, got 65536');
  });

  test('an empty variable is refused, naming the default that unsetting it gives', () => {
    assert.equal(refusal({ PORT: '' }), 'PORT is set but empty: give it a value, or unset it for the default (3000)');
    assert.equal(refusal({ NODE_ENV: '' }), 'NODE_ENV is set but empty: give it a value, or unset it for the default (development)');
    assert.equal(
      refusal({ PUBLIC_URL: '' }),
      'PUBLIC_URL is set but empty: give it a value, or unset it for the default (http://HOST:PORT)',
    );
    assert.equal(refusal({ DATABASE_URL: '' }), 'DATABASE_URL is set but empty: give it a value, or unset it');
    for (const { name } of listConfigurationVariables()) {
      assert.match(refusal({ [name]: '' }), new RegExp(`^${name} is set but empty: `), name);
    }
  });

  test('DATABASE_URL: a postgres:// or postgresql:// URL; a refusal never shows the password', () => {
    assert.equal(
      loadConfig({ DATABASE_URL: 'postgres://orderpay:secret@db.internal:5432/orderpay' }).databaseUrl,
      'postgres://orderpay:secret@db.internal:5432/orderpay',
    );
    assert.equal(loadConfig({ DATABASE_URL: 'postgresql://db.internal/orderpay' }).databaseUrl, 'postgresql://db.internal/orderpay');
    assert.equal(
      loadConfig({ DATABASE_URL: 'postgres:///orderpay?host=/run/postgresql' }).databaseUrl,
      'postgres:///orderpay?host=/run/postgresql',
    );
    const mustBePostgres = 'DATABASE_URL must be a postgres:// or postgresql:// URL (orderpay runs on PostgreSQL), got';
    assert.equal(refusal({ DATABASE_URL: 'newcomer_db' }), `${mustBePostgres} "newcomer_db"`);
    assert.equal(refusal({ DATABASE_URL: 'mysql://shop:secret@127.0.0.1/shop' }), `${mustBePostgres} "mysql://shop:***@127.0.0.1/shop"`);
    assert.equal(refusal({ DATABASE_URL: 'shop:secret@127.0.0.1/shop' }), `${mustBePostgres} "shop:***@127.0.0.1/shop"`);
    assert.equal(
      refusal({ DATABASE_URL: 'postgres://shop:secret@db:port/shop' }),
      'DATABASE_URL must be an absolute URL, got "postgres://shop:***@db:port/shop"',
    );
    assert.equal(
      refusal({ REDIS_URL: 'http://:secret@cache:6379' }),
      'REDIS_URL must be a redis:// or rediss:// URL, got "http://:***@cache:6379"',
    );
  });

  test('running wide: a pooler mode, a direct URL and a read replica; the replica needs Redis, and both URLs need DATABASE_URL', () => {
    const direct = loadConfig({});
    assert.deepEqual(
      { pooler: direct.db.pooler, directUrl: direct.db.directUrl, readUrl: direct.db.readUrl, readMaxLagMs: direct.db.readMaxLagMs },
      { pooler: 'none', directUrl: undefined, readUrl: undefined, readMaxLagMs: 5000 },
    );
    const wide = loadConfig({
      DATABASE_URL: 'postgres://orderpay@pgbouncer:6432/orderpay',
      ORDERPAY_DB_POOLER: 'transaction',
      ORDERPAY_DB_DIRECT_URL: 'postgres://orderpay@primary:5432/orderpay',
      ORDERPAY_READ_DATABASE_URL: 'postgres://orderpay@replica:5432/orderpay',
      ORDERPAY_READ_MAX_LAG_MS: '2000',
      REDIS_URL: 'redis://cache:6379',
    });
    assert.equal(wide.db.pooler, 'transaction');
    assert.equal(wide.db.directUrl, 'postgres://orderpay@primary:5432/orderpay');
    assert.equal(wide.db.readUrl, 'postgres://orderpay@replica:5432/orderpay');
    assert.equal(wide.db.readMaxLagMs, 2000);
    assert.equal(refusal({ ORDERPAY_DB_POOLER: 'session' }), 'ORDERPAY_DB_POOLER must be one of none, transaction, got "session"');
    assert.equal(
      refusal({
        DATABASE_URL: 'postgres://db/orderpay',
        ORDERPAY_READ_DATABASE_URL: 'mysql://replica/orderpay',
        REDIS_URL: 'redis://cache',
      }),
      'ORDERPAY_READ_DATABASE_URL must be a postgres:// or postgresql:// URL (orderpay runs on PostgreSQL), got "mysql://replica/orderpay"',
    );
    assert.equal(
      refusal({ DATABASE_URL: 'postgres://db/orderpay', ORDERPAY_READ_DATABASE_URL: 'postgres://replica/orderpay' }),
      "ORDERPAY_READ_DATABASE_URL needs REDIS_URL: each caller's last write position is kept there, so that every process sees it",
    );
    assert.equal(
      refusal({ ORDERPAY_DB_DIRECT_URL: 'postgres://primary/orderpay' }),
      'ORDERPAY_READ_DATABASE_URL and ORDERPAY_DB_DIRECT_URL need DATABASE_URL (the embedded database has neither replicas nor poolers)',
    );
  });

  test('booleans are true, false, 1 or 0; demo data is never seeded in production', () => {
    assert.equal(loadConfig({}).seedOnEmpty, true);
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://db/orderpay' }).seedOnEmpty, false);
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://db/orderpay', ORDERPAY_SEED_ON_EMPTY: '1' }).seedOnEmpty, true);
    assert.equal(loadConfig({ ORDERPAY_SEED_ON_EMPTY: 'false' }).seedOnEmpty, false);
    assert.equal(loadConfig({ NODE_ENV: 'production', ORDERPAY_SEED_ON_EMPTY: 'true' }).seedOnEmpty, false);
    assert.equal(refusal({ ORDERPAY_SEED_ON_EMPTY: 'yes' }), 'ORDERPAY_SEED_ON_EMPTY must be true or false, got "yes"');
  });

  test('the /docs client is offered outside production, and in production only when ORDERPAY_DOCS_CLIENT says so', () => {
    assert.equal(loadConfig({}).docsClient, true);
    assert.equal(loadConfig({ NODE_ENV: 'test' }).docsClient, true);
    assert.equal(loadConfig({ NODE_ENV: 'production' }).docsClient, false);
    assert.equal(loadConfig({ NODE_ENV: 'production', ORDERPAY_DOCS_CLIENT: 'true' }).docsClient, true);
    assert.equal(loadConfig({ ORDERPAY_DOCS_CLIENT: '0' }).docsClient, false);
    assert.equal(refusal({ ORDERPAY_DOCS_CLIENT: 'on' }), 'ORDERPAY_DOCS_CLIENT must be true or false, got "on"');
  });

  test('the staff console is served in every environment unless ORDERPAY_CONSOLE=false', () => {
    assert.equal(loadConfig({}).console, true);
    assert.equal(loadConfig({ NODE_ENV: 'production' }).console, true);
    assert.equal(loadConfig({ ORDERPAY_CONSOLE: 'false' }).console, false);
    assert.equal(refusal({ ORDERPAY_CONSOLE: 'off' }), 'ORDERPAY_CONSOLE must be true or false, got "off"');
  });

  test('URLs are absolute and lose their trailing slash; the issuer and audience default from PUBLIC_URL', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://API.example.com/', ORDERPAY_JWKS_URL: 'https://idp.example/jwks/' });
    assert.equal(config.publicUrl, 'https://api.example.com');
    assert.equal(config.issuer, 'https://api.example.com/oauth');
    assert.equal(config.audience, 'https://api.example.com');
    assert.equal(config.jwksUrl, 'https://idp.example/jwks');
    assert.equal(loadConfig({ ORDERPAY_ISSUER: 'https://idp.example/realms/shop/' }).issuer, 'https://idp.example/realms/shop');
    assert.equal(loadConfig({}).jwksUrl, undefined);
    assert.equal(loadConfig({ HOST: '::1', PORT: '8080' }).publicUrl, 'http://[::1]:8080');
    assert.equal(refusal({ ORDERPAY_AUDIENCE: '/api' }), 'ORDERPAY_AUDIENCE must be an absolute URL, got "/api"');
  });

  test('DATA_DIR is resolved to an absolute path; memory:// is kept', () => {
    assert.equal(loadConfig({ DATA_DIR: 'memory://test' }).dataDir, 'memory://test');
    assert.equal(loadConfig({ DATA_DIR: 'var/orderpay' }).dataDir, path.resolve('var/orderpay'));
  });

  test('HTTP limits: 10 s for the headers, 30 s for the request, 72 s of keep-alive, 4096 connections, shedding past 1 s of lag', () => {
    assert.deepEqual(loadConfig({}).http, {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 72_000,
      maxConnections: 4096,
      maxEventLoopDelayMs: 1000,
    });
    assert.deepEqual(
      loadConfig({
        ORDERPAY_HTTP_HEADERS_TIMEOUT_MS: '5000',
        ORDERPAY_HTTP_REQUEST_TIMEOUT_MS: '5000',
        ORDERPAY_HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000',
        ORDERPAY_HTTP_MAX_CONNECTIONS: '100',
        ORDERPAY_HTTP_MAX_EVENT_LOOP_DELAY_MS: '0',
      }).http,
      { headersTimeoutMs: 5000, requestTimeoutMs: 5000, keepAliveTimeoutMs: 65_000, maxConnections: 100, maxEventLoopDelayMs: 0 },
    );
    assert.throws(
      () => loadConfig({ ORDERPAY_HTTP_HEADERS_TIMEOUT_MS: '20000', ORDERPAY_HTTP_REQUEST_TIMEOUT_MS: '10000' }),
      (e: unknown) =>
        e instanceof ConfigError && e.message === 'ORDERPAY_HTTP_HEADERS_TIMEOUT_MS must be at most ORDERPAY_HTTP_REQUEST_TIMEOUT_MS',
    );
    for (const [name, value] of [
      ['ORDERPAY_HTTP_HEADERS_TIMEOUT_MS', '0'],
      ['ORDERPAY_HTTP_REQUEST_TIMEOUT_MS', '99'],
      ['ORDERPAY_HTTP_MAX_CONNECTIONS', '0'],
      ['ORDERPAY_HTTP_KEEP_ALIVE_TIMEOUT_MS', '1e3'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (e: unknown) => e instanceof ConfigError && e.message.startsWith(name),
      );
    }
  });

  test('the configuration is frozen, nested parts too', () => {
    const config = loadConfig({});
    assert.ok(
      Object.isFrozen(config) &&
        Object.isFrozen(config.db) &&
        Object.isFrozen(config.http) &&
        Object.isFrozen(config.idempotency) &&
        Object.isFrozen(config.servers) &&
        Object.isFrozen(config.cors) &&
        Object.isFrozen(config.rateLimits) &&
        Object.isFrozen(config.payments),
    );
  });

  test("the README's configuration table lists exactly the schema's variables, defaults and descriptions", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.split(/^## /m).find((part) => part.startsWith('Configuration\n'));
    assert.ok(section, 'README has a "## Configuration" section');
    const rows = [...section.matchAll(/^\| `([A-Z0-9_]+)` \| (.+?) \| (.+) \|$/gm)].map(([, name, fallback, description]) => ({
      name,
      default: fallback === '—' ? undefined : fallback,
      description,
    }));
    const variables = listConfigurationVariables();
    assert.ok(variables.every((variable) => variable.description !== ''));
    assert.deepEqual(rows, variables);
  });
});
