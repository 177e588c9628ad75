// PostgreSQL's LISTEN/NOTIFY as a wake-up between processes: one process says "there is new work"
// on a channel, every process listening hears it. A hint, never the work itself: a notification
// lost (a listener reconnecting, a process starting) is made good by polling, and a listener polls
// once after every (re)connection. LISTEN holds its session, so it needs a direct connection to
// PostgreSQL: through a transaction-mode pooler the session is not ours (docs/deploy.md,
// "Connection poolers"); NOTIFY is a statement like any other and goes through either.
import pg from 'pg';
import type { Queryable } from './db.ts';

/** The part of a pino logger a listener writes to. */
interface ListenerLog {
  warn(object: object, message: string): void;
}

export interface NotificationListener {
  close(): Promise<void>;
}

/** The listening session's name in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'orderpay-listener';

const FIRST_RETRY_MS = 500;
/** How long close() waits for the listening session to end before cutting it. */
const CLOSE_WAIT_MS = 1_000;
const LAST_RETRY_MS = 30_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Listens on channel over a connection of its own to url, calling onWake for every notification
 * and once after each (re)connection. A lost connection is opened again with a growing pause.
 */
export function listenForNotifications(
  url: string,
  channel: string,
  onWake: () => void,
  options: { connectTimeoutMs: number; log: ListenerLog },
): NotificationListener {
  let closed = false;
  let client: pg.Client | undefined;
  let wakeClosed: () => void = () => undefined;
  const closing = new Promise<void>((resolve) => {
    wakeClosed = resolve;
  });

  /** Connects and listens; resolves when the connection ends. */
  async function session(): Promise<void> {
    const connection = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: options.connectTimeoutMs,
      // Tells this session from the pool's in pg_stat_activity (unless the URL or PGAPPNAME names it).
      ...(process.env.PGAPPNAME ? {} : { application_name: LISTENER_APPLICATION_NAME }),
    });
    client = connection;
    const ended = new Promise<void>((resolve) => {
      connection.once('end', resolve);
      connection.once('error', () => resolve());
    });
    connection.on('notification', (message) => {
      if (message.channel === channel) onWake();
    });
    await connection.connect();
    // The channel is a constant of this code, quoted as an identifier all the same.
    await connection.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    // Anything notified while no session listened is found by this one look.
    onWake();
    await Promise.race([ended, closing]);
    // close() ends the connection itself when it is the reason.
    if (!closed) await connection.end().catch(() => undefined);
  }

  const running = (async () => {
    let retryMs = FIRST_RETRY_MS;
    while (!closed) {
      const started = Date.now();
      try {
        await session();
      } catch (error) {
        if (!closed) options.log.warn({ err: error, channel }, 'listening for notifications failed: polling meanwhile, trying again');
      }
      if (closed) return;
      // A session that lasted resets the pause: only repeated quick failures back off.
      retryMs = Date.now() - started > LAST_RETRY_MS ? FIRST_RETRY_MS : Math.min(retryMs * 2, LAST_RETRY_MS);
      await Promise.race([pause(retryMs), closing]);
    }
  })();

  return {
    async close() {
      closed = true;
      wakeClosed();
      const connection = client;
      // Bounded: a connection still being opened (a server that does not answer) must not hold up a
      // shutdown; whatever is left then is cut, so that nothing keeps the process alive.
      const ended = Promise.all([connection?.end().catch(() => undefined), running]);
      if ((await Promise.race([ended.then(() => true), pause(CLOSE_WAIT_MS).then(() => false)])) === false) {
        (connection as unknown as { connection?: { stream?: { destroy(): void } } } | undefined)?.connection?.stream?.destroy();
      }
    },
  };
}

/**
 * NOTIFY on channel, at most one in flight and at most one per intervalMs per process however
 * often it is asked: a burst of commits costs one statement. Outside the transaction that made
 * the work (after its COMMIT): a NOTIFY inside it would take PostgreSQL's cluster-wide notify lock
 * at commit and serialise every writing transaction behind it.
 */
export function batchedNotifier(
  db: Queryable,
  channel: string,
  intervalMs: number,
  log: ListenerLog,
): { notify(): void; close(): Promise<void> } {
  let wanted = false;
  let running: Promise<void> | undefined;
  let closed = false;

  async function drain(): Promise<void> {
    while (wanted && !closed) {
      wanted = false;
      const started = Date.now();
      try {
        await db.query("SELECT pg_notify($1, '')", [channel]);
      } catch (error) {
        log.warn({ err: error, channel }, 'notifying the other processes failed: they find the work when they next poll');
      }
      const rest = intervalMs - (Date.now() - started);
      if (rest > 0) await pause(rest);
    }
  }

  function notify(): void {
    wanted = true;
    if (closed || running) return;
    running = drain().finally(() => {
      running = undefined;
      // Asked for between the last look and this moment.
      if (wanted) notify();
    });
  }

  return {
    notify,
    async close() {
      closed = true;
      await running;
    },
  };
}
