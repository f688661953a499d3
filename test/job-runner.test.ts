import { afterEach, describe, expect, test } from 'bun:test';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { fixedClock, systemClock } from '../src/lib/clock.ts';
import { createJobQueue, createJobRunner } from '../src/webhooks/queue.ts';

let t: TestApp | null = null;
const wallClock = Date.now;
afterEach(async () => {
  Date.now = wallClock;
  await t?.close();
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
    const queue = createJobQueue(t.storage.jobs, systemClock);
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
    await queue.enqueue('later', 'store-1', {});
    runner.start(600_000); // no poll in the test's time: only wake-ups and notify() run jobs
    try {
      expect(await until(() => steps.includes('later'), 10_000)).toBe(true);
      await queue.enqueue('soon', 'store-1', {});
      runner.notify();
      expect(await until(() => steps.filter((name) => name === 'soon').length === 2, 10_000)).toBe(true);
    } finally {
      await runner.stop();
    }
  }, 30_000);

  test('a job queued while a drain makes its last claim is run at once, not at the next poll', async () => {
    t = await makeTestApp();
    // The drain's claim that finds nothing is held until the job is queued and the runner told.
    let emptyClaims = 0;
    let releaseEmptyClaim = () => {};
    const held = new Promise<void>((resolve) => (releaseEmptyClaim = resolve));
    const jobs = t.storage.jobs;
    const queue = createJobQueue(
      {
        ...jobs,
        claim: async (...args) => {
          const job = await jobs.claim(...args);
          if (job === null && ++emptyClaims === 1) await held;
          return job;
        },
      },
      systemClock,
    );
    const ran: string[] = [];
    const runner = createJobRunner(queue, { queued: async (job) => void ran.push(job.storeId) }, () => {});
    runner.start(600_000); // no poll in the test's time
    try {
      expect(await until(() => emptyClaims === 1, 10_000)).toBe(true);
      await queue.enqueue('queued', 'store-1', {});
      runner.notify();
      await Bun.sleep(0);
      releaseEmptyClaim();
      expect(await until(() => ran.length === 1, 5_000)).toBe(true);
    } finally {
      await runner.stop();
    }
  });
});

describe('job runner: bounds on every run', () => {
  test('stores take turns: a backlog of one store\'s jobs does not hold back another store\'s job queued after it', async () => {
    t = await makeTestApp();
    const queue = createJobQueue(t.storage.jobs, systemClock);
    const ran: string[] = [];
    const runner = createJobRunner(queue, { work: async (job) => void ran.push(job.storeId) }, () => {});
    for (let i = 0; i < 5; i++) await queue.enqueue('work', 'store-x', {});
    await queue.enqueue('work', 'store-y', {});
    expect(await runner.runDueJobs()).toBe(6);
    expect(ran).toEqual(['store-x', 'store-y', 'store-x', 'store-x', 'store-x', 'store-x']);
  });

  test('each run has a time budget: a handler still waiting when it runs out is stopped and the attempt counted as failed', async () => {
    t = await makeTestApp();
    const queue = createJobQueue(t.storage.jobs, systemClock);
    const runner = createJobRunner(
      queue,
      // Waits for nothing but its signal, as a call to a platform that never answers would.
      { stuck: (_job, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))) },
      () => {},
      { budgetMs: 50 },
    );
    const job = await queue.enqueue('stuck', 'store-1', {});
    expect(await runner.runDueJobs()).toBe(1);
    const [row] = await t.query('SELECT status, attempts, last_error FROM jobs WHERE id = ?', job.id);
    expect(row).toMatchObject({ status: 'queued', attempts: 1, last_error: "the job's time budget of 50 ms ran out" });
    expect(runner.failures).toBe(1);
  });

  test('stop() aborts the runs in hand and waits for them; a stopped run is not a failure (the next start takes it again), and no run starts after it', async () => {
    t = await makeTestApp();
    const queue = createJobQueue(t.storage.jobs, systemClock);
    let started = 0;
    let aborted: unknown = null;
    const runner = createJobRunner(
      queue,
      {
        stuck: (_job, signal) => {
          started++;
          return new Promise((_resolve, reject) =>
            signal.addEventListener('abort', () => {
              aborted = signal.reason;
              reject(signal.reason);
            }),
          );
        },
      },
      () => {},
      { budgetMs: 3_600_000 },
    );
    const job = await queue.enqueue('stuck', 'store-1', {});
    const running = runner.runDueJobs();
    await until(() => started === 1, 10_000);
    await runner.stop();
    await running;
    expect((aborted as Error).name).toBe('ShuttingDown');
    expect(runner.failures).toBe(0);
    expect(await t.query('SELECT status, last_error FROM jobs WHERE id = ?', job.id)).toEqual([{ status: 'running', last_error: null }]);
    // Run at once by its creator after the stop: not run (left to the next start).
    const claimed = await queue.enqueueClaimed('stuck', 'store-1', {});
    expect(await runner.runClaimed(claimed, async () => 'ran')).toBeUndefined();
    expect(started).toBe(1);
  });

  test('retries are spread with jitter: jobs that failed together are not all due again at the same moment', async () => {
    t = await makeTestApp();
    // Every job fails at the same moment (the clock stands still): only jitter can set them apart.
    const T0 = Date.parse('2026-01-20T12:00:00Z');
    const queue = createJobQueue(t.storage.jobs, fixedClock(T0), { baseDelayMs: 60_000 });
    const runner = createJobRunner(queue, { fails: async () => Promise.reject(new Error('platform down')) }, () => {});
    for (let i = 0; i < 20; i++) await queue.enqueue('fails', `store-${i % 4}`, {});
    expect(await runner.runDueJobs()).toBe(20);
    const due = ((await t.query('SELECT run_at FROM jobs')) as { run_at: number }[]).map((row) => row.run_at - T0);
    // Each between half and all of the first delay, and not all alike.
    for (const delay of due) expect(delay).toBeGreaterThanOrEqual(30_000);
    for (const delay of due) expect(delay).toBeLessThanOrEqual(60_000);
    expect(new Set(due).size).toBeGreaterThan(1);
  });
});
