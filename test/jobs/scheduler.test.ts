// The one scheduler of background jobs (src/jobs/scheduler.ts): every job runs on its interval,
// never overlapping itself; a failing run is logged and the job goes on; stop() waits for a run
// in progress, so the database is not closed under it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { createScheduler } from '../../src/jobs/scheduler.ts';

const until = async (condition: () => boolean, what: string) => {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
};

function recordingLog(): { log: FastifyBaseLogger; warnings: unknown[] } {
  const warnings: unknown[] = [];
  const log = { warn: (entry: unknown) => warnings.push(entry) } as unknown as FastifyBaseLogger;
  return { log, warnings };
}

describe('createScheduler', () => {
  test('runs each job again and again once started, and no more once stopped', async () => {
    let runs = 0;
    const scheduler = createScheduler([{ name: 'count', everyMs: 1, run: async () => void runs++ }], recordingLog().log);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(runs, 0, 'nothing runs before start()');
    scheduler.start();
    await until(() => runs >= 3, 'three runs');
    await scheduler.stop();
    const stoppedAt = runs;
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(runs, stoppedAt);
  });

  test('a run that outlasts the interval is not overlapped by the next; stop() waits for it', async () => {
    let active = 0;
    let most = 0;
    let finished = 0;
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const scheduler = createScheduler(
      [
        {
          name: 'slow',
          everyMs: 1,
          async run() {
            active++;
            most = Math.max(most, active);
            await slow;
            active--;
            finished++;
          },
        },
      ],
      recordingLog().log,
    );
    scheduler.start();
    await until(() => active === 1, 'the first run');
    await new Promise((resolve) => setTimeout(resolve, 20));
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(stopped, false, 'stop() waits for the run in progress');
    release();
    await stopping;
    assert.equal(most, 1);
    assert.equal(finished, 1);
  });

  test('a failing run is logged with the job name, and the job runs again', async () => {
    const { log, warnings } = recordingLog();
    let runs = 0;
    const scheduler = createScheduler(
      [
        {
          name: 'flaky',
          everyMs: 1,
          async run() {
            runs++;
            throw new Error('database away');
          },
        },
      ],
      log,
    );
    scheduler.start();
    await until(() => runs >= 2 && warnings.length >= 2, 'two failed runs');
    await scheduler.stop();
    assert.equal((warnings[0] as { job: string }).job, 'flaky');
  });

  test("stop() ends a job's own work (its stop) after its run in progress, and waits for it", async () => {
    const order: string[] = [];
    let releaseRun!: () => void;
    const running = new Promise<void>((resolve) => (releaseRun = resolve));
    let releaseStop!: () => void;
    const stopping = new Promise<void>((resolve) => (releaseStop = resolve));
    const scheduler = createScheduler(
      [
        {
          name: 'deliver',
          everyMs: 1,
          async run() {
            order.push('run');
            await running;
            order.push('run done');
          },
          async stop() {
            order.push('stop');
            await stopping;
            order.push('stop done');
          },
        },
      ],
      recordingLog().log,
    );
    scheduler.start();
    await until(() => order.length === 1, 'the first run');
    let stopped = false;
    const stop = scheduler.stop().then(() => (stopped = true));
    releaseRun();
    await until(() => order.includes('stop'), "the job's stop");
    assert.equal(stopped, false, "stop() waits for the job's stop");
    releaseStop();
    await stop;
    assert.deepEqual(order, ['run', 'run done', 'stop', 'stop done']);
  });
});
