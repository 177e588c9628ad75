// What an attempt to deliver a webhook means, as pure decisions (docs/webhooks.md "Delivery"):
// which answers are a success, when a failed delivery is tried again (the retry schedule, with
// jitter), when it has failed for good, and when an endpoint that fails everything is disabled.

/** An attempt gets this long, connecting included, to answer with a 2xx. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** Each wait of the schedule is stretched or shrunk by up to this fraction, at random. */
export const RETRY_JITTER = 0.1;

/** An endpoint whose every attempt has failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 60 * 60_000;

/** Bodies larger than this are not sent: the delivery fails at once (no retry could help). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/** Standard Webhooks: any 2xx is a success; a redirect, like any other status, is a failure. */
export function isSuccessStatus(statusCode: number | undefined): boolean {
  return statusCode !== undefined && statusCode >= 200 && statusCode <= 299;
}

/**
 * How long to wait before the next attempt, once `attempts` attempts have failed: the schedule's
 * entry for that retry (seconds) ± RETRY_JITTER, so that the deliveries an outage made fail
 * together do not all come back at once. Undefined when the schedule is used up.
 */
export function retryDelayMs(schedule: readonly number[], attempts: number, random: () => number = Math.random): number | undefined {
  const seconds = schedule[attempts - 1];
  if (seconds === undefined) return undefined;
  return Math.round(seconds * 1000 * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}

/** What an attempt's result makes of its delivery. */
export type DeliveryVerdict = { state: 'succeeded' } | { state: 'pending'; retryInMs: number } | { state: 'failed' };

export interface AttemptResult {
  /** The response's status, when one came in time. */
  statusCode?: number;
  /** No later attempt could succeed (the body is too large to send). */
  permanent?: boolean;
}

/** Succeeded on a 2xx; otherwise tried again on the schedule, or failed once it is used up. */
export function judgeAttempt(
  result: AttemptResult,
  attempts: number,
  schedule: readonly number[],
  random: () => number = Math.random,
): DeliveryVerdict {
  if (isSuccessStatus(result.statusCode)) return { state: 'succeeded' };
  const retryInMs = result.permanent ? undefined : retryDelayMs(schedule, attempts, random);
  return retryInMs === undefined ? { state: 'failed' } : { state: 'pending', retryInMs };
}

/** An endpoint failing since failingSince (every attempt since then failed) is disabled at now. */
export function shouldDisableEndpoint(failingSince: string | null, now: Date): boolean {
  return failingSince !== null && now.getTime() - Date.parse(failingSince) >= DISABLE_AFTER_MS;
}
