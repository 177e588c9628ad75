// When the dispatcher looks for work (docs/webhooks.md "Delivery", record 0120): at once when a
// transaction of this process commits events (src/db/outbox.ts), when another process says it did
// (PostgreSQL NOTIFY, heard on a direct connection: LISTEN needs its own session, which a
// transaction-mode pooler does not give), and every ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS whatever
// happens (retries that come due, a notification lost, a pooler without a direct URL).
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { batchedNotifier, listenForNotifications } from '../db/notifications.ts';
import { onEventsCommitted } from '../db/outbox.ts';

/** The channel every orderpay process of a database listens on. */
export const DELIVERIES_CHANNEL = 'orderpay_webhook_deliveries';
/** A process notifies the others at most this often: a burst of payments costs one NOTIFY per interval. */
const NOTIFY_INTERVAL_MS = 20;

interface WakeUpLog {
  warn(object: object, message: string): void;
}

export interface WakeUps {
  close(): Promise<void>;
}

/** Where this process can LISTEN: a direct connection, never through a transaction-mode pooler. */
export function listenUrl(config: Pick<Config, 'databaseUrl' | 'db'>): string | undefined {
  if (config.databaseUrl === undefined) return undefined;
  if (config.db.directUrl !== undefined) return config.db.directUrl;
  return config.db.pooler === 'none' ? config.databaseUrl : undefined;
}

/** Calls wake whenever there may be new deliveries: events committed here or, on PostgreSQL, anywhere. */
export function startWakeUps(db: Db, config: Pick<Config, 'databaseUrl' | 'db'>, wake: () => void, log: WakeUpLog): WakeUps {
  // The embedded database serves one process: its own commits are all there is to hear.
  const notifier = db.kind === 'postgres' ? batchedNotifier(db, DELIVERIES_CHANNEL, NOTIFY_INTERVAL_MS, log) : undefined;
  const stopHearing = onEventsCommitted(() => {
    wake();
    notifier?.notify();
  });
  const url = db.kind === 'postgres' ? listenUrl(config) : undefined;
  const listener =
    url === undefined
      ? undefined
      : listenForNotifications(url, DELIVERIES_CHANNEL, wake, { connectTimeoutMs: config.db.connectTimeoutMs, log });
  return {
    async close() {
      stopHearing();
      await Promise.all([notifier?.close(), listener?.close()]);
    },
  };
}
