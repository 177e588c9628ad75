// The webhook delivery engine (docs/webhooks.md "Delivery"): on each tick it claims the deliveries
// that are due, as many as it has room for, in one short transaction that leases them; sends each
// outside any transaction; and records the attempt and its outcome in a second one. A process that
// dies between the two leaves the lease to run out: the delivery is claimed and sent again (at
// least once, with the same webhook-id). Bounded: MAX_IN_FLIGHT attempts per process, and
// MAX_IN_FLIGHT_PER_ENDPOINT per endpoint across every process, so a slow or dead endpoint holds
// up only its own deliveries.
import type { Db, Queryable } from '../db/db.ts';
import { recordEvent } from '../events/events.store.ts';
import { ATTEMPT_TIMEOUT_MS, type DeliveryVerdict, judgeAttempt, MAX_PAYLOAD_BYTES, shouldDisableEndpoint } from './deliveries.rules.ts';
import {
  type ClaimedDelivery,
  disableEndpoint,
  insertAttempt,
  leaseDueDeliveries,
  lockEndpointsWithDueDeliveries,
  markEndpointFailing,
  markEndpointSucceeding,
  recordDeliveryOutcome,
} from './deliveries.store.ts';
import type { SecretBox } from './secrets.ts';
import { type SendResult, sendWebhook } from './sender.ts';
import { webhookHeaders } from './signature.ts';

/** Attempts in flight in one process. */
const MAX_IN_FLIGHT = 16;
/** Attempts in flight to one endpoint, across every process (unexpired leases). */
const MAX_IN_FLIGHT_PER_ENDPOINT = 4;
/** A claim holds its delivery this long: well beyond an attempt, so only a dead process loses it. */
const LEASE_MS = 60_000;
/** Recording an attempt is tried this many times (the database may be restarting) before its lease is left to run out. */
const RECORD_TRIES = 3;
const RECORD_RETRY_PAUSE_MS = 1_000;
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

/** The part of a pino logger the dispatcher writes to. Never given a secret, a URL or a body. */
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
  /** config.webhooks.retryScheduleSeconds. */
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

  /** The attempt and its outcome, in one transaction; the endpoint's health with them. */
  async function recordAttempt(
    tx: Queryable,
    delivery: ClaimedDelivery,
    result: SendResult & { permanent?: boolean },
    verdict: DeliveryVerdict,
  ): Promise<void> {
    await insertAttempt(tx, delivery.id, result);
    await recordDeliveryOutcome(tx, delivery, verdict);
    if (verdict.state === 'succeeded') return markEndpointSucceeding(tx, delivery.endpoint.id);
    // A body too large to send says nothing of the endpoint.
    if (result.permanent) return;
    const { failingSince, now } = await markEndpointFailing(tx, delivery.endpoint.id);
    if (!shouldDisableEndpoint(failingSince, new Date(now))) return;
    const disabled = await disableEndpoint(tx, delivery.endpoint.id);
    if (!disabled) return;
    // Disabled first: the event goes to every other endpoint subscribed, not to this one.
    await recordEvent(tx, 'webhook_endpoint.disabled', disabled);
    log.warn({ endpointId: disabled.id, failingSince }, 'webhook endpoint disabled: every attempt to it has failed for 5 days');
  }

  async function record(delivery: ClaimedDelivery, result: SendResult, verdict: DeliveryVerdict): Promise<boolean> {
    for (let tries = 1; ; tries++) {
      try {
        await db.transaction((tx) => recordAttempt(tx, delivery, result, verdict));
        return true;
      } catch (error) {
        if (stopping || tries >= RECORD_TRIES) {
          log.warn(
            { err: error, deliveryId: delivery.id, eventId: delivery.event.id },
            'webhook attempt not recorded: the delivery is sent again when its lease runs out',
          );
          return false;
        }
        await pause(RECORD_RETRY_PAUSE_MS * tries);
      }
    }
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    const result = await send(delivery);
    await failpoint?.('webhooks.before-record');
    const verdict = judgeAttempt(result, delivery.attempts, options.retryScheduleSeconds);
    log.debug(
      {
        deliveryId: delivery.id,
        endpointId: delivery.endpoint.id,
        eventId: delivery.event.id,
        attempt: delivery.attempts,
        statusCode: result.statusCode,
        error: result.error,
        durationMs: result.durationMs,
        state: verdict.state,
      },
      'webhook attempt',
    );
    if (await record(delivery, result, verdict)) {
      options.onAttempt?.(verdict.state === 'pending' ? 'retrying' : verdict.state);
    }
  }

  return {
    async dispatchDue() {
      const room = MAX_IN_FLIGHT - inFlight.size;
      if (stopping || room <= 0) return 0;
      const claimed = await db.transaction(async (tx) => {
        const endpointIds = await lockEndpointsWithDueDeliveries(tx, room, MAX_IN_FLIGHT_PER_ENDPOINT);
        if (endpointIds.length === 0) return [];
        return leaseDueDeliveries(tx, endpointIds, { limit: room, perEndpoint: MAX_IN_FLIGHT_PER_ENDPOINT, leaseMs: LEASE_MS });
      });
      for (const delivery of claimed) {
        const running = attempt(delivery).catch((error: unknown) =>
          log.warn(
            { err: error, deliveryId: delivery.id },
            'webhook attempt abandoned: the delivery is sent again when its lease runs out',
          ),
        );
        inFlight.add(running);
        void running.finally(() => inFlight.delete(running));
      }
      return claimed.length;
    },
    async stop() {
      stopping = true;
      await Promise.race([Promise.all(inFlight), pause(attemptTimeoutMs)]);
    },
  };
}
