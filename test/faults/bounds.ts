// The recovery bounds the fault suite holds orderpay to, as docs/reliability.md states them.

/** PostgreSQL restarted (fast or immediate): a normal request succeeds within this of the server accepting connections again. */
export const DATABASE_RECOVERY_MS = 5_000;

/** SIGTERM under load: the process has finished its requests and exited 0 within this. */
export const DRAIN_MS = 10_000;

/** A process killed or stopped and started again serves a normal request within this of its start (mostly start-up). */
export const RESTART_MS = 20_000;

/** The database pool or the server's connection slots exhausted, then relieved: a normal request succeeds within this. */
export const EXHAUSTION_RECOVERY_MS = 5_000;

/** A connection that trickles its request headers is cut by the server within this of being opened (a 10 s headers timeout, checked each second). */
export const SLOW_HEADERS_CUT_MS = 15_000;

/** A connection that sends its headers and then trickles the body is cut within this (a 30 s request timeout, checked each second). */
export const SLOW_BODY_CUT_MS = 35_000;

/** While slow clients flood a process, each normal operation is answered (after retries of 503s) within this. */
export const OPERATION_DURING_FLOOD_MS = 5_000;

/**
 * The idempotency lock of the suite's processes (ORDERPAY_IDEMPOTENCY_LOCK_SECONDS; 30 s by
 * default): a write cut off by a fault whose key could not be released is retried successfully
 * once it lapses, so it bounds how long such a write takes.
 */
export const LOCK_SECONDS = 3;

/** A write interrupted by one fault is answered within this of its first request: the lock, recovery, one Retry-After. */
export const INTERRUPTED_OPERATION_MS = LOCK_SECONDS * 1000 + DATABASE_RECOVERY_MS + 1_000;
