// The embedded database's one connection (src/db/serial-queue.ts): one piece of work at a time,
// each on a turn of the event loop of its own, the work of read requests ahead of other waiting
// work a few in a row at most.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runAsRead } from '../../src/db/read-priority.ts';
import { createSerialQueue } from '../../src/db/serial-queue.ts';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the serial queue', () => {
  test('runs one piece of work at a time, in the order queued', async () => {
    const queue = createSerialQueue();
    const log: string[] = [];
    let running = 0;
    const work = (name: string) =>
      queue(async () => {
        running++;
        assert.equal(running, 1, 'one at a time');
        log.push(`start ${name}`);
        await tick();
        log.push(`end ${name}`);
        running--;
        return name;
      });
    assert.deepEqual(await Promise.all([work('a'), work('b'), work('c')]), ['a', 'b', 'c']);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    assert.equal(queue.pending, 0);
  });

  test('work that throws, or rejects, leaves the connection free for the next', async () => {
    const queue = createSerialQueue();
    await assert.rejects(
      queue(() => {
        throw new Error('sync');
      }),
      /sync/,
    );
    await assert.rejects(
      queue(async () => {
        throw new Error('async');
      }),
      /async/,
    );
    assert.equal(await queue(async () => 'next'), 'next');
  });

  test("a read request's work goes ahead of waiting writes, at most 4 in a row", async () => {
    const queue = createSerialQueue();
    const order: string[] = [];
    const record = (name: string) => async () => void order.push(name);
    let started!: () => void;
    let release!: () => void;
    const isRunning = new Promise<void>((resolve) => (started = resolve));
    const running = queue(async () => {
      order.push('w0');
      started();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await isRunning;
    const writes = ['w1', 'w2', 'w3'].map((name) => queue(record(name)));
    const reads = runAsRead(() => ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((name) => queue(record(name))));
    release();
    await Promise.all([running, ...writes, ...reads]);
    assert.deepEqual(order, ['w0', 'r1', 'r2', 'r3', 'r4', 'w1', 'r5', 'r6', 'w2', 'w3']);
  });

  test('the next work starts on a turn of its own: sockets and timers are served between two pieces', async () => {
    const queue = createSerialQueue();
    const order: string[] = [];
    const first = queue(async () => {
      order.push('first');
      // Queued by the work itself, as a caller's next statement would be, with a turn's work behind it.
      setImmediate(() => order.push('another turn'));
    });
    const second = queue(async () => void order.push('second'));
    await Promise.all([first, second]);
    assert.deepEqual(order, ['first', 'another turn', 'second']);
  });
});
