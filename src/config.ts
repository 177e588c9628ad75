// Configuration: read once from the environment, validated, frozen. See README "Configuration".
import path from 'node:path';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly env: 'development' | 'production' | 'test';
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
  /** Which servers this process runs: the resource server (the API), the authorization server (/oauth), or both. */
  readonly servers: { readonly resource: boolean; readonly authorization: boolean };
  /** Seed demo data into an empty database on `serve` (never in production). */
  readonly seedOnEmpty: boolean;
  readonly idempotency: {
    /** How long a completed key replays its response (and a used key stays taken). */
    readonly retentionSeconds: number;
    /** How long a claim is held before another request may take over a key whose process died. */
    readonly lockSeconds: number;
  };
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readUrl(env: Env, name: string, fallback: string | undefined): string | undefined {
  const raw = env[name] || fallback;
  if (raw === undefined) return undefined;
  try {
    return new URL(raw).toString().replace(/\/$/, '');
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${raw}"`);
  }
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

// "true" would trust every hop, letting any client choose its IP with X-Forwarded-For.
function readTrustProxy(env: Env): Config['trustProxy'] {
  const raw = env.ORDERPAY_TRUST_PROXY?.trim();
  if (!raw || raw === 'false') return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  if (raw === 'true')
    throw new ConfigError(
      'ORDERPAY_TRUST_PROXY must be a hop count (e.g. 1) or the proxies\' addresses/CIDRs, not "true": trusting every hop lets clients choose their IP',
    );
  return raw;
}

function readServers(env: Env): Config['servers'] {
  const raw = (env.ORDERPAY_SERVERS || 'resource,authorization')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = raw.filter((s) => s !== 'resource' && s !== 'authorization');
  if (unknown.length || raw.length === 0)
    throw new ConfigError(`ORDERPAY_SERVERS must list resource and/or authorization, got "${env.ORDERPAY_SERVERS}"`);
  return { resource: raw.includes('resource'), authorization: raw.includes('authorization') };
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const nodeEnv = env.NODE_ENV === 'production' || env.NODE_ENV === 'test' ? env.NODE_ENV : 'development';
  const host = env.HOST || '127.0.0.1';
  const port = readInt(env, 'PORT', 3000, 0, 65535);
  const publicUrl = readUrl(env, 'PUBLIC_URL', `http://${host.includes(':') ? `[${host}]` : host}:${port}`)!;
  const logLevel = (env.LOG_LEVEL || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const dataDir = env.DATA_DIR || './data';
  const config: Config = {
    env: nodeEnv,
    host,
    port,
    publicUrl,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: dataDir.startsWith('memory://') ? dataDir : path.resolve(dataDir),
    logLevel,
    issuer: readUrl(env, 'ORDERPAY_ISSUER', `${publicUrl}/oauth`)!,
    audience: readUrl(env, 'ORDERPAY_AUDIENCE', publicUrl)!,
    jwksUrl: readUrl(env, 'ORDERPAY_JWKS_URL', undefined),
    db: {
      poolMax: readInt(env, 'ORDERPAY_DB_POOL_MAX', 10, 1, 1000),
      connectTimeoutMs: readInt(env, 'ORDERPAY_DB_CONNECT_TIMEOUT_MS', 5000, 1, 600_000),
      statementTimeoutMs: readInt(env, 'ORDERPAY_DB_STATEMENT_TIMEOUT_MS', 15_000, 1, 3_600_000),
      idleInTransactionTimeoutMs: readInt(env, 'ORDERPAY_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 30_000, 1, 3_600_000),
    },
    servers: readServers(env),
    trustProxy: readTrustProxy(env),
    seedOnEmpty: nodeEnv !== 'production' && readBool(env, 'ORDERPAY_SEED_ON_EMPTY', !env.DATABASE_URL),
    idempotency: {
      retentionSeconds: readInt(env, 'ORDERPAY_IDEMPOTENCY_RETENTION_SECONDS', 24 * 3600, 60, 30 * 24 * 3600),
      lockSeconds: readInt(env, 'ORDERPAY_IDEMPOTENCY_LOCK_SECONDS', 30, 1, 3600),
    },
    ...overrides,
  };
  // A claim must lapse long before its key expires: a key is never reclaimed from a live request.
  if (config.idempotency.lockSeconds * 2 > config.idempotency.retentionSeconds) {
    throw new ConfigError('ORDERPAY_IDEMPOTENCY_LOCK_SECONDS must be at most half of ORDERPAY_IDEMPOTENCY_RETENTION_SECONDS');
  }
  return Object.freeze(config);
}
