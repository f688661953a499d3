import { afterEach, describe, expect, test } from 'bun:test';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createJobQueue, createJobRunner } from '../src/webhooks/queue.ts';

let t: TestApp | null = null;
const wallClock = Date.now;
afterEach(() => {
  Date.now = wallClock;
  t?.close();
  t = null;
});

/** Waits (on the monotonic clock: the test steps Date.now) until `done()` holds or `timeoutMs` passes. */
async function until(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!done() && performance.now() < deadline) await Bun.sleep(5);
  return done();
}

describe('job runner', () => {
  // A job's run_at is wall time in the database (it survives a restart); the started runner's wait
  // for the next continued job is an in-process wait, on the monotonic clock, as the platform
  // rate-limit waits are (platforms/http.ts).
  test('a started runner wakes for a continued job when it is due, even after the wall clock stepped forward (NTP, resumed VM)', async () => {
    t = await makeTestApp();
    const queue = createJobQueue(t.database.db, systemClock);
    let step = 0;
    Date.now = () => wallClock() + step;
    const steps: string[] = [];
    const runner = createJobRunner(
      queue,
      {
        // Has a step due in a minute: the runner's wake-up is set for it.
        later: async () => {
          steps.push('later');
          return { runAgainAt: systemClock.now() + 60_000 };
        },
        // The wall clock jumps an hour ahead during its first step, which continues 50 ms later.
        soon: async () => {
          steps.push('soon');
          if (steps.filter((name) => name === 'soon').length > 1) return;
          step = 3_600_000;
          return { runAgainAt: systemClock.now() + 50 };
        },
      },
      () => {},
    );
    queue.enqueue('later', 'store-1', {});
    runner.start(600_000); // no poll in the test's time: only wake-ups and notify() run jobs
    try {
      expect(await until(() => steps.includes('later'), 10_000)).toBe(true);
      queue.enqueue('soon', 'store-1', {});
      runner.notify();
      expect(await until(() => steps.filter((name) => name === 'soon').length === 2, 10_000)).toBe(true);
    } finally {
      await runner.stop();
    }
  }, 30_000);
});
