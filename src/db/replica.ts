// A streaming replica for reads that may be stale by a bounded amount (ORDERPAY_READ_DATABASE_URL).
// A monitor samples the primary's WAL position and the replica's replayed position every
// POLL_MS; the replica serves a read only when (a) it has replayed everything the primary had
// written maxLagMs ago, and (b) it has replayed the caller's own last write (its LSN, which the
// caller's process recorded after the write committed). Unreachable, or too far behind, the
// primary serves the read (docs/deploy.md, "Read replicas").
import type { Db, Queryable } from './db.ts';
import { openPostgres, type PostgresOptions } from './postgres.ts';

/** How often the monitor asks both servers where they are. */
const POLL_MS = 100;
/** A replica not heard from for this many polls is treated as down. */
const SILENT_POLLS = 5;

/** "16/B374D848" (pg_lsn's text form) → a byte position. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

export interface ReplicaState {
  /** The replica answers and is within the staleness bound. */
  usable: boolean;
  /** Bytes of WAL the replica had still to replay at the last poll (undefined: unknown). */
  lagBytes: number | undefined;
}

export interface ReadReplica {
  /** The replica when it may serve a read that must see position `required` (the caller's last write); else undefined. */
  serving(required: bigint | undefined): Queryable | undefined;
  /** A query on the replica failed as unreachable: the primary serves until a poll hears from it again. */
  markDown(): void;
  state(): ReplicaState;
  /** The primary's current WAL position: at least the end of every transaction committed before the call. */
  primaryPosition(): Promise<bigint>;
  close(): Promise<void>;
}

interface Sample {
  at: number;
  lsn: bigint;
}

/**
 * The primary's position at or before `moment`: the newest sample taken then, or the oldest
 * sample when none is that old (stricter than the bound asks, never looser).
 */
export function positionAt(samples: readonly Sample[], moment: number): bigint | undefined {
  let found: Sample | undefined;
  for (const sample of samples) {
    if (sample.at <= moment) found = sample;
    else break;
  }
  return (found ?? samples[0])?.lsn;
}

/** Drops the samples that positionAt can no longer need (all but the newest one older than horizon). */
export function pruneSamples(samples: Sample[], horizon: number): void {
  let keepFrom = 0;
  for (let i = 0; i < samples.length; i++) if (samples[i]!.at <= horizon) keepFrom = i;
  samples.splice(0, keepFrom);
}

export async function openReadReplica(
  primary: Db,
  url: string,
  options: PostgresOptions & { maxLagMs: number },
  log: { warn(message: string): void },
): Promise<ReadReplica> {
  // The replica's pool is small: it serves collection reads only, and the primary takes over when it cannot.
  const replica = await openPostgres(url, options).catch((error: unknown) => {
    log.warn(`read replica: not reachable at start (${(error as Error).message}); the primary serves every read until it is`);
    return undefined;
  });
  let db = replica;
  const samples: Sample[] = [];
  let replayed: Sample | undefined;
  let down = false;
  let warnedNotStandby = false;

  async function poll(): Promise<void> {
    const now = Date.now();
    try {
      const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      samples.push({ at: now, lsn: parseLsn(rows[0]!.lsn) });
      pruneSamples(samples, now - options.maxLagMs);
    } catch {
      // The primary is away: its requests fail anyway, and the samples so far still bound the replica.
    }
    try {
      db ??= await openPostgres(url, options);
      const { rows } = await db.query<{ lsn: string | null }>('SELECT pg_last_wal_replay_lsn()::text AS lsn');
      const lsn = rows[0]!.lsn;
      if (lsn === null) {
        // Not a standby (pg_last_wal_replay_lsn is NULL on a primary): never read from it.
        if (!warnedNotStandby) log.warn('read replica: ORDERPAY_READ_DATABASE_URL is not a standby server; the primary serves every read');
        warnedNotStandby = true;
        replayed = undefined;
        return;
      }
      replayed = { at: now, lsn: parseLsn(lsn) };
      down = false;
    } catch {
      replayed = undefined;
    }
  }

  let polling: Promise<void> = poll();
  const timer = setInterval(() => {
    polling = polling.then(poll);
  }, POLL_MS);
  timer.unref();
  await polling;

  function usableAt(now: number): boolean {
    if (!db || down || !replayed || now - replayed.at > POLL_MS * SILENT_POLLS) return false;
    const bound = positionAt(samples, now - options.maxLagMs);
    return bound !== undefined && replayed.lsn >= bound;
  }

  return {
    serving(required) {
      if (!usableAt(Date.now())) return undefined;
      if (required !== undefined && replayed!.lsn < required) return undefined;
      return db;
    },
    markDown() {
      down = true;
    },
    state() {
      const newest = samples.at(-1);
      return {
        usable: usableAt(Date.now()),
        lagBytes: newest && replayed ? Math.max(0, Number(newest.lsn - replayed.lsn)) : undefined,
      };
    },
    async primaryPosition() {
      const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      return parseLsn(rows[0]!.lsn);
    },
    async close() {
      clearInterval(timer);
      await polling;
      await db?.close();
    },
  };
}
