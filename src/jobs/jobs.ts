// Every background task orderpay runs, in one list: a new one goes here. Each deletes what no
// request can need any more; all are idempotent, so every process may run them.
import { purgeExpiredOidcPayloads } from '../auth/oidc.adapter.ts';
import { purgeExpiredRevokedGrants } from '../auth/revoked-grants.store.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { purgeRateLimitWindows } from '../db/rate-limits.ts';
import { purgeExpiredEvents } from '../events/events.service.ts';
import { purgeExpiredKeys } from '../http/idempotency/idempotency.store.ts';
import type { Job } from './scheduler.ts';

const EVERY_TEN_MINUTES = 10 * 60_000;

/** The jobs of the servers this process runs. */
export function backgroundJobs(db: Db, config: Pick<Config, 'servers' | 'events'>): Job[] {
  const { servers } = config;
  // Old rate-limit windows: both servers count in them (when no Redis is configured).
  const jobs: Job[] = [{ name: 'purge-rate-limit-windows', everyMs: EVERY_TEN_MINUTES, run: () => purgeRateLimitWindows(db) }];
  if (servers.resource) {
    jobs.push(
      { name: 'purge-idempotency-keys', everyMs: EVERY_TEN_MINUTES, run: () => purgeExpiredKeys(db) },
      // Events past ORDERPAY_EVENTS_RETENTION_DAYS, with their webhook deliveries.
      { name: 'purge-events', everyMs: EVERY_TEN_MINUTES, run: () => purgeExpiredEvents(db, config.events.retentionDays) },
    );
  }
  if (servers.authorization) {
    // Expired codes, tokens and sessions; grant revocations no token can need.
    jobs.push(
      { name: 'purge-oidc-payloads', everyMs: EVERY_TEN_MINUTES, run: () => purgeExpiredOidcPayloads(db) },
      { name: 'purge-revoked-grants', everyMs: EVERY_TEN_MINUTES, run: () => purgeExpiredRevokedGrants(db) },
    );
  }
  return jobs;
}
