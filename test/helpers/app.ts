// The real application over a real test database, with tokens signed by a key in that database.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppOptions } from '../../src/app.ts';
import { signAccessToken } from '../../src/auth/access-token.ts';
import { ensureActiveSigningKey } from '../../src/auth/keys.store.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Db } from '../../src/db/db.ts';
import type { Scope } from '../../src/core/scopes.ts';
import { createTestDatabase } from './db.ts';
import { assertMatchesOpenApi } from './openapi.ts';

export const PUBLIC_URL = 'http://orderpay.test';

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  /** URL of the test database on PostgreSQL; undefined on the embedded database. */
  databaseUrl: string | undefined;
  config: Config;
  /** A token for a user (customer or staff) or, with service: true, for a service client. */
  token(options: {
    userId?: number;
    staff?: boolean;
    service?: boolean;
    scopes?: Scope[] | string[];
    expiresIn?: number;
    clientId?: string;
    /** The api_version claim: the version a registered client is pinned to. */
    apiVersion?: number;
  }): Promise<string>;
  /** app.inject with a bearer token; throws unless the response matches the OpenAPI document. */
  request(token: string | undefined, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * Budgets the ordinary tests never reach (the fuzz tests alone send thousands of requests with one
 * token): the limiter still counts every request. test/http/rate-limits.test.ts sets small ones.
 */
export const UNREACHED_RATE_LIMITS = {
  ORDERPAY_RATE_LIMIT_READS: '1000000000',
  ORDERPAY_RATE_LIMIT_WRITES: '1000000000',
  ORDERPAY_RATE_LIMIT_PAYMENTS: '1000000000',
};

/** The payments part of the test configuration with some settings changed (startTestApp's overrides replace parts whole). */
export function paymentsConfig(changes: Partial<Config['payments']>): Config['payments'] {
  return { ...loadConfig({ NODE_ENV: 'test' }).payments, ...changes };
}

export const ALL_SCOPES: Scope[] = ['orders:read', 'orders:write', 'products:write', 'payments:read', 'payments:write'];

/** appOptions reach buildApp as given (a payment processor, a failpoint); logging stays off unless they set a logger. */
export async function startTestApp(overrides: Partial<Config> = {}, now?: () => Date, appOptions: AppOptions = {}): Promise<TestApp> {
  const { db, url: databaseUrl, drop } = await createTestDatabase();
  const config = loadConfig({ NODE_ENV: 'test', PUBLIC_URL, LOG_LEVEL: 'silent', ...UNREACHED_RATE_LIMITS }, overrides);
  const app = await buildApp(config, db, { ...appOptions, logger: appOptions.logger ?? false, now });
  await app.ready();
  const key = await ensureActiveSigningKey(db);
  return {
    app,
    db,
    databaseUrl,
    config,
    token: ({ userId, staff, service, scopes = ALL_SCOPES, expiresIn, clientId = 'test-client', apiVersion }) =>
      signAccessToken(key, {
        issuer: config.issuer,
        audience: config.audience,
        subject: service ? clientId : String(userId),
        clientId,
        scope: scopes.join(' '),
        roles: staff ? ['staff'] : undefined,
        apiVersion,
        expiresIn,
        now: now?.(),
      }),
    async request(token, options) {
      const response = await app.inject({
        ...options,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...options.headers },
      });
      // The request as sent, query string included, whatever form the options gave it in.
      // (originalUrl: middleware mounted under a prefix, like the authorization server, rewrites url.)
      const raw = response.raw.req as typeof response.raw.req & { originalUrl?: string };
      const { method = 'GET' } = raw;
      const url = raw.originalUrl ?? raw.url ?? '/';
      assertMatchesOpenApi(app, method, url, response);
      return response;
    },
    async close() {
      await app.close();
      await drop();
    },
  };
}

/**
 * What `start` makes in a before() hook, shared by the tests of one file and closed in an after()
 * hook: call it at the top level of the file. The object it returns forwards to the one started.
 */
export function setUpPerFile<T extends object>(start: () => Promise<T>, close: (started: T) => Promise<unknown>): T {
  let started: T | undefined;
  before(async () => {
    started = await start();
  });
  after(() => started && close(started));
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(started ?? assert.fail('used before its before() hook ran'), key),
  });
}

/** The app shared by the tests of one file (setUpPerFile). */
export function setUpTestApp(overrides: Partial<Config> = {}): TestApp {
  return setUpPerFile(
    () => startTestApp(overrides),
    (t) => t.close(),
  );
}
