// How far a streaming replica of the bench database's server falls behind under a scenario's
// writes: when pg_stat_replication lists a standby, its replay lag (the time from the primary's
// flush of a WAL record to the standby's replay of it) and the bytes it has still to replay are
// sampled every SAMPLE_MS while the load runs. What ORDERPAY_READ_MAX_LAG_MS must allow for a
// replica to serve collection reads under that load (docs/deploy.md, "Read replicas").
import type { Db } from '../src/db/db.ts';

const SAMPLE_MS = 100;

export interface ReplicaLag {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  maxBytes: number;
}

interface LagRow {
  ms: number | null;
  bytes: string | null;
}

/** The streaming standbys of the server db is connected to, as pg_stat_replication lists them. */
export async function countStandbys(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_replication WHERE state = 'streaming'`);
  return rows[0]!.n;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Samples the first standby's lag until the returned function is called; that gives the figures. */
export function sampleReplicaLag(db: Db): () => Promise<ReplicaLag> {
  const lags: number[] = [];
  let maxBytes = 0;
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      const { rows } = await db.query<LagRow>(
        `SELECT extract(epoch FROM replay_lag) * 1000 AS ms, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text AS bytes
           FROM pg_stat_replication WHERE state = 'streaming' ORDER BY pid LIMIT 1`,
      );
      const row = rows[0];
      // replay_lag is null once the standby has caught up and no new WAL arrives: no lag then.
      if (row) {
        lags.push(Number(row.ms ?? 0));
        maxBytes = Math.max(maxBytes, Number(row.bytes ?? 0));
      }
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
  })();
  return async () => {
    stopped = true;
    await sampling;
    const sorted = [...lags].sort((a, b) => a - b);
    return {
      samples: sorted.length,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted.at(-1) ?? 0,
      maxBytes,
    };
  };
}
