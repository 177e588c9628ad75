// One scheduler for every background task of a process: each job runs every `everyMs`, never
// twice at once, from the moment the app is ready until it closes. Jobs must be idempotent and
// safe in every process at once: a deployment runs them in each of its processes.
import type { FastifyBaseLogger } from 'fastify';

export interface Job {
  name: string;
  everyMs: number;
  run(): Promise<unknown>;
  /** Work a run started and left going (webhook attempts): ended or given up when the scheduler stops. */
  stop?(): Promise<void>;
}

export interface Scheduler {
  start(): void;
  stop(): Promise<void>;
}

export function createScheduler(jobs: readonly Job[], log: FastifyBaseLogger): Scheduler {
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<unknown>>();
  return {
    start() {
      for (const job of jobs) {
        let busy = false;
        const timer = setInterval(function runJob() {
          if (busy) return;
          busy = true;
          const run = job.run().then(
            () => undefined,
            (error: unknown) => log.warn({ err: error, job: job.name }, 'background job failed'),
          );
          running.add(run);
          void run.finally(() => {
            busy = false;
            running.delete(run);
          });
        }, job.everyMs);
        // A pending job never keeps the process alive.
        timer.unref();
        timers.push(timer);
      }
    },
    async stop() {
      for (const timer of timers.splice(0)) clearInterval(timer);
      // The database closes after the app: let a job that started finish first.
      await Promise.all(running);
      await Promise.all(jobs.map((job) => job.stop?.()));
    },
  };
}
