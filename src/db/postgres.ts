// PostgreSQL over node-postgres, with explicit timeouts: pg waits forever by default.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { flushOutbox, openOutbox, outboxCommitted } from './outbox.ts';
import type { Config } from '../config.ts';
import { describeConnectFailure } from './connect-failure.ts';
import { OID, parseInt8, parseTimestamptz, type Db, type Queryable } from './db.ts';

// Arrays of those types parse element by element like PGlite does (pg's defaults would give
// strings for int8[] and Dates for timestamptz[]).
const parseTextArray: (value: string) => unknown = pg.types.getTypeParser(OID.TEXT_ARRAY as number, 'text');
function arrayOf(parse: (value: string) => unknown): (value: string) => unknown {
  const each = (item: unknown): unknown => (Array.isArray(item) ? item.map(each) : item === null ? null : parse(item as string));
  return (value) => each(parseTextArray(value));
}
const parseInt8Array = arrayOf(parseInt8);
const parseTimestamptzArray = arrayOf(parseTimestamptz);

// Parsers are per pool (not the global pg.types) so nothing else in the process is affected.
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === OID.INT8) return parseInt8;
    if (oid === OID.TIMESTAMPTZ) return parseTimestamptz;
    if (oid === OID.INT8_ARRAY) return parseInt8Array;
    if (oid === OID.TIMESTAMPTZ_ARRAY) return parseTimestamptzArray;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

// Parameterised statements are prepared once per connection under a name derived from their text:
// PostgreSQL then skips parsing them on every call, and planning them once its plan cache keeps
// the generic plan (about half the server's cost of a short query; record 0123 on a page's LIMIT).
// The set of distinct statements is bounded by the code (filter × sort shapes); past MAX_PREPARED
// texts, new ones simply run unnamed.
const MAX_PREPARED = 5_000;
const statementNames = new Map<string, string>();

function preparedName(sql: string, params: readonly unknown[] | undefined): string | undefined {
  if (!params) return undefined;
  let name = statementNames.get(sql);
  if (name === undefined && statementNames.size < MAX_PREPARED) {
    name = `op_${createHash('sha256').update(sql).digest('base64url').slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  return name;
}

// Behind a transaction-mode pooler each transaction may run on another server connection, so a
// statement prepared on one is unknown (or already known) on the next: every statement goes
// through the unnamed one, parsed and planned each time (docs/deploy.md, "Connection poolers").
const unnamed = (): undefined => undefined;

type QueryCallback = (error: Error | undefined, result: pg.QueryResult) => void;
/** What runs a statement: the pool (any connection) or a transaction's client. */
type Runner = { query(statement: pg.Query, callback: QueryCallback): unknown };

/**
 * Runs a statement as pg's own Query (a submittable), its text and values given apart: given an
 * object config ({ name, text, values }), pg copies it through property descriptors on every
 * statement (utils.cloneQueryConfig), which the bench's profile of a page showed at ~2% of its
 * CPU (issue 28). The name is set on the Query, which prepares a named statement as pg would.
 */
function runStatement(runner: pg.Pool | pg.PoolClient, name: string | undefined, sql: string, params: readonly unknown[] | undefined) {
  return new Promise<pg.QueryResult>((resolve, reject) => {
    const statement = params ? new pg.Query(sql, params as unknown[]) : new pg.Query(sql);
    if (name !== undefined) (statement as { name?: string }).name = name;
    (runner as unknown as Runner).query(statement, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** What opening a pool needs of the configuration. */
export type PostgresOptions = Pick<
  Config['db'],
  'pooler' | 'poolMax' | 'connectTimeoutMs' | 'statementTimeoutMs' | 'idleInTransactionTimeoutMs'
>;

/**
 * Where the server-side limits live. Directly connected, they are the session's, set once at
 * connection (the `options` startup parameter). A transaction-mode pooler refuses that parameter
 * and hands each transaction any server connection, so session settings would leak between
 * clients: the limits are set with SET LOCAL in the same round trip as BEGIN, and last exactly
 * as long as the transaction. Reads outside a transaction are bounded by the role's or the
 * pooler's own settings (docs/deploy.md) and by the client-side query timeout.
 */
function sessionSettings(options: PostgresOptions): { startup: string | undefined; begin: string } {
  if (options.pooler === 'transaction') {
    return {
      startup: undefined,
      begin: `BEGIN; SET LOCAL statement_timeout = ${options.statementTimeoutMs}; SET LOCAL idle_in_transaction_session_timeout = ${options.idleInTransactionTimeoutMs}`,
    };
  }
  return {
    startup: `-c TimeZone=UTC -c statement_timeout=${options.statementTimeoutMs} -c idle_in_transaction_session_timeout=${options.idleInTransactionTimeoutMs}`,
    begin: 'BEGIN',
  };
}

/** Connects once at open, so that a wrong DATABASE_URL or a server that is down is said in one line. */
async function checkConnection(pool: pg.Pool, url: string, connectTimeoutMs: number): Promise<void> {
  try {
    (await pool.connect()).release();
  } catch (error) {
    await pool.end();
    throw describeConnectFailure(url, error, connectTimeoutMs);
  }
}

export async function openPostgres(url: string, options: PostgresOptions): Promise<Db> {
  const settings = sessionSettings(options);
  const nameOf = options.pooler === 'transaction' ? unnamed : preparedName;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax,
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    // Names orderpay's sessions in pg_stat_activity and the logs, unless the URL's application_name
    // or libpq's PGAPPNAME (which node-postgres reads itself, below any value given here) names them.
    ...(process.env.PGAPPNAME ? {} : { application_name: 'orderpay' }),
    // Server-side limits, so a stuck statement or a forgotten transaction cannot hold locks forever.
    ...(settings.startup === undefined ? {} : { options: settings.startup }),
    query_timeout: options.statementTimeoutMs + 5_000,
    types: types as pg.CustomTypesConfig,
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that
  // would crash the process. The next checkout gets a fresh connection.
  pool.on('error', () => undefined);
  await checkConnection(pool, url, options.connectTimeoutMs);

  const query: Queryable['query'] = async <T>(sql: string, params?: readonly unknown[]) => {
    const result = await runStatement(pool, nameOf(sql, params), sql, params);
    return { rows: result.rows as T[], rowCount: result.rowCount ?? 0 };
  };

  return {
    kind: 'postgres',
    poolStats: () => ({
      max: options.poolMax,
      open: pool.totalCount,
      inUse: pool.totalCount - pool.idleCount,
      waiting: pool.waitingCount,
    }),
    query,
    exec: async (sql: string) => void (await pool.query(sql)),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: unknown;
      // A checked-out client that loses its connection (idle-in-transaction timeout, a server
      // restart) emits 'error' with no pool listener attached: without ours, the process crashes.
      // The failure reaches the caller through the pending or next query instead.
      const onConnectionError = (error: unknown) => {
        broken = error;
      };
      client.on('error', onConnectionError);
      try {
        await client.query(settings.begin);
        const tx: Queryable = {
          async query<R>(sql: string, params?: readonly unknown[]) {
            const result = await runStatement(client, nameOf(sql, params), sql, params);
            return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
          },
          exec: async (sql: string) => void (await client.query(sql)),
        };
        openOutbox(tx);
        const result = await fn(tx);
        await flushOutbox(tx);
        await client.query('COMMIT');
        outboxCommitted(tx);
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          broken = rollbackError;
        }
        throw error;
      } finally {
        // A connection whose ROLLBACK failed is in an unknown state: destroy it, never reuse it.
        client.off('error', onConnectionError);
        client.release(broken instanceof Error ? broken : undefined);
      }
    },
    close: () => pool.end(),
  };
}
