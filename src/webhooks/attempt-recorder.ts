// Recording a webhook attempt (docs/webhooks.md "Delivery"): the attempt, what it made of its
// delivery and the endpoint's health, in one transaction, the answer made text the log can hold
// (deliveries.rules.ts attemptRecord). When that still fails, for any reason but an unreachable
// database, the attempt is recorded as failed without its answer: the schedule goes on, rather than
// the lease running out and the delivery being sent again. Only an unreachable database leaves an
// attempt to its lease; the next claim counts it lost (deliveries.store.ts leaseDueDeliveries).
import type { Db, Queryable } from '../db/db.ts';
import { databaseFailure } from '../db/sqlstate.ts';
import { recordEvent } from '../events/events.store.ts';
import { type AttemptRecord, attemptRecord, type DeliveryVerdict, judgeAttempt, shouldDisableEndpoint } from './deliveries.rules.ts';
import {
  type ClaimedDelivery,
  disableEndpoint,
  insertAttempt,
  markEndpointFailing,
  markEndpointSucceeding,
  recordDeliveryOutcome,
} from './deliveries.store.ts';
import type { SendResult } from './sender.ts';

/** Recording is tried this many times while the database is unreachable (it may be restarting) before the attempt is left to its lease. */
const RECORD_TRIES = 3;
const RECORD_RETRY_PAUSE_MS = 1_000;

/** What the log says of an attempt whose answer could not be recorded. */
const NOT_RECORDED = 'the answer could not be recorded (see the server log): counted as a failed attempt';

/** What an attempt came to, once recorded. */
export interface RecordedAttempt {
  record: AttemptRecord;
  verdict: DeliveryVerdict;
}

const isUnreachable = (error: unknown) => databaseFailure(error)?.code === 'SERVICE_UNAVAILABLE';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export interface AttemptRecorderOptions {
  db: Db;
  /** The dispatcher's log (never given a secret, a URL or a body). */
  log: { warn(object: object, message: string): void; error(object: object, message: string): void };
  retryScheduleSeconds: readonly number[];
  /** The dispatcher is stopping: no pause to wait for the database. */
  isStopping(): boolean;
}

/**
 * Records an attempt's result; resolves with what was recorded, or undefined when nothing could be
 * (the lease runs out). Never throws.
 */
export type AttemptRecorder = (
  delivery: ClaimedDelivery,
  result: SendResult & { permanent?: boolean },
) => Promise<RecordedAttempt | undefined>;

export function createAttemptRecorder({ db, log, retryScheduleSeconds, isStopping }: AttemptRecorderOptions): AttemptRecorder {
  /** The attempt and its outcome, in one transaction; the endpoint's health with them. */
  async function recordAttempt(
    tx: Queryable,
    delivery: ClaimedDelivery,
    { record, verdict }: RecordedAttempt,
    permanent: boolean,
  ): Promise<void> {
    await insertAttempt(tx, delivery.id, record);
    await recordDeliveryOutcome(tx, delivery, verdict);
    if (verdict.state === 'succeeded') return markEndpointSucceeding(tx, delivery.endpoint.id);
    // A body too large to send says nothing of the endpoint.
    if (permanent) return;
    const { failingSince, now } = await markEndpointFailing(tx, delivery.endpoint.id);
    if (!shouldDisableEndpoint(failingSince, new Date(now))) return;
    const disabled = await disableEndpoint(tx, delivery.endpoint.id);
    if (!disabled) return;
    // Disabled first: the event goes to every other endpoint subscribed, not to this one.
    await recordEvent(tx, 'webhook_endpoint.disabled', disabled);
    log.warn({ endpointId: disabled.id, failingSince }, 'webhook endpoint disabled: every attempt to it has failed for 5 days');
  }

  /** Commits `write`, tried again while the database is unreachable; any other failure is thrown at once (it would recur). */
  async function commit(write: (tx: Queryable) => Promise<void>): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        return await db.transaction(write);
      } catch (error) {
        if (!isUnreachable(error) || isStopping() || tries >= RECORD_TRIES) throw error;
        await pause(RECORD_RETRY_PAUSE_MS * tries);
      }
    }
  }

  /** The attempt, or failing that the attempt as failed without its answer. */
  return async function recordAttemptResult(delivery, result) {
    const ids = { deliveryId: delivery.id, eventId: delivery.event.id, endpointId: delivery.endpoint.id };
    const attempt = {
      record: attemptRecord(result),
      verdict: judgeAttempt(result, delivery.attempts, retryScheduleSeconds),
    };
    try {
      await commit((tx) => recordAttempt(tx, delivery, attempt, result.permanent ?? false));
      return attempt;
    } catch (error) {
      if (isUnreachable(error)) return leftToLease(error);
      log.error({ err: error, ...ids }, 'webhook attempt could not be recorded: recorded as failed, without its answer');
    }
    const failed = {
      record: { durationMs: attempt.record.durationMs, error: NOT_RECORDED },
      verdict: judgeAttempt({ permanent: result.permanent }, delivery.attempts, retryScheduleSeconds),
    };
    try {
      await commit(async (tx) => {
        await insertAttempt(tx, delivery.id, failed.record);
        await recordDeliveryOutcome(tx, delivery, failed.verdict);
      });
      return failed;
    } catch (error) {
      return leftToLease(error);
    }

    function leftToLease(error: unknown): undefined {
      log.warn(
        { err: error, ...ids },
        'webhook attempt not recorded: the delivery is sent again when its lease runs out, unless that was its last',
      );
      return undefined;
    }
  };
}
