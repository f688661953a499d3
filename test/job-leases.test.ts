// Job leases between instances sharing a database (issue 31 item 3): two job runners, each on its
// own storage (its own connections) over one database, as two svc instances run them. On SQLite
// always; on PostgreSQL too under npm run test:postgres. One fixed clock for both: the leases are
// moved by the test, never by waiting; the heartbeat's beats are waited for as events.
import { afterEach, describe, expect, test } from 'bun:test';
import { LeaseLost } from '../src/lib/abort.ts';
import { fixedClock } from '../src/lib/clock.ts';
import type { Storage } from '../src/storage/index.ts';
import { createJobQueue, createJobRunner, type JobHandler, type JobQueue } from '../src/webhooks/queue.ts';
import { makeTestApp } from './helpers/app.ts';
import { ENGINES, query, storageOn, type OpenedEngine } from './helpers/storage.ts';

const T0 = Date.parse('2026-03-01T12:00:00Z');
// Its heartbeat beats every 2 s, and a run's budget ends after 4.5 s: a lost lease is seen well before that.
const LEASE_MS = 6_000;

/** Waits (polling) until `done()` holds; fails with `what` after `timeoutMs`. */
async function until(what: string, done: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await Bun.sleep(10);
  }
}

describe.each(ENGINES)('job leases between instances on $name', (engine) => {
  let opened: OpenedEngine;
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    await opened.close();
  });

  const clock = fixedClock(T0);
  /** An instance: its own storage over the database, its queue (a 6 s lease) and a runner of `handlers`. */
  async function instance(handlers: Record<string, JobHandler>): Promise<{ storage: Storage; queue: JobQueue; runner: ReturnType<typeof createJobRunner>; failed: unknown[] }> {
    const { storage, close } = await storageOn(opened);
    const queue = createJobQueue(storage.jobs, clock, { leaseMs: LEASE_MS });
    const failed: unknown[] = [];
    const runner = createJobRunner(queue, handlers, (line) => failed.push(line), { releaseLeftLeases: false });
    closing.push(async () => {
      await runner.stop();
      await close();
    });
    return { storage, queue, runner, failed };
  }
  const jobRow = async (id: string) => {
    const [row] = await query(opened, 'SELECT status, attempts, lease_until FROM jobs WHERE id = ?', id);
    return { status: row!.status, attempts: Number(row!.attempts), leaseUntil: row!.lease_until === null ? null : Number(row!.lease_until) };
  };
  /**
   * A handler that runs until the test ends it or its signal stops it, counting the runs at the same
   * time; with `goesOn`, the end of its budget (or any stop) does not stop it (it finishes its step,
   * as a page's transaction does).
   */
  function heldRuns(goesOn: 'after its budget' | 'after any stop' | null = null) {
    const runs = { started: 0, now: 0, most: 0, stoppedBy: [] as unknown[], release: () => {} };
    const handler: JobHandler = (_job, signal) => {
      runs.started++;
      runs.most = Math.max(runs.most, ++runs.now);
      return new Promise<void>((resolve, reject) => {
        runs.release = () => {
          runs.now--;
          resolve();
        };
        signal.addEventListener('abort', () => {
          runs.stoppedBy.push(signal.reason);
          const outOfTime = signal.reason instanceof Error && signal.reason.name === 'OutOfTime';
          if (goesOn === null || (goesOn === 'after its budget' && !outOfTime)) {
            runs.now--;
            reject(signal.reason);
          }
        });
      });
    };
    return { runs, handler };
  }

  test('a job whose runner died is taken over by another instance once its lease ends, and not before', async () => {
    opened = await engine.open();
    clock.set(T0);
    const ran: string[] = [];
    const first = await instance({});
    const second = await instance({ work: async (job) => void ran.push(job.id) });
    const job = await first.queue.enqueue('work', 's1', {});
    expect((await first.queue.claim())!.id).toBe(job.id); // claimed, then its instance died: no run, no heartbeat
    clock.set(T0 + LEASE_MS - 1);
    expect(await second.runner.runDueJobs()).toBe(0);
    clock.set(T0 + LEASE_MS);
    expect(await second.runner.runDueJobs()).toBe(1);
    expect(ran).toEqual([job.id]);
    expect(await jobRow(job.id)).toMatchObject({ status: 'done', attempts: 2 });
  });

  test('no job runs twice at once: a run that outlasts its lease keeps it by its heartbeat, and the other instance never takes it meanwhile', async () => {
    opened = await engine.open();
    clock.set(T0);
    const { runs, handler } = heldRuns('after its budget');
    const first = await instance({ slow: handler });
    const second = await instance({ slow: handler });
    const job = await first.queue.enqueue('slow', 's1', {});
    const running = first.runner.runDueJobs();
    await until('the run started', () => runs.started === 1);
    clock.set(T0 + LEASE_MS - 50);
    await until('the heartbeat renewed the lease past its first end', async () => (await jobRow(job.id)).leaseUntil! > T0 + LEASE_MS);
    clock.set(T0 + LEASE_MS + 100); // the first lease has ended; the renewed one has not
    expect(await second.runner.runDueJobs()).toBe(0);
    runs.release();
    await running;
    expect(runs).toMatchObject({ started: 1, most: 1 });
    expect(await jobRow(job.id)).toMatchObject({ status: 'done', attempts: 1 });
  });

  test('a run whose lease another instance took (its heartbeat came too late) stops at once and writes nothing: the job is the other\'s', async () => {
    opened = await engine.open();
    clock.set(T0);
    const { runs, handler } = heldRuns();
    const first = await instance({ slow: handler });
    const second = await instance({});
    const job = await first.queue.enqueue('slow', 's1', {});
    const running = first.runner.runDueJobs();
    await until('the run started', () => runs.started === 1);
    // The other instance's clock is past the lease (the first instance was frozen): it claims the job.
    const taken = (await second.storage.jobs.claim(T0 + 10 * LEASE_MS, T0 + 11 * LEASE_MS, null))!;
    expect(taken).toMatchObject({ id: job.id, attempts: 2 });
    await running;
    expect(runs.stoppedBy.at(-1)).toBeInstanceOf(LeaseLost);
    expect(first.runner.failures).toBe(0);
    expect(await jobRow(job.id)).toEqual({ status: 'running', attempts: 2, leaseUntil: T0 + 11 * LEASE_MS });
  });

  test('a run that goes on after losing its lease (a step it could not stop) writes no outcome when it ends: the job stays the other instance\'s', async () => {
    opened = await engine.open();
    clock.set(T0);
    const { runs, handler } = heldRuns('after any stop');
    const first = await instance({ slow: handler });
    const second = await instance({});
    const job = await first.queue.enqueue('slow', 's1', {});
    const running = first.runner.runDueJobs();
    await until('the run started', () => runs.started === 1);
    await second.storage.jobs.claim(T0 + 10 * LEASE_MS, T0 + 11 * LEASE_MS, null);
    await until('the run learnt it lost its lease', () => runs.stoppedBy.some((reason) => reason instanceof LeaseLost));
    runs.release();
    await running;
    expect(await jobRow(job.id)).toEqual({ status: 'running', attempts: 2, leaseUntil: T0 + 11 * LEASE_MS });
  });

  test('a stopping instance hands its leases back: another instance takes the job at once, not when the lease would have ended', async () => {
    opened = await engine.open();
    clock.set(T0);
    const { runs, handler } = heldRuns();
    const first = await instance({ slow: handler });
    const second = await instance({ slow: handler });
    const job = await first.queue.enqueue('slow', 's1', {});
    void first.runner.runDueJobs();
    await until('the run started', () => runs.started === 1);
    await first.runner.stop();
    expect(await jobRow(job.id)).toEqual({ status: 'running', attempts: 1, leaseUntil: T0 }); // handed back, not failed
    const taking = second.runner.runDueJobs();
    await until('the other instance runs it', () => runs.started === 2);
    runs.release();
    expect(await taking).toBe(1);
    expect(runs.most).toBe(1);
    expect(await jobRow(job.id)).toMatchObject({ status: 'done', attempts: 2 });
  });

  test('a job its creator claimed as its instance stops (a request answered during the drain) is not run there: its lease is handed back, and another instance takes it at once', async () => {
    opened = await engine.open();
    clock.set(T0);
    const ran: string[] = [];
    const first = await instance({});
    const second = await instance({ work: async (job) => void ran.push(job.id) });
    await first.runner.stop();
    const claimed = await first.queue.enqueueClaimed('work', 's1', {});
    expect(await first.runner.runClaimed(claimed, async () => 'ran')).toBeUndefined();
    expect(await jobRow(claimed.id)).toEqual({ status: 'running', attempts: 1, leaseUntil: T0 });
    expect(await second.runner.runDueJobs()).toBe(1);
    expect(ran).toEqual([claimed.id]);
  });
});

describe('SVC_JOB_LEASE_SECONDS', () => {
  const claimedLease = async (env: Record<string, string>): Promise<number> => {
    const t = await makeTestApp({ env, clock: fixedClock(T0) });
    try {
      await t.webhooks.queue.enqueue('work', 's1', {});
      const job = await t.webhooks.queue.claim();
      const [row] = await t.query('SELECT lease_until FROM jobs WHERE id = ?', job!.id);
      return Number(row!.lease_until) - T0;
    } finally {
      await t.close();
    }
  };

  test('a claimed job is leased for 60 s by default, and for the setting when it is set', async () => {
    expect(await claimedLease({})).toBe(60_000);
    expect(await claimedLease({ SVC_JOB_LEASE_SECONDS: '15' })).toBe(15_000);
  });
});
