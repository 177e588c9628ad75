// The webhook delivery engine (docs/webhooks.md "Delivery"): on each tick it claims the deliveries
// that are due, as many as it has room for, in one short transaction that leases them; sends each
// outside any transaction; and records the attempt and its outcome in a second one
// (attempt-recorder.ts: whatever the receiver answered can be recorded, and an attempt that still
// cannot be is recorded as failed). A process that dies between the two leaves the lease to run
// out: the delivery is claimed and sent again (at least once, with the same webhook-id), never more
// often than the retry schedule says. Bounded: MAX_IN_FLIGHT attempts per process, and
// MAX_IN_FLIGHT_PER_ENDPOINT per endpoint across every process, so a slow or dead endpoint holds
// up only its own deliveries. Every failed attempt is one warn line.
import type { Db } from '../db/db.ts';
import { createAttemptRecorder, type RecordedAttempt } from './attempt-recorder.ts';
import { ATTEMPT_TIMEOUT_MS, failureReason, LOGGED_EXCERPT_LENGTH, MAX_PAYLOAD_BYTES, maxAttempts } from './deliveries.rules.ts';
import { type ClaimedDelivery, leaseDueDeliveries, lockEndpointsWithDueDeliveries } from './deliveries.store.ts';
import type { SecretBox } from './secrets.ts';
import { type SendResult, sendWebhook } from './sender.ts';
import { webhookHeaders } from './signature.ts';

/** Attempts in flight in one process. */
const MAX_IN_FLIGHT = 16;
/** Attempts in flight to one endpoint, across every process (unexpired leases). */
const MAX_IN_FLIGHT_PER_ENDPOINT = 4;
/** A claim holds its delivery this long: well beyond an attempt, so only a dead process loses it. */
const LEASE_MS = 60_000;
const USER_AGENT = 'orderpay-webhooks/1';

/**
 * Test-only points where a delivery can be made to fail (the crash tests: src/main.ts reads them
 * from ORDERPAY_FAILPOINTS under NODE_ENV=test, e.g. `webhooks.before-record=kill`):
 * - webhooks.before-send: the delivery is claimed and leased, nothing sent yet. Killed here, the
 *   delivery is sent once the lease (60 s) has run out.
 * - webhooks.before-record: the endpoint has answered, the attempt is not recorded. Killed here,
 *   the delivery is sent again once the lease has run out: twice in all, with the same webhook-id.
 */
export type WebhookFailpoint = (name: 'webhooks.before-send' | 'webhooks.before-record') => void | Promise<void>;

/** What an attempt made of its delivery, for the metrics. */
export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed';

/** The part of a pino logger the dispatcher writes to. Never given a secret, a URL, or more of a body than an excerpt. */
interface DispatcherLog {
  debug(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface WebhookDispatcherOptions {
  db: Db;
  secrets: SecretBox;
  /**
   * An event's envelope as GET /events shows it in an API version (events.representation with the
   * renderer of src/event-objects.ts, passed by the composition root): the body of a delivery.
   */
  renderEvent(event: ClaimedDelivery['event'], apiVersion: number): object;
  /** config.webhooks.retryScheduleSeconds: a delivery is sent at most once more than it has entries. */
  retryScheduleSeconds: readonly number[];
  /** config.webhooks.allowPrivate. */
  allowPrivate: boolean;
  log: DispatcherLog;
  /** The deadline of an attempt (default ATTEMPT_TIMEOUT_MS, 10 s; tests shorten it). */
  attemptTimeoutMs?: number;
  failpoint?: WebhookFailpoint;
  onAttempt?(outcome: AttemptOutcome): void;
}

export interface WebhookDispatcher {
  /**
   * One tick: claims the due deliveries there is room for and starts their attempts. Resolves
   * once they are claimed, not sent: a slow endpoint never holds up the next tick.
   */
  dispatchDue(): Promise<number>;
  /**
   * Claims nothing more, and waits for the attempts in flight to be recorded, at most the attempt
   * timeout: one still unrecorded then is left to its lease.
   */
  stop(): Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const { db, log, failpoint } = options;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  const record = createAttemptRecorder({
    db,
    log,
    retryScheduleSeconds: options.retryScheduleSeconds,
    isStopping: () => stopping,
  });

  /** The body: the event's envelope (as GET /events has it), its object in the endpoint's API version. */
  function renderBody({ event, endpoint }: ClaimedDelivery): string {
    return JSON.stringify(options.renderEvent(event, endpoint.apiVersion));
  }

  async function send(delivery: ClaimedDelivery): Promise<SendResult & { permanent?: boolean }> {
    let body: string;
    let secrets: string[];
    try {
      body = renderBody(delivery);
      const sealed = [delivery.endpoint.secret, ...(delivery.endpoint.previousSecret ? [delivery.endpoint.previousSecret] : [])];
      secrets = await Promise.all(sealed.map((secret) => options.secrets.open(secret)));
    } catch (error) {
      log.error({ err: error, deliveryId: delivery.id, eventId: delivery.event.id }, 'webhook delivery could not be prepared');
      return { error: 'the delivery could not be prepared (see the server log)', durationMs: 0 };
    }
    const size = Buffer.byteLength(body);
    if (size > MAX_PAYLOAD_BYTES) {
      return { error: `the body (${size} bytes) is larger than ${MAX_PAYLOAD_BYTES} bytes: not sent`, durationMs: 0, permanent: true };
    }
    await failpoint?.('webhooks.before-send');
    const message = { id: delivery.event.id, timestamp: Math.floor(Date.now() / 1000), body };
    return sendWebhook({
      url: delivery.endpoint.url,
      headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...webhookHeaders(message, secrets) },
      body,
      timeoutMs: attemptTimeoutMs,
      allowPrivate: options.allowPrivate,
    });
  }

  /** One line per attempt: a failure at warn (what an operator must see), a success at debug. */
  function logAttempt(delivery: ClaimedDelivery, { record, verdict }: RecordedAttempt): void {
    const fields = {
      endpointId: delivery.endpoint.id,
      eventId: delivery.event.id,
      deliveryId: delivery.id,
      attempt: delivery.attempts,
      statusCode: record.statusCode,
      durationMs: record.durationMs,
      state: verdict.state,
    };
    if (verdict.state === 'succeeded') {
      log.debug(fields, 'webhook attempt succeeded');
      return;
    }
    log.warn(
      {
        ...fields,
        reason: failureReason(record),
        responseExcerpt: record.responseBody?.slice(0, LOGGED_EXCERPT_LENGTH).toWellFormed(),
        retryInMs: verdict.state === 'pending' ? verdict.retryInMs : undefined,
      },
      verdict.state === 'pending' ? 'webhook attempt failed: retried later' : 'webhook attempt failed: the retry schedule is used up',
    );
  }

  /**
   * A claimed delivery whose last attempt was lost (its lease ran out unrecorded), or that is failed
   * unsent because the schedule is used up (by that lost attempt, or a schedule shortened since).
   */
  function logClaim(delivery: ClaimedDelivery): void {
    if (!delivery.lostAttempt && !delivery.usedUp) return;
    const fields = {
      endpointId: delivery.endpoint.id,
      eventId: delivery.event.id,
      deliveryId: delivery.id,
      attempt: delivery.usedUp ? delivery.attempts : delivery.attempts - 1,
      state: delivery.usedUp ? 'failed' : 'pending',
    };
    if (!delivery.lostAttempt) {
      log.warn({ ...fields, reason: 'the retry schedule is used up' }, 'webhook delivery failed: the retry schedule is used up');
      return;
    }
    log.warn(
      { ...fields, reason: 'no outcome recorded before its lease ran out' },
      delivery.usedUp ? 'webhook attempt lost: the retry schedule is used up' : 'webhook attempt lost: sent again',
    );
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    const result = await send(delivery);
    await failpoint?.('webhooks.before-record');
    const recorded = await record(delivery, result);
    if (!recorded) return;
    logAttempt(delivery, recorded);
    options.onAttempt?.(recorded.verdict.state === 'pending' ? 'retrying' : recorded.verdict.state);
  }

  return {
    async dispatchDue() {
      const room = MAX_IN_FLIGHT - inFlight.size;
      if (stopping || room <= 0) return 0;
      const claimed = await db.transaction(async (tx) => {
        const endpointIds = await lockEndpointsWithDueDeliveries(tx, room, MAX_IN_FLIGHT_PER_ENDPOINT);
        if (endpointIds.length === 0) return [];
        return leaseDueDeliveries(tx, endpointIds, {
          limit: room,
          perEndpoint: MAX_IN_FLIGHT_PER_ENDPOINT,
          leaseMs: LEASE_MS,
          maxAttempts: maxAttempts(options.retryScheduleSeconds),
        });
      });
      for (const delivery of claimed) {
        logClaim(delivery);
        if (delivery.usedUp) continue;
        const running = attempt(delivery).catch((error: unknown) =>
          log.warn(
            { err: error, deliveryId: delivery.id },
            'webhook attempt abandoned: the delivery is sent again when its lease runs out',
          ),
        );
        inFlight.add(running);
        void running.finally(() => inFlight.delete(running));
      }
      return claimed.filter((delivery) => !delivery.usedUp).length;
    },
    async stop() {
      stopping = true;
      await Promise.race([Promise.all(inFlight), pause(attemptTimeoutMs)]);
    },
  };
}
