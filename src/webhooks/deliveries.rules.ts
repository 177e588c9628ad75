// What an attempt to deliver a webhook means, as pure decisions (docs/webhooks.md "Delivery"):
// which answers are a success, when a failed delivery is tried again (the retry schedule, with
// jitter), when it has failed for good, when an endpoint that fails everything is disabled, and
// what the delivery log keeps of whatever a receiver sent back.
import { MAX_ERROR_SHOWN } from './endpoints.rules.ts';

/** An attempt gets this long, connecting included, to answer with a 2xx. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** The shortest an endpoint's attempt timeout shrinks to (or ATTEMPT_TIMEOUT_MS's configured value, when shorter). */
export const MIN_ATTEMPT_TIMEOUT_MS = 2_000;

/**
 * An endpoint's attempt timeout: the configured one, halved for each attempt in a row that timed
 * out, down to MIN_ATTEMPT_TIMEOUT_MS. A receiver that hangs costs its own slot for less and
 * less; one answer in time (any status) restores the whole timeout.
 */
export function endpointAttemptTimeoutMs(configuredMs: number, consecutiveTimeouts: number): number {
  const floor = Math.min(configuredMs, MIN_ATTEMPT_TIMEOUT_MS);
  return Math.max(floor, Math.round(configuredMs / 2 ** Math.min(consecutiveTimeouts, 16)));
}

/**
 * The circuit breaker of an endpoint (record 0120): once THRESHOLD attempts to it have failed in a
 * row it gets none for BASE_PAUSE_MS, then one (a probe); each further failure doubles the pause,
 * up to MAX_PAUSE_MS. Its deliveries wait, due, without using up their attempts; one success
 * closes the circuit.
 */
export const CIRCUIT = { threshold: 5, basePauseMs: 5_000, maxPauseMs: 5 * 60_000 } as const;

/** How long an endpoint gets no attempt after `failures` in a row (0: the circuit is closed). */
export function circuitPauseMs(failures: number, circuit: typeof CIRCUIT = CIRCUIT): number {
  if (failures < circuit.threshold) return 0;
  return Math.min(circuit.basePauseMs * 2 ** (failures - circuit.threshold), circuit.maxPauseMs);
}

/** How the endpoint stood when an attempt to it was claimed, for the metrics: every attempt since its last success failed, and how many. */
export type EndpointState = 'healthy' | 'failing' | 'probing';

export function endpointState(consecutiveFailures: number, circuit: typeof CIRCUIT = CIRCUIT): EndpointState {
  if (consecutiveFailures === 0) return 'healthy';
  return consecutiveFailures < circuit.threshold ? 'failing' : 'probing';
}

/** Each wait of the schedule is stretched or shrunk by up to this fraction, at random. */
export const RETRY_JITTER = 0.1;

/** An endpoint whose every attempt has failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 60 * 60_000;

/** Bodies larger than this are not sent: the delivery fails at once (no retry could help). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/** The replacement of U+0000, which PostgreSQL's text cannot hold: U+2400 SYMBOL FOR NULL (␀). */
const NUL_SHOWN_AS = '\u2400';

/** Characters of a response body a log line quotes. */
export const LOGGED_EXCERPT_LENGTH = 100;

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

/** The most attempts a delivery gets: the first, and one per entry of the schedule. */
export function maxAttempts(schedule: readonly number[]): number {
  return schedule.length + 1;
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

/** An attempt as it came back: the receiver's status and the start of its body, unchecked. */
export interface ReceivedAttempt {
  statusCode?: number;
  /** The first bytes of the response body, as received. */
  responseBody?: Uint8Array;
  error?: string;
  durationMs: number;
}

/** What the delivery log keeps of an attempt: values the database holds whatever the receiver sent. */
export interface AttemptRecord {
  /** An HTTP status (100–599); undefined when none came, or not one (error says so). */
  statusCode?: number;
  durationMs: number;
  error?: string;
  responseBody?: string;
}

/**
 * Text a PostgreSQL `text` column holds: U+0000 shown as ␀, lone surrogates as U+FFFD (invalid UTF-8
 * never reaches here: decoding replaced it), at most maxLength characters.
 */
function storableText(text: string, maxLength = text.length): string {
  return text.slice(0, maxLength).replaceAll('\u0000', NUL_SHOWN_AS).toWellFormed();
}

/**
 * The delivery log's record of an attempt (docs/webhooks.md "Delivery"). The body is decoded as UTF-8
 * (WHATWG: each byte that is not UTF-8 becomes U+FFFD, a character cut at the end too) and a NUL is
 * shown as ␀; a status outside 100–599 is no HTTP status (RFC 9110 §15: handled as a 5xx), so it is
 * kept in the error, not as a status.
 */
export function attemptRecord(received: ReceivedAttempt): AttemptRecord {
  const { statusCode, responseBody, durationMs } = received;
  const isHttpStatus = statusCode === undefined || (Number.isInteger(statusCode) && statusCode >= 100 && statusCode <= 599);
  const error = isHttpStatus ? received.error : `answered with status ${statusCode}, which is not an HTTP status (100-599)`;
  return {
    statusCode: isHttpStatus ? statusCode : undefined,
    durationMs: Math.max(0, Math.round(durationMs)),
    error: error === undefined ? undefined : storableText(error, MAX_ERROR_SHOWN),
    responseBody: responseBody === undefined ? undefined : storableText(new TextDecoder('utf-8', { ignoreBOM: true }).decode(responseBody)),
  };
}

/** Why an attempt failed, in a word for the log: the error, or the status that was not a 2xx. */
export function failureReason(record: AttemptRecord): string {
  return record.error ?? `HTTP ${record.statusCode}`;
}
