// Recording a webhook attempt (docs/webhooks.md "Delivery"): the attempt, what it made of its
// delivery and the endpoint's health, in one statement (one round trip: the dispatcher records
// hundreds per second), the answer made text the log can hold (deliveries.rules.ts attemptRecord).
// When that still fails, for any reason but an unreachable database, the attempt is recorded as
// failed without its answer: the schedule goes on, rather than the lease running out and the
// delivery being sent again. Only an unreachable database leaves an attempt to its lease; the next
// claim counts it lost (deliveries.store.ts leaseDueDeliveries). An endpoint failing for 5 days is
// disabled by a transaction after the statement (a process stopped between leaves it to the next
// failure).
import { SYSTEM_ACTOR } from '../core/actor.ts';
import type { Db } from '../db/db.ts';
import { databaseFailure } from '../db/sqlstate.ts';
import { recordEvent } from '../events/events.store.ts';
import {
  type AttemptRecord,
  attemptRecord,
  CIRCUIT,
  type DeliveryVerdict,
  judgeAttempt,
  shouldDisableEndpoint,
} from './deliveries.rules.ts';
import { type ClaimedDelivery, disableEndpoint, type EndpointEffect, recordAttemptOutcome } from './deliveries.store.ts';
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

const endpointDelivery = (delivery: ClaimedDelivery) => ({
  id: delivery.id,
  attempts: delivery.attempts,
  endpointId: delivery.endpoint.id,
});
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
  /** The attempt, its outcome and the endpoint's health; then, if it is failing for long enough, the endpoint disabled. */
  async function recordAttempt(
    delivery: ClaimedDelivery,
    { record, verdict }: RecordedAttempt,
    { permanent, timedOut }: { permanent?: boolean; timedOut?: boolean },
  ): Promise<void> {
    // A body too large to send says nothing of the endpoint.
    const effect: EndpointEffect =
      verdict.state === 'succeeded'
        ? { kind: 'succeeded' }
        : permanent
          ? { kind: 'none' }
          : { kind: 'failed', timedOut: timedOut === true };
    const { failure } = await retrying(() => recordAttemptOutcome(db, endpointDelivery(delivery), record, verdict, effect, CIRCUIT));
    if (!failure) return;
    if (failure.circuitOpenUntil !== null && failure.consecutiveFailures >= CIRCUIT.threshold) {
      log.warn(
        { endpointId: delivery.endpoint.id, consecutiveFailures: failure.consecutiveFailures, pausedUntil: failure.circuitOpenUntil },
        'webhook endpoint paused: its attempts failed in a row; one attempt when the pause ends',
      );
    }
    if (shouldDisableEndpoint(failure.failingSince, new Date(failure.now)))
      await disableFailingEndpoint(delivery.endpoint.id, failure.failingSince);
  }

  /** Disables the endpoint with its event; a failure is logged and left to the endpoint's next failed attempt. */
  async function disableFailingEndpoint(endpointId: number, failingSince: string | null): Promise<void> {
    try {
      const disabled = await db.transaction(async (tx) => {
        const endpoint = await disableEndpoint(tx, endpointId);
        // Disabled first: the event goes to every other endpoint subscribed, not to this one.
        if (endpoint) await recordEvent(tx, 'webhook_endpoint.disabled', endpoint, SYSTEM_ACTOR);
        return endpoint;
      });
      if (disabled) log.warn({ endpointId, failingSince }, 'webhook endpoint disabled: every attempt to it has failed for 5 days');
    } catch (error) {
      log.error({ err: error, endpointId }, 'webhook endpoint could not be disabled: tried again at its next failed attempt');
    }
  }

  /** Runs write, again while the database is unreachable; any other failure is thrown at once (it would recur). */
  async function retrying<T>(write: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await write();
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
      await recordAttempt(delivery, attempt, result);
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
      await retrying(async () => {
        await recordAttemptOutcome(db, endpointDelivery(delivery), failed.record, failed.verdict, { kind: 'none' }, CIRCUIT);
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
