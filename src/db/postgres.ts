// PostgreSQL over node-postgres, with explicit timeouts: pg waits forever by default.
import pg from 'pg';
import type { Config } from '../config.ts';
import { OID, parseInt8, parseTimestamptz, type Db, type Queryable } from './db.ts';

// Parsers are per pool (not the global pg.types) so nothing else in the process is affected.
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === OID.INT8) return parseInt8;
    if (oid === OID.TIMESTAMPTZ) return parseTimestamptz;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export async function openPostgres(url: string, options: Config['db']): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax,
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    // Server-side limits, so a stuck statement or a forgotten transaction cannot hold locks forever.
    options: `-c TimeZone=UTC -c statement_timeout=${options.statementTimeoutMs} -c idle_in_transaction_session_timeout=${options.idleInTransactionTimeoutMs}`,
    query_timeout: options.statementTimeoutMs + 5_000,
    types: types as pg.CustomTypesConfig,
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that
  // would crash the process. The next checkout gets a fresh connection.
  pool.on('error', () => undefined);

  const query: Queryable['query'] = async <T>(sql: string, params?: readonly unknown[]) => {
    const result = await pool.query(sql, params as unknown[] | undefined);
    return { rows: result.rows as T[], rowCount: result.rowCount ?? 0 };
  };

  return {
    kind: 'postgres',
    query,
    exec: async (sql: string) => void (await pool.query(sql)),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: unknown;
      try {
        await client.query('BEGIN');
        const tx: Queryable = {
          async query<R>(sql: string, params?: readonly unknown[]) {
            const result = await client.query(sql, params as unknown[] | undefined);
            return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
          },
          exec: async (sql: string) => void (await client.query(sql)),
        };
        const result = await fn(tx);
        await client.query('COMMIT');
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
        client.release(broken instanceof Error ? broken : undefined);
      }
    },
    close: () => pool.end(),
  };
}
