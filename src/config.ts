// Configuration: the environment read once against one schema (config.schema.ts), validated, frozen.
// See README "Configuration".
import path from 'node:path';
import type { Static, TSchema } from 'typebox';
import { EnvironmentSchema } from './config.schema.ts';

type Environment = Static<typeof EnvironmentSchema>;

export type LogLevel = Environment['LOG_LEVEL'];

export interface Config {
  readonly env: Environment['NODE_ENV'];
  readonly host: string;
  readonly port: number;
  /** Public base URL of this service, without a trailing slash. */
  readonly publicUrl: string;
  /** PostgreSQL connection string; when absent the embedded database in dataDir is used. */
  readonly databaseUrl: string | undefined;
  /** Directory of the embedded database; `memory://` keeps it in memory (tests). */
  readonly dataDir: string;
  readonly logLevel: LogLevel;
  /** Issuer whose access tokens the resource server accepts. */
  readonly issuer: string;
  /** Audience (RFC 8707 resource indicator) that access tokens must carry. */
  readonly audience: string;
  /** JWKS of an external issuer; unset means the keys in our own database. */
  readonly jwksUrl: string | undefined;
  readonly db: {
    /** How DATABASE_URL is reached: directly (or a session-mode pooler), or through a transaction-mode pooler. */
    readonly pooler: 'none' | 'transaction';
    /** A connection to the same database that bypasses the pooler (migrations); undefined uses DATABASE_URL. */
    readonly directUrl: string | undefined;
    /** A streaming replica that serves collection reads (src/db/read-routing.ts). */
    readonly readUrl: string | undefined;
    /** How far behind the replica may be and still serve reads. */
    readonly readMaxLagMs: number;
    readonly poolMax: number;
    readonly connectTimeoutMs: number;
    readonly statementTimeoutMs: number;
    readonly idleInTransactionTimeoutMs: number;
  };
  /**
   * Proxies in front whose X-Forwarded-For is trusted (client IPs for rate limits and logs): a hop
   * count, or a comma-separated list of addresses/CIDRs; false trusts none.
   */
  readonly trustProxy: false | number | string;
  /** Browser origins allowed to call cross-origin (src/http/cors.ts). */
  readonly cors: CorsConfig;
  /** Which servers this process runs: the resource server (the API), the authorization server (/oauth), or both. */
  readonly servers: { readonly resource: boolean; readonly authorization: boolean };
  /** Seed demo data into an empty database on `serve` (never in production). */
  readonly seedOnEmpty: boolean;
  /** Register the public client orderpay-docs, through which /docs signs in (src/auth/docs-client.ts). */
  readonly docsClient: boolean;
  /** Serve the staff console at /console and register its public client orderpay-console (src/http/console-page.ts, src/auth/console-client.ts). */
  readonly console: boolean;
  /** A confidential client holds the scopes that move money only on the FAPI 2.0 profile (src/auth/fapi2-profile.ts). */
  readonly fapi2ForPayments: boolean;
  /** Versions with a published deprecation: RFC 9745 Deprecation and RFC 8594 Sunset dates. */
  readonly apiDeprecations: readonly ApiDeprecation[];
  /** The HTTP server's limits: how long a client may take, how many connections it may hold (docs/deploy.md). */
  readonly http: {
    /** Headers of a request must arrive within this, counted from its first byte. */
    readonly headersTimeoutMs: number;
    /** The whole request (headers and body) must arrive within this. */
    readonly requestTimeoutMs: number;
    /** An idle kept-alive connection is closed after this. */
    readonly keepAliveTimeoutMs: number;
    /** Open connections at most; more are closed as they arrive. */
    readonly maxConnections: number;
    /** Shed load (503) while the event loop lags more than this; 0: never. */
    readonly maxEventLoopDelayMs: number;
  };
  readonly idempotency: {
    /** How long a completed key replays its response (and a used key stays taken). */
    readonly retentionSeconds: number;
    /** How long a claim is held before another request may take over a key whose process died. */
    readonly lockSeconds: number;
  };
  /** The API's rate limits (src/http/rate-limit/): budgets per window, and where they are counted. */
  readonly rateLimits: RateLimitsConfig;
  readonly metrics: MetricsConfig;
  readonly events: {
    /** Days an event is kept before the purge job deletes it (and its deliveries). */
    readonly retentionDays: number;
  };
  readonly webhooks: WebhooksConfig;
  readonly payments: PaymentsConfig;
}

/** Payments in phases around the processor (docs/payments.md). */
export interface PaymentsConfig {
  /** The processor named; undefined under NODE_ENV=production until one is (serve then refuses to start). */
  readonly processor: 'simulator' | 'stripe' | undefined;
  /** The Stripe adapter's settings (ORDERPAY_PAYMENT_PROCESSOR=stripe). */
  readonly stripe: {
    readonly secretKey: string | undefined;
    readonly webhookSecret: string | undefined;
    readonly apiBase: string | undefined;
  };
  /** Seconds before each new question to a processor that did not answer; the last repeats. */
  readonly retryScheduleSeconds: readonly number[];
  /** How long a request in a version that shows only final outcomes waits for one. */
  readonly waitMs: number;
  /** How long a customer has to act before a payment that requires it is canceled. */
  readonly actionExpirySeconds: number;
  /** How long each call to the simulated processor takes. */
  readonly simulatorLatencyMs: number;
}

/** Webhook delivery (docs/webhooks.md). */
export interface WebhooksConfig {
  /** Loopback and private addresses, and http, allowed as endpoint URLs (never in production). */
  readonly allowPrivate: boolean;
  /** Seconds before each retry of a failed delivery; after the last, the delivery fails. */
  readonly retryScheduleSeconds: readonly number[];
  /** Base64 AES-256 key for the signing secrets at rest; undefined: one kept in the database. */
  readonly secretKey: string | undefined;
  readonly pollIntervalMs: number;
  /** Deliveries sent to one endpoint per second at most, across every process. */
  readonly maxRatePerEndpoint: number;
  /** Whether this process delivers webhooks (the resource server's processes do, unless set otherwise). */
  readonly deliver: boolean;
}

/** Where /metrics is served and who may read it (docs/deploy.md, "Health, metrics, logs"). */
export interface MetricsConfig {
  /**
   * `api`: on the API's listener; `own`: on a listener of its own (port, host); `none`: nowhere
   * (production with neither a token nor a port of its own: business figures stay private).
   */
  readonly listener: 'api' | 'own' | 'none';
  readonly port: number | undefined;
  readonly host: string;
  /** The bearer token /metrics requires; undefined requires none. */
  readonly token: string | undefined;
}

export interface RateLimitsConfig {
  readonly windowSeconds: number;
  readonly reads: number;
  readonly writes: number;
  readonly payments: number;
  /** Redis to count in; undefined counts in the database. */
  readonly redisUrl: string | undefined;
  readonly redisKeyPrefix: string;
}

export interface CorsConfig {
  /** Exact origins (scheme://host[:port]) from ORDERPAY_CORS_ORIGINS. */
  readonly origins: readonly string[];
  /** Any http(s) origin on localhost, 127.0.0.1 or [::1] too: the default in development. */
  readonly anyLoopbackOrigin: boolean;
}

export interface ApiDeprecation {
  readonly version: number;
  readonly deprecation: Date;
  readonly sunset: Date;
}

/** The shortest migration window: a sunset sooner than this after the deprecation is refused. */
export const MIN_MIGRATION_WINDOW_MONTHS = 6;

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/** What the schema says of one variable, as far as reading and refusing it goes. */
interface VariableSchema {
  type?: string;
  minimum?: number;
  maximum?: number;
  enum?: readonly string[];
  items?: { enum?: readonly string[]; format?: string };
  minItems?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  defaultText?: string;
}

const variableSchema = (name: string) => EnvironmentSchema.properties[name as keyof Environment] as TSchema & VariableSchema;

const BOOLEANS: Record<string, boolean> = { true: true, 1: true, false: false, 0: false };

/** A variable's string as the schema's type; a string that is not one is kept, for validation to refuse. */
function readVariable(schema: VariableSchema, raw: string): unknown {
  switch (schema.type) {
    case 'integer':
      return /^\d+$/.test(raw) ? Number(raw) : raw;
    case 'boolean':
      return BOOLEANS[raw] ?? raw;
    case 'array':
      return raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
    default:
      return raw;
  }
}

/**
 * A refused value as the message may show it: the password of a URL (`scheme://user:password@…`,
 * or whatever stands between ':' and '@' in a value without `//`) is replaced, since the message
 * reaches logs and terminals.
 */
function shown(raw: string): string {
  return raw.includes('//') ? raw.replace(/(\/\/[^:@/]*):[^@]*@/, '$1:***@') : raw.replace(/:[^@]*@/, ':***@');
}

const mustBeUrl = (name: string, raw: string) => `${name} must be an absolute URL, got "${shown(raw)}"`;

/** An empty variable is a mistake (`PORT=`, or a template that filled in nothing), not a wish for the default. */
function describeEmpty(name: string): string {
  const schema = variableSchema(name);
  const fallback = schema.default ?? schema.defaultText?.replaceAll('`', '');
  return `${name} is set but empty: give it a value, or unset it${fallback === undefined ? '' : ` for the default (${String(fallback)})`}`;
}

/** The origin (RFC 6454) an http(s) URL belongs to, as a browser serializes it in Origin; undefined for anything else. */
function originOf(text: string): string | undefined {
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
}

/** Origins are compared as strings (the Fetch standard): only the form a browser sends can ever match. */
const isOrigin = (text: string) => originOf(text) === text;

function mustBeOrigins(name: string, items: readonly string[]): string {
  const bad = items.find((item) => !isOrigin(item)) ?? '';
  const origin = originOf(bad);
  return `${name} must list origins, scheme://host[:port] without a path or trailing slash (e.g. https://shop.example.com), got "${bad}"${origin ? ` (a browser sends ${origin})` : ''}`;
}

/** One line naming the variable and what is wrong with it. */
function describeRefusal(name: string, rawText: string | undefined, value: unknown, keyword: string): string {
  const schema = variableSchema(name);
  const raw = rawText === undefined ? undefined : shown(rawText);
  switch (keyword) {
    case 'type':
      return schema.type === 'integer' ? `${name} must be a whole number, got "${raw}"` : `${name} must be true or false, got "${raw}"`;
    case 'minimum':
    case 'maximum':
      return `${name} must be between ${schema.minimum} and ${schema.maximum}, got ${value}`;
    case 'enum':
    case 'minItems':
      if (schema.items?.enum) return `${name} must list ${schema.items.enum.join(' and/or ')}, got "${raw}"`;
      return `${name} must be one of ${schema.enum?.join(', ')}, got "${raw}"`;
    case 'format':
      if (schema.items?.format === 'origin') return mustBeOrigins(name, value as string[]);
      if (schema.format === 'date-time') return `${name} must be an RFC 3339 date-time such as 2027-06-01T00:00:00Z, got "${raw}"`;
      return mustBeUrl(name, raw ?? '');
    case 'pattern':
      if (name === 'REDIS_URL') return `${name} must be a redis:// or rediss:// URL, got "${raw}"`;
      if (name === 'DATABASE_URL' || name === 'ORDERPAY_DB_DIRECT_URL' || name === 'ORDERPAY_READ_DATABASE_URL')
        return `${name} must be a postgres:// or postgresql:// URL (orderpay runs on PostgreSQL), got "${raw}"`;
      if (name.endsWith('_RETRY_SCHEDULE')) return `${name} must be whole seconds separated by commas (e.g. 5,300,1800), got "${raw}"`;
      // Keys and tokens are secrets: not echoed.
      if (name === 'ORDERPAY_WEBHOOKS_SECRET_KEY') return `${name} must be 32 bytes in base64 (openssl rand -base64 32)`;
      if (name === 'ORDERPAY_METRICS_TOKEN')
        return `${name} must be at least 32 characters of A-Z a-z 0-9 - . _ ~ + / (e.g. openssl rand -hex 32)`;
      // ORDERPAY_TRUST_PROXY, the other variable with a pattern.
      return `${name} must be a hop count (e.g. 1) or the proxies' addresses/CIDRs, not "true": trusting every hop lets clients choose their IP`;
    default:
      return `${name} is invalid (${keyword}), got "${raw}"`;
  }
}

// The keywords the environment's schema may use: the checker below knows each of them.
const KEYWORDS = new Set([
  'type',
  'minimum',
  'maximum',
  'enum',
  'items',
  'minItems',
  'pattern',
  'format',
  'default',
  'defaultText',
  'description',
]);
for (const [name, schema] of Object.entries(EnvironmentSchema.properties)) {
  const unknown = Object.keys(schema).filter((keyword) => !KEYWORDS.has(keyword));
  if (unknown.length) throw new Error(`config.schema.ts: ${name} uses ${unknown.join(', ')}, which src/config.ts does not check`);
}

/**
 * The first keyword of its schema a value fails, or undefined. A few lines instead of a schema
 * compiler: compiling one at start-up (Ajv, or TypeBox's Value) made every request of the process
 * measurably slower (docs/decisions/0052-environment-schema.md), and the environment needs only these keywords.
 */
function failedKeyword(schema: VariableSchema, value: unknown): string | undefined {
  if (schema.type === 'integer' && !Number.isSafeInteger(value)) return 'type';
  if (schema.type === 'boolean' && typeof value !== 'boolean') return 'type';
  if (schema.type === 'string' && typeof value !== 'string') return 'type';
  if (schema.minimum !== undefined && (value as number) < schema.minimum) return 'minimum';
  if (schema.maximum !== undefined && (value as number) > schema.maximum) return 'maximum';
  if (schema.enum && !schema.enum.includes(value as string)) return 'enum';
  if (schema.type === 'array') {
    const items = value as string[];
    if (items.length < (schema.minItems ?? 0)) return 'minItems';
    if (schema.items?.enum && items.some((item) => !schema.items?.enum?.includes(item))) return 'enum';
    if (schema.items?.format === 'origin' && !items.every(isOrigin)) return 'format';
  }
  if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value as string)) return 'pattern';
  if (schema.format === 'url' && !URL.canParse(value as string)) return 'format';
  if (schema.format === 'date-time' && !RFC3339.test(value as string)) return 'format';
  return undefined;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** The environment validated in one step; every bad variable is named in the one ConfigError. */
function parseEnvironment(env: Env): Environment {
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(EnvironmentSchema.properties)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') values[name] = readVariable(variableSchema(name), raw);
  }
  // One refusal per variable, in the schema's order; unset variables take their defaults.
  const refusals: string[] = [];
  for (const name of Object.keys(EnvironmentSchema.properties)) {
    const schema = variableSchema(name);
    if (env[name] === '') {
      refusals.push(describeEmpty(name));
      continue;
    }
    if (values[name] === undefined) {
      if (schema.default !== undefined) values[name] = schema.default;
      continue;
    }
    const keyword = failedKeyword(schema, values[name]);
    if (keyword) refusals.push(describeRefusal(name, env[name], values[name], keyword));
  }
  if (refusals.length) throw new ConfigError(refusals.join('; '));
  return values as Environment;
}

/** Absolute, without the trailing slash. Validated values pass; a default derived from a bad HOST does not. */
function normaliseUrl(name: string, url: string): string {
  if (!URL.canParse(url)) throw new ConfigError(mustBeUrl(name, url));
  return new URL(url).toString().replace(/\/$/, '');
}

/** An RFC 3339 date-time that names a real calendar day (2026-02-30 and 2026-13-01 do not). */
function readDate(name: string, text: string): Date {
  const date = new Date(text);
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (Number.isNaN(date.getTime()) || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) {
    throw new ConfigError(`${name} must be an RFC 3339 date-time such as 2027-06-01T00:00:00Z, got "${text}"`);
  }
  return date;
}

/** v1's dates; the migration window between them is never shorter than MIN_MIGRATION_WINDOW_MONTHS. */
function readDeprecation(version: number, deprecationText: string, sunsetText: string): ApiDeprecation {
  const deprecation = readDate(`ORDERPAY_API_V${version}_DEPRECATION`, deprecationText);
  const sunset = readDate(`ORDERPAY_API_V${version}_SUNSET`, sunsetText);
  const earliestSunset = new Date(deprecation);
  earliestSunset.setUTCMonth(earliestSunset.getUTCMonth() + MIN_MIGRATION_WINDOW_MONTHS);
  if (sunset < earliestSunset) {
    throw new ConfigError(
      `ORDERPAY_API_V${version}_SUNSET must be at least ${MIN_MIGRATION_WINDOW_MONTHS} months after ORDERPAY_API_V${version}_DEPRECATION (${deprecationText}), got ${sunsetText}`,
    );
  }
  return Object.freeze({ version, deprecation, sunset });
}

function readTrustProxy(value: string): Config['trustProxy'] {
  const trimmed = value.trim();
  if (!trimmed || trimmed === 'false') return false;
  return /^\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}

function readMetrics(vars: Environment): MetricsConfig {
  const port = vars.ORDERPAY_METRICS_PORT;
  const token = vars.ORDERPAY_METRICS_TOKEN;
  if (port !== undefined && port === vars.PORT) throw new ConfigError('ORDERPAY_METRICS_PORT must differ from PORT');
  const listener = port !== undefined ? 'own' : token !== undefined || vars.NODE_ENV !== 'production' ? 'api' : 'none';
  return { listener, port, host: vars.ORDERPAY_METRICS_HOST ?? vars.HOST, token };
}

/** Frozen with its parts (db, http, cors, servers, idempotency, rateLimits, metrics, events, webhooks, payments), so that no one can change the configuration under another. */
function freezeConfig(config: Config): Config {
  for (const part of Object.values(config)) if (part && typeof part === 'object') Object.freeze(part);
  return Object.freeze(config);
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const vars = parseEnvironment(env);
  const listenUrl = `http://${vars.HOST.includes(':') ? `[${vars.HOST}]` : vars.HOST}:${vars.PORT}`;
  const publicUrl = normaliseUrl('PUBLIC_URL', vars.PUBLIC_URL ?? listenUrl);
  const config: Config = {
    env: vars.NODE_ENV,
    host: vars.HOST,
    port: vars.PORT,
    publicUrl,
    databaseUrl: vars.DATABASE_URL,
    dataDir: vars.DATA_DIR.startsWith('memory://') ? vars.DATA_DIR : path.resolve(vars.DATA_DIR),
    logLevel: vars.LOG_LEVEL,
    issuer: normaliseUrl('ORDERPAY_ISSUER', vars.ORDERPAY_ISSUER ?? `${publicUrl}/oauth`),
    audience: normaliseUrl('ORDERPAY_AUDIENCE', vars.ORDERPAY_AUDIENCE ?? publicUrl),
    jwksUrl: vars.ORDERPAY_JWKS_URL === undefined ? undefined : normaliseUrl('ORDERPAY_JWKS_URL', vars.ORDERPAY_JWKS_URL),
    db: {
      pooler: vars.ORDERPAY_DB_POOLER,
      directUrl: vars.ORDERPAY_DB_DIRECT_URL,
      readUrl: vars.ORDERPAY_READ_DATABASE_URL,
      readMaxLagMs: vars.ORDERPAY_READ_MAX_LAG_MS,
      poolMax: vars.ORDERPAY_DB_POOL_MAX,
      connectTimeoutMs: vars.ORDERPAY_DB_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: vars.ORDERPAY_DB_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: vars.ORDERPAY_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
    http: {
      headersTimeoutMs: vars.ORDERPAY_HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: vars.ORDERPAY_HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: vars.ORDERPAY_HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: vars.ORDERPAY_HTTP_MAX_CONNECTIONS,
      maxEventLoopDelayMs: vars.ORDERPAY_HTTP_MAX_EVENT_LOOP_DELAY_MS,
    },
    cors: {
      origins: Object.freeze(vars.ORDERPAY_CORS_ORIGINS ?? []),
      anyLoopbackOrigin: vars.ORDERPAY_CORS_ORIGINS === undefined && vars.NODE_ENV === 'development',
    },
    servers: { resource: vars.ORDERPAY_SERVERS.includes('resource'), authorization: vars.ORDERPAY_SERVERS.includes('authorization') },
    trustProxy: readTrustProxy(vars.ORDERPAY_TRUST_PROXY),
    seedOnEmpty: vars.NODE_ENV !== 'production' && (vars.ORDERPAY_SEED_ON_EMPTY ?? vars.DATABASE_URL === undefined),
    docsClient: vars.ORDERPAY_DOCS_CLIENT ?? vars.NODE_ENV !== 'production',
    console: vars.ORDERPAY_CONSOLE,
    fapi2ForPayments: vars.ORDERPAY_FAPI2_FOR_PAYMENTS,
    apiDeprecations: [readDeprecation(1, vars.ORDERPAY_API_V1_DEPRECATION, vars.ORDERPAY_API_V1_SUNSET)],
    idempotency: {
      retentionSeconds: vars.ORDERPAY_IDEMPOTENCY_RETENTION_SECONDS,
      lockSeconds: vars.ORDERPAY_IDEMPOTENCY_LOCK_SECONDS,
    },
    rateLimits: {
      windowSeconds: vars.ORDERPAY_RATE_LIMIT_WINDOW_SECONDS,
      reads: vars.ORDERPAY_RATE_LIMIT_READS,
      writes: vars.ORDERPAY_RATE_LIMIT_WRITES,
      payments: vars.ORDERPAY_RATE_LIMIT_PAYMENTS,
      redisUrl: vars.REDIS_URL,
      redisKeyPrefix: vars.ORDERPAY_RATE_LIMIT_REDIS_PREFIX,
    },
    metrics: readMetrics(vars),
    events: { retentionDays: vars.ORDERPAY_EVENTS_RETENTION_DAYS },
    webhooks: {
      allowPrivate: vars.ORDERPAY_WEBHOOKS_ALLOW_PRIVATE,
      retryScheduleSeconds: Object.freeze(vars.ORDERPAY_WEBHOOKS_RETRY_SCHEDULE.split(',').map(Number)),
      secretKey: vars.ORDERPAY_WEBHOOKS_SECRET_KEY,
      pollIntervalMs: vars.ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS,
      maxRatePerEndpoint: vars.ORDERPAY_WEBHOOKS_MAX_RATE,
      deliver: vars.ORDERPAY_WEBHOOKS_DELIVER,
    },
    payments: {
      processor: vars.ORDERPAY_PAYMENT_PROCESSOR ?? (vars.NODE_ENV === 'production' ? undefined : 'simulator'),
      retryScheduleSeconds: Object.freeze(vars.ORDERPAY_PAYMENTS_RETRY_SCHEDULE.split(',').map(Number)),
      waitMs: vars.ORDERPAY_PAYMENTS_WAIT_MS,
      actionExpirySeconds: vars.ORDERPAY_PAYMENTS_ACTION_EXPIRY_SECONDS,
      simulatorLatencyMs: vars.ORDERPAY_SIMULATOR_LATENCY_MS,
      stripe: { secretKey: vars.STRIPE_SECRET_KEY, webhookSecret: vars.STRIPE_WEBHOOK_SECRET, apiBase: vars.ORDERPAY_STRIPE_API_BASE },
    },
    ...overrides,
  };
  // A claim must lapse long before its key expires: a key is never reclaimed from a live request.
  if (config.idempotency.lockSeconds * 2 > config.idempotency.retentionSeconds) {
    throw new ConfigError('ORDERPAY_IDEMPOTENCY_LOCK_SECONDS must be at most half of ORDERPAY_IDEMPOTENCY_RETENTION_SECONDS');
  }
  // Delivering to private addresses is for development: in production it would let anyone who may
  // register an endpoint reach the internal network (SSRF).
  if (config.webhooks.allowPrivate && config.env === 'production') {
    throw new ConfigError('ORDERPAY_WEBHOOKS_ALLOW_PRIVATE=true is refused when NODE_ENV=production');
  }
  // Each caller's last write position must be seen by every process (docs/deploy.md, "Read replicas").
  if (config.db.readUrl !== undefined && config.rateLimits.redisUrl === undefined) {
    throw new ConfigError(
      "ORDERPAY_READ_DATABASE_URL needs REDIS_URL: each caller's last write position is kept there, so that every process sees it",
    );
  }
  if ((config.db.readUrl !== undefined || config.db.directUrl !== undefined) && config.databaseUrl === undefined) {
    throw new ConfigError(
      'ORDERPAY_READ_DATABASE_URL and ORDERPAY_DB_DIRECT_URL need DATABASE_URL (the embedded database has neither replicas nor poolers)',
    );
  }
  // The headers are part of the request: Node refuses a headers timeout longer than the request's.
  if (config.http.headersTimeoutMs > config.http.requestTimeoutMs) {
    throw new ConfigError('ORDERPAY_HTTP_HEADERS_TIMEOUT_MS must be at most ORDERPAY_HTTP_REQUEST_TIMEOUT_MS');
  }
  return freezeConfig(config);
}
