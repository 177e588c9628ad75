// The delivery rules, pure: which answers succeed, the retry schedule with its jitter, when a
// delivery fails for good, when an endpoint failing everything is disabled, and what the delivery
// log keeps of an answer (text PostgreSQL holds, whatever bytes came).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import {
  attemptRecord,
  CIRCUIT,
  circuitPauseMs,
  DISABLE_AFTER_MS,
  endpointAttemptTimeoutMs,
  endpointState,
  MIN_ATTEMPT_TIMEOUT_MS,
  failureReason,
  isSuccessStatus,
  judgeAttempt,
  maxAttempts,
  RETRY_JITTER,
  retryDelayMs,
  shouldDisableEndpoint,
} from '../../src/webhooks/deliveries.rules.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const DEFAULT_SCHEDULE = loadConfig({ NODE_ENV: 'test' }).webhooks.retryScheduleSeconds;

describe('isSuccessStatus', () => {
  test('2xx only: a redirect, a client or server error, or no response at all is a failure', () => {
    for (const status of [200, 201, 202, 204, 299]) assert.equal(isSuccessStatus(status), true, String(status));
    for (const status of [100, 199, 300, 301, 302, 307, 308, 400, 404, 410, 429, 500, 503])
      assert.equal(isSuccessStatus(status), false, String(status));
    assert.equal(isSuccessStatus(undefined), false);
  });
});

describe('retryDelayMs', () => {
  test('the schedule entry of each retry, in seconds, jittered by at most ±10%', () => {
    const schedule = [5, 300, 1800];
    assert.equal(RETRY_JITTER, 0.1);
    // random() is in [0, 1): the lowest and (nearly) the highest draw, and the middle one.
    assert.equal(
      retryDelayMs(schedule, 1, () => 0),
      4500,
    );
    assert.equal(
      retryDelayMs(schedule, 1, () => 0.5),
      5000,
    );
    assert.equal(
      retryDelayMs(schedule, 1, () => 0.999999),
      5500,
    );
    assert.equal(
      retryDelayMs(schedule, 2, () => 0.5),
      300_000,
    );
    assert.equal(
      retryDelayMs(schedule, 3, () => 0),
      1_620_000,
    );
    assert.equal(
      retryDelayMs(schedule, 3, () => 0.999999),
      1_980_000,
    );
  });

  test('with Math.random, every delay stays within the bounds and they differ', () => {
    const delays = Array.from({ length: 200 }, () => retryDelayMs([100], 1)!);
    for (const delay of delays) assert.ok(delay >= 90_000 && delay <= 110_000, String(delay));
    assert.ok(new Set(delays).size > 50, 'jitter spreads the retries');
  });

  test('no retry once the schedule is used up', () => {
    assert.equal(retryDelayMs([5, 300], 3), undefined);
    assert.equal(retryDelayMs([], 1), undefined);
  });

  test('the default schedule: 9 retries, growing, over about three days', () => {
    assert.equal(DEFAULT_SCHEDULE.length, 9);
    for (let i = 1; i < DEFAULT_SCHEDULE.length; i++) assert.ok(DEFAULT_SCHEDULE[i]! >= DEFAULT_SCHEDULE[i - 1]!);
    const totalMs = DEFAULT_SCHEDULE.reduce((sum, seconds) => sum + seconds * 1000, 0);
    assert.ok(totalMs > 2.9 * DAY && totalMs < 3.1 * DAY, `${totalMs / DAY} days`);
  });
});

describe('judgeAttempt', () => {
  const schedule = [60, 600];
  const middle = () => 0.5;

  test('a 2xx succeeds, whichever attempt it is', () => {
    assert.deepEqual(judgeAttempt({ statusCode: 204 }, 1, schedule, middle), { state: 'succeeded' });
    assert.deepEqual(judgeAttempt({ statusCode: 200 }, 3, schedule, middle), { state: 'succeeded' });
  });

  test('a failure is retried on the schedule, then fails once it is used up (1 + retries attempts)', () => {
    assert.deepEqual(judgeAttempt({ statusCode: 500 }, 1, schedule, middle), { state: 'pending', retryInMs: 60_000 });
    assert.deepEqual(judgeAttempt({}, 2, schedule, middle), { state: 'pending', retryInMs: 600_000 });
    assert.deepEqual(judgeAttempt({ statusCode: 302 }, 3, schedule, middle), { state: 'failed' });
  });

  test('a permanent failure (a body too large to send) fails at once', () => {
    assert.deepEqual(judgeAttempt({ permanent: true }, 1, schedule, middle), { state: 'failed' });
  });

  test('maxAttempts: the first and one per retry, the attempt judgeAttempt fails', () => {
    assert.equal(maxAttempts(schedule), 3);
    assert.deepEqual(judgeAttempt({}, maxAttempts(schedule), schedule, middle), { state: 'failed' });
    assert.equal(maxAttempts([]), 1);
  });
});

describe('attemptRecord', () => {
  const bytes = (...values: number[]) => Uint8Array.from(values);
  const body = (responseBody: Uint8Array) => attemptRecord({ statusCode: 200, responseBody, durationMs: 5 }).responseBody;

  test('a body in UTF-8 is kept as it came, control characters and all', () => {
    assert.equal(body(Buffer.from('{"ok":true} é € 😀 \t\u0001', 'utf8')), '{"ok":true} é € 😀 \t\u0001');
    assert.equal(body(bytes()), '');
  });

  test('NUL, which PostgreSQL text cannot hold, is shown as U+2400 (␀)', () => {
    assert.equal(body(Buffer.from('ok\0done\0', 'latin1')), 'ok\u2400done\u2400');
  });

  test('each byte that starts no valid UTF-8 sequence is one U+FFFD (WHATWG decoding), a character cut at the end too', () => {
    assert.equal(body(bytes(0x61, 0xff, 0x62)), 'a\uFFFDb');
    // An overlong NUL is not a NUL: two bytes that are not UTF-8.
    assert.equal(body(bytes(0xc0, 0x80)), '\uFFFD\uFFFD');
    // A surrogate encoded in UTF-8 (CESU-8): not UTF-8 either.
    assert.equal(body(bytes(0xed, 0xa0, 0x80)), '\uFFFD\uFFFD\uFFFD');
    // The first two bytes of a €: one U+FFFD.
    assert.equal(body(bytes(0x78, 0xe2, 0x82)), 'x\uFFFD');
    // A byte-order mark is kept: it was sent.
    assert.equal(body(bytes(0xef, 0xbb, 0xbf, 0x78)), '\uFEFFx');
  });

  test('never longer than the bytes kept: 1 KiB of anything is at most 1024 characters', () => {
    for (const fill of [0x00, 0xff, 0x41, 0x80]) assert.equal(body(new Uint8Array(1024).fill(fill))!.length, 1024);
  });

  test('a status outside 100-599 is no HTTP status (RFC 9110 §15): none recorded, the error says what came', () => {
    for (const statusCode of [0, 99, 600, 999]) {
      assert.deepEqual(attemptRecord({ statusCode, responseBody: bytes(0x6e, 0x6f), durationMs: 3 }), {
        statusCode: undefined,
        durationMs: 3,
        error: `answered with status ${statusCode}, which is not an HTTP status (100-599)`,
        responseBody: 'no',
      });
    }
    for (const statusCode of [100, 200, 404, 599]) assert.equal(attemptRecord({ statusCode, durationMs: 1 }).statusCode, statusCode);
  });

  test('an error: NUL shown as ␀, a lone surrogate as U+FFFD, at most 1000 characters', () => {
    assert.equal(attemptRecord({ error: 'bad\0name \uD800', durationMs: 1 }).error, 'bad\u2400name \uFFFD');
    assert.equal(attemptRecord({ error: 'e'.repeat(5000), durationMs: 1 }).error!.length, 1000);
    // Cut inside a surrogate pair: the half left is replaced.
    assert.equal(attemptRecord({ error: `${'e'.repeat(999)}😀`, durationMs: 1 }).error, `${'e'.repeat(999)}\uFFFD`);
  });

  test('no answer: neither status nor body; the duration a whole number of milliseconds', () => {
    assert.deepEqual(attemptRecord({ error: 'timed out', durationMs: 10_000.4 }), {
      statusCode: undefined,
      durationMs: 10_000,
      error: 'timed out',
      responseBody: undefined,
    });
  });

  test('failureReason: the error, else the status', () => {
    assert.equal(failureReason({ statusCode: 503, durationMs: 1 }), 'HTTP 503');
    assert.equal(
      failureReason({ error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1', durationMs: 1 }),
      'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1',
    );
  });
});

describe('shouldDisableEndpoint', () => {
  const now = new Date('2026-03-10T12:00:00.000Z');
  const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();

  test('failing for 5 days or more: disabled; less, or not failing: not', () => {
    assert.equal(DISABLE_AFTER_MS, 5 * DAY);
    assert.equal(shouldDisableEndpoint(ago(5 * DAY), now), true);
    assert.equal(shouldDisableEndpoint(ago(6 * DAY), now), true);
    assert.equal(shouldDisableEndpoint(ago(5 * DAY - 1), now), false);
    assert.equal(shouldDisableEndpoint(ago(HOUR), now), false);
    assert.equal(shouldDisableEndpoint(null, now), false);
  });
});

describe('endpointAttemptTimeoutMs', () => {
  test('halved for each attempt in a row that timed out, down to the floor; the whole timeout once one answers', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 40].map((timeouts) => endpointAttemptTimeoutMs(10_000, timeouts)),
      [10_000, 5_000, 2_500, MIN_ATTEMPT_TIMEOUT_MS, MIN_ATTEMPT_TIMEOUT_MS, MIN_ATTEMPT_TIMEOUT_MS],
    );
  });

  test('a configured timeout below the floor is never lengthened', () => {
    assert.deepEqual(
      [0, 1, 5].map((timeouts) => endpointAttemptTimeoutMs(500, timeouts)),
      [500, 500, 500],
    );
  });
});

describe('circuitPauseMs and endpointState', () => {
  test('closed below the threshold; then the base pause, doubled for each further failure, capped', () => {
    const { threshold, basePauseMs, maxPauseMs } = CIRCUIT;
    assert.equal(circuitPauseMs(threshold - 1), 0);
    assert.equal(circuitPauseMs(threshold), basePauseMs);
    assert.equal(circuitPauseMs(threshold + 1), 2 * basePauseMs);
    assert.equal(circuitPauseMs(threshold + 3), 8 * basePauseMs);
    assert.equal(circuitPauseMs(threshold + 30), maxPauseMs);
  });

  test('healthy after a success, failing after a failure, probing once the circuit has opened', () => {
    assert.equal(endpointState(0), 'healthy');
    assert.equal(endpointState(1), 'failing');
    assert.equal(endpointState(CIRCUIT.threshold - 1), 'failing');
    assert.equal(endpointState(CIRCUIT.threshold), 'probing');
  });
});
