// Which server a collection read goes to (docs/deploy.md, "Read replicas"). Without
// ORDERPAY_READ_DATABASE_URL, always the primary. With it: the replica when it is within the
// staleness bound and has replayed the caller's own last write, whichever process served that
// write; the primary otherwise, and for any request with a precondition. After every write a
// caller makes, its process records the primary's WAL position under the caller (client and
// subject) in Redis, for as long as the replica could still lack it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Principal } from '../core/principal.ts';
import type { Db, Queryable } from '../db/db.ts';
import { openReadReplica, type ReadReplica } from '../db/replica.ts';
import { databaseFailure, isRetryableConflict } from '../db/sqlstate.ts';
import { throttledWarning } from './rate-limit/counters.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The server a collection read of this request may use: the replica or the primary. */
    collectionReader(request: FastifyRequest): Promise<Queryable>;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

// Positions are fixed-width hex, so string order is byte order: keep the greater one.
const RECORD_WRITE = `
local current = redis.call('GET', KEYS[1])
if current and current >= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

type RedisWithRecord = Redis & { recordWrite(key: string, position: string, ttlMs: number): Promise<number> };

function positionText(lsn: bigint): string {
  return lsn.toString(16).padStart(16, '0');
}

function callerKey(prefix: string, principal: Principal): string {
  return `${prefix}written:${encodeURIComponent(principal.clientId)}:${encodeURIComponent(principal.subject)}`;
}

/** The replica, or the primary when the replica cannot answer (down, or a query canceled by recovery). */
function withFallback(replica: Queryable, primary: Queryable, onDown: () => void): Queryable {
  const fallBack = <T>(error: unknown, retry: () => Promise<T>): Promise<T> => {
    if (databaseFailure(error)?.code === 'SERVICE_UNAVAILABLE') onDown();
    else if (!isRetryableConflict(error)) throw error;
    return retry();
  };
  return {
    query: <T>(sql: string, params?: readonly unknown[]) =>
      replica.query<T>(sql, params).catch((error: unknown) => fallBack(error, () => primary.query<T>(sql, params))),
    exec: (sql) => replica.exec(sql).catch((error: unknown) => fallBack(error, () => primary.exec(sql))),
  };
}

function registerReplicaMetrics(registry: Registry | undefined, replica: ReadReplica): { count(target: 'replica' | 'primary'): void } {
  if (!registry) return { count: () => {} };
  const reads = new Counter({
    name: 'orderpay_db_collection_reads_total',
    help: 'Collection reads by the server that served them (replica or primary).',
    labelNames: ['target'],
    registers: [registry],
  });
  new Gauge({
    name: 'orderpay_db_replica_lag_bytes',
    help: 'WAL bytes the read replica had still to replay at the last check.',
    registers: [registry],
    collect() {
      const lag = replica.state().lagBytes;
      if (lag !== undefined) this.set(lag);
    },
  });
  new Gauge({
    name: 'orderpay_db_replica_usable',
    help: '1 while the read replica answers within the staleness bound (ORDERPAY_READ_MAX_LAG_MS), else 0.',
    registers: [registry],
    collect() {
      this.set(replica.state().usable ? 1 : 0);
    },
  });
  return { count: (target) => reads.inc({ target }) };
}

async function readRouting(app: FastifyInstance): Promise<void> {
  const { db: options, rateLimits } = app.config;
  const primary: Db = app.db;
  if (options.readUrl === undefined || rateLimits.redisUrl === undefined) {
    app.decorate('collectionReader', async () => primary);
    return;
  }
  const replica = await openReadReplica(primary, options.readUrl, { ...options, maxLagMs: options.readMaxLagMs }, app.log);
  // Loaded only where a replica is: a process without one never needs ioredis for it.
  const [{ Redis }, { REDIS_CLIENT_OPTIONS }] = await Promise.all([import('ioredis'), import('./rate-limit/redis-counters.ts')]);
  const redis = new Redis(rateLimits.redisUrl, REDIS_CLIENT_OPTIONS) as RedisWithRecord;
  redis.on('error', throttledWarning(app.log, 'read replica: Redis is unreachable; the primary serves every read meanwhile'));
  redis.defineCommand('recordWrite', { numberOfKeys: 1, lua: RECORD_WRITE });
  await redis.connect().catch(() => {});
  // A write is readable from the replica once it is within the bound: the key can go then.
  const keepMs = options.readMaxLagMs + 1000;
  const metrics = registerReplicaMetrics(app.hasDecorator('metricsRegistry') ? app.metricsRegistry : undefined, replica);
  const onDown = () => replica.markDown();

  app.decorate('collectionReader', async function collectionReader(request: FastifyRequest): Promise<Queryable> {
    const principal = request.principal;
    const preconditioned = request.headers['if-match'] !== undefined || request.headers['if-none-match'] !== undefined;
    if (!principal || preconditioned || replica.serving(undefined) === undefined) {
      metrics.count('primary');
      return primary;
    }
    let required: bigint | undefined;
    try {
      const written = await redis.get(callerKey(rateLimits.redisKeyPrefix, principal));
      required = written === null ? undefined : BigInt(`0x${written}`);
    } catch {
      // Where the caller's last write is cannot be known: only the primary is sure to have it.
      metrics.count('primary');
      return primary;
    }
    const serving = replica.serving(required);
    metrics.count(serving ? 'replica' : 'primary');
    return serving ? withFallback(serving, primary, onDown) : primary;
  });

  app.addHook('onSend', async function recordCallersWrite(request, reply) {
    if (SAFE_METHODS.has(request.method) || !request.principal || reply.statusCode >= 500) return;
    try {
      const position = await replica.primaryPosition();
      await redis.recordWrite(callerKey(rateLimits.redisKeyPrefix, request.principal), positionText(position), keepMs);
    } catch (error) {
      // Not recorded: this caller's next reads may come from a replica that lacks this write.
      request.log.warn({ err: error }, 'read replica: the position of this write could not be recorded');
    }
  });

  app.addHook('onClose', async function closeReadReplica() {
    redis.disconnect();
    await replica.close();
  });
}

export const readRoutingPlugin = fp(readRouting, { name: 'orderpay-read-routing', fastify: '5.x' });
