// The delivery rules, pure: which answers succeed, the retry schedule with its jitter, when a
// delivery fails for good and when an endpoint failing everything is disabled.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import {
  DISABLE_AFTER_MS,
  isSuccessStatus,
  judgeAttempt,
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
