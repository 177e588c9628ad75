// Every background task orderpay runs, in one list: a new one goes here. The purges delete what no
// request can need any more; webhook delivery claims its work under leases. All are safe in every
// process at once.
import { purgeExpiredOidcPayloads } from '../auth/oidc.adapter.ts';
import { purgeExpiredRevokedGrants } from '../auth/revoked-grants.store.ts';
import { purgeExpiredRevokedSubjects } from '../auth/revoked-subjects.store.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { purgeExpiredDpopProofs } from '../db/dpop-proofs.ts';
import { purgeRateLimitWindows } from '../db/rate-limits.ts';
import { purgeExpiredEvents } from '../events/events.service.ts';
import { purgeExpiredKeys } from '../idempotency/idempotency.store.ts';
import type { Job } from './scheduler.ts';

const EVERY_TEN_MINUTES = 10 * 60_000;
const EVERY_MINUTE = 60_000;

/** The webhook dispatcher (src/webhooks/dispatcher.ts), built by the composition root. */
interface WebhookDelivery {
  dispatchDue(): Promise<unknown>;
  stop(): Promise<void>;
}

/** The completer of payments and refunds (src/flows/complete-payments.ts), built by the composition root. */
interface PaymentCompletion {
  completeDue(): Promise<unknown>;
}

/** How often each process looks for payments and refunds that are due: a dead request's, or the processor's next question. */
const EVERY_SECOND = 1000;

/** The disabling of webhook endpoints whose API version was retired (src/webhooks/retirement.ts), built by the composition root. */
interface EndpointRetirement {
  disableRetiredEndpoints(): Promise<unknown>;
}

/** The jobs of the servers this process runs. */
export function backgroundJobs(
  db: Db,
  config: Pick<Config, 'servers' | 'events' | 'webhooks'>,
  workers: { webhooks?: WebhookDelivery; payments?: PaymentCompletion; endpointRetirement?: EndpointRetirement },
): Job[] {
  const { webhooks, payments, endpointRetirement } = workers;
  const { servers } = config;
  // Old rate-limit windows: both servers count in them (when no Redis is configured).
  // The jti of DPoP proofs no process could accept any more: both servers check proofs (the API,
  // /oauth/userinfo) when no Redis is configured.
  const jobs: Job[] = [
    { name: 'purge-rate-limit-windows', everyMs: EVERY_TEN_MINUTES, run: () => purgeRateLimitWindows(db) },
    { name: 'purge-dpop-proofs', everyMs: EVERY_MINUTE, run: () => purgeExpiredDpopProofs(db) },
  ];
  if (servers.resource) {
    jobs.push(
      { name: 'purge-idempotency-keys', everyMs: EVERY_TEN_MINUTES, run: () => purgeExpiredKeys(db) },
      // Events past ORDERPAY_EVENTS_RETENTION_DAYS, with their webhook deliveries.
      { name: 'purge-events', everyMs: EVERY_TEN_MINUTES, run: () => purgeExpiredEvents(db, config.events.retentionDays) },
    );
    if (payments) jobs.push({ name: 'complete-payments', everyMs: EVERY_SECOND, run: () => payments.completeDue() });
    // At an API version's sunset, its webhook endpoints are disabled within a second (no SQL before it).
    if (endpointRetirement) {
      jobs.push({
        name: 'disable-retired-webhook-endpoints',
        everyMs: EVERY_SECOND,
        run: () => endpointRetirement.disableRetiredEndpoints(),
      });
    }
    // The resource server's events are delivered by the processes that run it.
    if (webhooks) {
      jobs.push({
        name: 'deliver-webhooks',
        everyMs: config.webhooks.pollIntervalMs,
        run: () => webhooks.dispatchDue(),
        stop: () => webhooks.stop(),
      });
    }
  }
  if (servers.authorization) {
    // Expired codes, tokens and sessions; grant and subject revocations no token can need.
    jobs.push(
      { name: 'purge-oidc-payloads', everyMs: EVERY_TEN_MINUTES, run: () => purgeExpiredOidcPayloads(db) },
      { name: 'purge-revoked-grants', everyMs: EVERY_TEN_MINUTES, run: () => purgeExpiredRevokedGrants(db) },
      { name: 'purge-revoked-subjects', everyMs: EVERY_TEN_MINUTES, run: () => purgeExpiredRevokedSubjects(db) },
    );
  }
  return jobs;
}
