// Embedded PostgreSQL (PGlite). It is one connection: every query and transaction is serialised
// through one queue, so a statement can never land inside another caller's open transaction.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { lockDataDir } from './data-dir-lock.ts';
import { flushOutbox, openOutbox, outboxCommitted } from './outbox.ts';
import { createSerialQueue, serialPoolStats } from './serial-queue.ts';
import { OID, parseInt8, parseTimestamptz, type Db, type Queryable, type QueryResult } from './db.ts';

/** The embedded database's buffer pool: small, as one process's database (PostgreSQL's default is 128 MB). */
const EMBEDDED_SHARED_BUFFERS = '16MB';

export async function openPglite(dataDir: string): Promise<Db> {
  const inMemory = dataDir.startsWith('memory://');
  // PGlite creates the data directory itself but not its parents.
  if (!inMemory) mkdirSync(path.dirname(dataDir), { recursive: true });
  const unlock = inMemory ? () => undefined : lockDataDir(dataDir);
  let pg: PGlite;
  try {
    pg = await PGlite.create({
      dataDir: inMemory ? undefined : dataDir,
      parsers: { [OID.INT8]: parseInt8, [OID.TIMESTAMPTZ]: parseTimestamptz },
      // PostgreSQL's 128 MB of shared buffers live in the WebAssembly memory, which never shrinks;
      // the data directory's files are in the operating system's page cache anyway (docs/benchmarks.md).
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
    });
  } catch (error) {
    unlock();
    throw error;
  }
  await pg.exec("SET TIME ZONE 'UTC'");

  const exclusive = createSerialQueue();

  const runQuery = async <T>(target: Queryable | PGlite, sql: string, params?: readonly unknown[]) => {
    const result = await (target as PGlite).query<T>(sql, params as unknown[] | undefined);
    return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length } satisfies QueryResult<T>;
  };

  return {
    kind: 'pglite',
    poolStats: () => serialPoolStats(exclusive),
    query: <T>(sql: string, params?: readonly unknown[]) => exclusive(() => runQuery<T>(pg, sql, params)),
    exec: (sql: string) => exclusive(async () => void (await pg.exec(sql))),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) =>
      exclusive(async () => {
        await pg.exec('BEGIN');
        try {
          const tx: Queryable = {
            query: (sql, params) => runQuery(pg, sql, params),
            exec: async (sql) => void (await pg.exec(sql)),
          };
          openOutbox(tx);
          const result = await fn(tx);
          await flushOutbox(tx);
          await pg.exec('COMMIT');
          outboxCommitted(tx);
          return result;
        } catch (error) {
          await pg.exec('ROLLBACK');
          throw error;
        }
      }),
    close: () => exclusive(() => pg.close()).finally(unlock),
  };
}
