// The webhook delivery engine (docs/webhooks.md "Delivery", record 0120): it claims the deliveries
// that are due, as many as it has room for, in one short transaction that leases them; sends each
// outside any transaction; and records the attempt and its outcome in a second one
// (attempt-recorder.ts: whatever the receiver answered can be recorded, and an attempt that still
// cannot be is recorded as failed). A process that dies between the two leaves the lease to run
// out: the delivery is claimed and sent again (at least once, with the same webhook-id), never more
// often than the retry schedule says.
// It looks for work when told there may be some (wake: events committed, here or in another
// process, src/webhooks/wake-ups.ts), on every poll, and again as soon as an attempt ends while the
// last claim filled all the room it had: a backlog drains as fast as the receivers answer.
// Bounded: MAX_IN_FLIGHT attempts per process, MAX_IN_FLIGHT_PER_ENDPOINT per endpoint across every
// process, one at a time to an endpoint whose last attempt failed (and none while its circuit is
// open), and at most FAILING_SLOTS of a process's attempts to such endpoints: an endpoint that
// hangs or fails costs its own deliveries time, never a healthy endpoint its slots. Every failed
// attempt is one warn line.
import type { Db } from '../db/db.ts';
import { createAttemptRecorder, type RecordedAttempt } from './attempt-recorder.ts';
import {
  ATTEMPT_TIMEOUT_MS,
  endpointAttemptTimeoutMs,
  type EndpointState,
  endpointState,
  failureReason,
  LOGGED_EXCERPT_LENGTH,
  MAX_PAYLOAD_BYTES,
  maxAttempts,
} from './deliveries.rules.ts';
import { type ClaimableEndpoint, type ClaimedDelivery, leaseDueDeliveries, lockEndpointsWithDueDeliveries } from './deliveries.store.ts';
import type { SecretBox } from './secrets.ts';
import { type SendResult, sendWebhook } from './sender.ts';
import { webhookHeaders } from './signature.ts';

/** Attempts in flight in one process. */
const MAX_IN_FLIGHT = 128;
/** Of those, attempts to endpoints whose last attempt failed: the rest are always there for healthy ones. */
const FAILING_SLOTS = 32;
/** Attempts in flight to one healthy endpoint, across every process (unexpired leases). */
const MAX_IN_FLIGHT_PER_ENDPOINT = 16;
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
  /** config.webhooks.maxRatePerEndpoint: deliveries claimed per endpoint per second, across every process. */
  maxRatePerEndpoint: number;
  log: DispatcherLog;
  /** The deadline of an attempt (default ATTEMPT_TIMEOUT_MS, 10 s; tests shorten it). */
  attemptTimeoutMs?: number;
  failpoint?: WebhookFailpoint;
  /** After each recorded attempt: what it made of its delivery, and how its endpoint stood when it was claimed. */
  onAttempt?(outcome: AttemptOutcome, endpoint: EndpointState): void;
}

export interface WebhookDispatcher {
  /**
   * One poll: claims the due deliveries there is room for and starts their attempts, and claims
   * again while each claim fills its room. Resolves once they are claimed, not sent: a slow
   * endpoint never holds up the next poll. Resolves with the number of attempts started.
   */
  dispatchDue(): Promise<number>;
  /** There may be new work (events committed): a poll now, or right after the one running. */
  wake(): void;
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
      timeoutMs: endpointAttemptTimeoutMs(attemptTimeoutMs, delivery.endpoint.consecutiveTimeouts),
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
    const outcome = recorded.verdict.state === 'pending' ? 'retrying' : recorded.verdict.state;
    options.onAttempt?.(outcome, endpointState(delivery.endpoint.consecutiveFailures));
  }

  let failingInFlight = 0;
  /** Set when there may be due deliveries not yet claimed: a wake, a poll, an attempt ended, or a claim that filled its room. */
  let moreDue = false;
  let claiming: Promise<number> | undefined;

  /** The endpoints of a claim: every healthy one, and failing ones while their share of the slots lasts. */
  function withinShares(endpoints: readonly ClaimableEndpoint[]): number[] {
    let failingRoom = FAILING_SLOTS - failingInFlight;
    return endpoints.filter((endpoint) => !endpoint.failing || failingRoom-- > 0).map((endpoint) => endpoint.id);
  }

  function start(delivery: ClaimedDelivery): void {
    const failing = delivery.endpoint.consecutiveFailures > 0;
    if (failing) failingInFlight++;
    const running = attempt(delivery).catch((error: unknown) =>
      log.warn({ err: error, deliveryId: delivery.id }, 'webhook attempt abandoned: the delivery is sent again when its lease runs out'),
    );
    inFlight.add(running);
    void running.finally(() => {
      inFlight.delete(running);
      if (failing) failingInFlight--;
      // A slot is free, and the endpoint may have more due than its cap let the claim take: look now, not at the next poll.
      wake();
    });
  }

  /** One claim of as many due deliveries as there is room for, their attempts started. Whether it filled its room. */
  async function claimOnce(): Promise<{ started: number; full: boolean }> {
    const room = MAX_IN_FLIGHT - inFlight.size;
    const claimed = await db.transaction(async (tx) => {
      const endpoints = await lockEndpointsWithDueDeliveries(tx, room, MAX_IN_FLIGHT_PER_ENDPOINT, options.maxRatePerEndpoint);
      const endpointIds = withinShares(endpoints);
      if (endpointIds.length === 0) return [];
      return leaseDueDeliveries(tx, endpointIds, {
        limit: room,
        perEndpoint: MAX_IN_FLIGHT_PER_ENDPOINT,
        maxRate: options.maxRatePerEndpoint,
        leaseMs: LEASE_MS,
        maxAttempts: maxAttempts(options.retryScheduleSeconds),
      });
    });
    let started = 0;
    for (const delivery of claimed) {
      logClaim(delivery);
      if (delivery.usedUp) continue;
      start(delivery);
      started++;
    }
    return { started, full: claimed.length >= room };
  }

  /** Claims while there may be more due and room to take it. */
  async function claimLoop(): Promise<number> {
    let started = 0;
    while (moreDue && !stopping && inFlight.size < MAX_IN_FLIGHT) {
      moreDue = false;
      const claim = await claimOnce();
      started += claim.started;
      if (claim.full) moreDue = true;
    }
    return started;
  }

  /** The claim loop, one at a time per process: a caller while it runs gets the running one (which sees moreDue). */
  function claimWhileDue(): Promise<number> {
    claiming ??= claimLoop().finally(() => {
      claiming = undefined;
    });
    return claiming;
  }

  function wake(): void {
    if (stopping) return;
    moreDue = true;
    void claimWhileDue().catch((error: unknown) =>
      log.warn({ err: error }, 'looking for webhook deliveries failed: the next poll looks again'),
    );
  }

  return {
    async dispatchDue() {
      if (stopping) return 0;
      moreDue = true;
      // A claim under way ends before this poll's: its count is not this poll's.
      if (claiming) await claiming.catch(() => undefined);
      return claimWhileDue();
    },
    wake,
    async stop() {
      stopping = true;
      await claiming?.catch(() => undefined);
      await Promise.race([Promise.all(inFlight), pause(attemptTimeoutMs)]);
    },
  };
}
