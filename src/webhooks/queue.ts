import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { jobs, type JobRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';

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

  return {
    enqueue(kind: string, storeId: string, payload: Record<string, unknown>): JobRow {
      const now = clock.now();
      return db.insert(jobs).values({ id: newId(), kind, storeId, payload, status: 'queued', runAt: now, createdAt: now }).returning().get();
    },

    /** Take the next due job (queued and due, or running with an expired lease) and count the attempt. */
    claim(): JobRow | null {
      const now = clock.now();
      return (
        db
          .update(jobs)
          .set({ status: 'running', attempts: sql`${jobs.attempts} + 1`, leaseUntil: now + leaseMs })
          .where(
            eq(
              jobs.id,
              sql`(SELECT id FROM jobs WHERE (status = 'queued' AND run_at <= ${now}) OR (status = 'running' AND lease_until <= ${now}) ORDER BY run_at, id LIMIT 1)`,
            ),
          )
          .returning()
          .get() ?? null
      );
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

export type JobHandler = (job: JobRow) => Promise<void>;

/**
 * Runs due jobs one at a time: `runDueJobs()` for tests (with an injected clock), `start()` for the
 * server (a poll timer plus `notify()` for work queued by a request), `stop()` waits for the job in hand.
 */
export function createJobRunner(queue: JobQueue, handlers: Record<string, JobHandler>, log: (line: Record<string, unknown>) => void) {
  let running: Promise<number> | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let stopped = false;
  let failures = 0;

  async function drain(): Promise<number> {
    let done = 0;
    for (let job = queue.claim(); job && !stopped; job = queue.claim()) {
      const handler = handlers[job.kind];
      try {
        if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
        await handler(job);
        queue.complete(job.id);
      } catch (error) {
        const message = (error as Error).message ?? String(error);
        queue.fail(job, message);
        failures++;
        log({ level: 'warn', msg: 'job failed', job: job.id, kind: job.kind, attempt: job.attempts, error: message });
      }
      done++;
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
      timer ??= setInterval(() => void runDueJobs(), pollMs);
      void runDueJobs();
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
