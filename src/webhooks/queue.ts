import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { jobs, type JobRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { yieldToEventLoop } from '../lib/periodic.ts';

export interface QueueOptions {
  /** How long a started job is owned by its runner; after that (a crash) it is taken again. */
  leaseMs?: number;
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/** Exponential backoff: base, 2x base, 4x base ... capped; with the defaults ~22 h over 12 attempts. */
function retryDelay(attempts: number, baseDelayMs: number, maxDelayMs: number): number {
  return Math.min(baseDelayMs * 2 ** Math.max(0, attempts - 1), maxDelayMs);
}

/**
 * Durable jobs in SQLite. A job is committed in the same transaction as the delivery that caused
 * it, so once a delivery is acknowledged its work survives a crash; a job interrupted mid-run is
 * taken again when its lease ends.
 */
export function createJobQueue(db: Db, clock: Clock, options: QueueOptions = {}) {
  const leaseMs = options.leaseMs ?? 60_000;
  const maxAttempts = options.maxAttempts ?? 12;
  const baseDelayMs = options.baseDelayMs ?? 30_000;
  const maxDelayMs = options.maxDelayMs ?? 6 * 3_600_000;

  // Prepared once: platform-B and -C deliveries enqueue a job inside their group commit.
  const insertJob = db
    .insert(jobs)
    .values({ id: sql.placeholder('id'), kind: sql.placeholder('kind'), storeId: sql.placeholder('storeId'), payload: sql.placeholder('payload'), status: 'queued', runAt: sql.placeholder('now'), createdAt: sql.placeholder('now') })
    .returning()
    .prepare();
  // Prepared once, like the one below: asked for each kind when a catalogue sync starts, in the turn of the request that starts it.
  const unfinishedJob = db
    .select()
    .from(jobs)
    .where(and(eq(jobs.kind, sql.placeholder('kind')), eq(jobs.storeId, sql.placeholder('storeId')), inArray(jobs.status, ['queued', 'running'])))
    .prepare();
  // Prepared once: taken before every step of every job.
  const claimNext = db
    .update(jobs)
    .set({ status: 'running', attempts: sql`${jobs.attempts} + 1`, leaseUntil: sql`${sql.placeholder('leaseUntil')}` })
    .where(
      eq(
        jobs.id,
        sql`(SELECT id FROM jobs WHERE (status = 'queued' AND run_at <= ${sql.placeholder('now')}) OR (status = 'running' AND lease_until <= ${sql.placeholder('now')}) ORDER BY run_at, id LIMIT 1)`,
      ),
    )
    .returning()
    .prepare();

  return {
    enqueue(kind: string, storeId: string, payload: Record<string, unknown>): JobRow {
      return insertJob.get({ id: newId(), kind, storeId, payload, now: clock.now() })!;
    },

    /**
     * At most one unfinished job of this kind per store: a queued one is made due now, a running one
     * is left to its runner (which rereads what it works on before each step); else a new one.
     */
    enqueueOnce(kind: string, storeId: string, payload: Record<string, unknown>): JobRow {
      const active = unfinishedJob.get({ kind, storeId });
      if (!active) return this.enqueue(kind, storeId, payload);
      if (active.status !== 'queued') return active;
      return db.update(jobs).set({ runAt: Math.min(active.runAt, clock.now()) }).where(eq(jobs.id, active.id)).returning().get()!;
    },

    /** The attempts a job gets before it is given up (`dead`). */
    maxAttempts,

    /** Take the next due job (queued and due, or running with an expired lease) and count the attempt. */
    claim(): JobRow | null {
      const now = clock.now();
      return claimNext.get({ now, leaseUntil: now + leaseMs }) ?? null;
    },

    /**
     * A job that did one step of longer work and has more: queued again for `runAt` with a fresh
     * attempt count (its failures are counted per step). Returns how long until it is due.
     */
    requeue(id: string, runAt: number): number {
      db.update(jobs).set({ status: 'queued', attempts: 0, leaseUntil: null, lastError: null, runAt }).where(eq(jobs.id, id)).run();
      return Math.max(0, runAt - clock.now());
    },

    /** At start: jobs a previous process left running (the instance lock says it is gone) are due now. */
    releaseLeases(): void {
      db.update(jobs).set({ leaseUntil: clock.now() }).where(eq(jobs.status, 'running')).run();
    },

    complete(id: string): void {
      db.update(jobs).set({ status: 'done', leaseUntil: null, lastError: null, finishedAt: clock.now() }).where(eq(jobs.id, id)).run();
    },

    /** Schedule a retry with backoff, or give up (`dead`, kept for the operator) after the last attempt. */
    fail(job: JobRow, error: string): void {
      const now = clock.now();
      const dead = job.attempts >= maxAttempts;
      db.update(jobs)
        .set(
          dead
            ? { status: 'dead', leaseUntil: null, lastError: error, finishedAt: now }
            : { status: 'queued', leaseUntil: null, lastError: error, runAt: now + retryDelay(job.attempts, baseDelayMs, maxDelayMs) },
        )
        .where(eq(jobs.id, job.id))
        .run();
    },

  };
}

export type JobQueue = ReturnType<typeof createJobQueue>;

/** Returned by a handler that did one step of longer work: run the job again at this time (epoch ms). */
export interface JobContinuation {
  runAgainAt: number;
}

export type JobHandler = (job: JobRow) => Promise<void | JobContinuation>;

/**
 * Runs due jobs one at a time: `runDueJobs()` for tests (with an injected clock), `start()` for the
 * server (a poll timer plus `notify()` for work queued by a request), `stop()` waits for the job in hand.
 */
export function createJobRunner(queue: JobQueue, handlers: Record<string, JobHandler>, log: (line: Record<string, unknown>) => void) {
  let running: Promise<number> | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let stopped = false;
  let failures = 0;
  let wake: { at: number; timer: ReturnType<typeof setTimeout> } | null = null;

  /**
   * A started runner wakes up when a continued job is due (between polls, for short waits such as a
   * throttle's). The wake-up in hand is compared on the monotonic clock: a step of the wall clock
   * must not keep a sooner wake-up from replacing it.
   */
  function wakeAfter(delayMs: number): void {
    const at = performance.now() + delayMs;
    if (!timer || stopped || (wake && wake.at <= at)) return;
    if (wake) clearTimeout(wake.timer);
    wake = {
      at,
      timer: setTimeout(() => {
        wake = null;
        void runDueJobs();
      }, delayMs),
    };
  }

  async function drain(): Promise<number> {
    let done = 0;
    // The first job runs in a turn of its own, not in that of the request that queued it (notify).
    await yieldToEventLoop();
    if (stopped) return done;
    for (let job = queue.claim(); job && !stopped; job = queue.claim()) {
      const handler = handlers[job.kind];
      try {
        if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
        const result = await handler(job);
        if (result) wakeAfter(queue.requeue(job.id, result.runAgainAt));
        else queue.complete(job.id);
      } catch (error) {
        const message = (error as Error).message ?? String(error);
        queue.fail(job, message);
        failures++;
        log({ level: 'warn', msg: 'job failed', job: job.id, kind: job.kind, attempt: job.attempts, error: message });
      }
      done++;
      // A turn of the event loop between jobs: requests queued behind one job's last write do not also wait for the next job's first step.
      await yieldToEventLoop();
    }
    return done;
  }

  const runDueJobs = (): Promise<number> => {
    running ??= drain().finally(() => {
      running = null;
    });
    return running;
  };

  return {
    runDueJobs,
    /** Failed job attempts since start (for /metrics). */
    get failures(): number {
      return failures;
    },
    /** Work was just queued: run it now if the runner is started (tests drive `runDueJobs` themselves). */
    notify(): void {
      if (timer && !stopped) queueMicrotask(() => void runDueJobs());
    },
    start(pollMs = 1000): void {
      stopped = false;
      if (!timer) queue.releaseLeases();
      timer ??= setInterval(() => void runDueJobs(), pollMs);
      void runDueJobs();
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      if (wake) clearTimeout(wake.timer);
      wake = null;
      await running;
    },
  };
}
