import { LeaseLost, OutOfTime, ShuttingDown, Stopped, StoreStopped } from '../lib/abort.ts';
import { backoffMs } from '../lib/backoff.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { yieldToEventLoop } from '../lib/periodic.ts';
import type { JobRecords } from '../storage/stores.ts';

/** Durable background work, retried with exponential backoff (JobRecords, src/storage/stores.ts). */
export interface Job {
  id: string;
  kind: string;
  storeId: string;
  payload: Record<string, unknown>;
  status: 'queued' | 'running' | 'done' | 'dead';
  /** Attempts counted so far (a continued job counts per step). */
  attempts: number;
  runAt: number;
  /** While running: when the lease ends and another worker (or the restarted process) may take it. */
  leaseUntil: number | null;
  lastError: string | null;
  createdAt: number;
  finishedAt: number | null;
  /** What makes it the same job as another: no two unfinished jobs share one (JobRecords.enqueueOnce keys its job so); null for a job that is never the same as another. */
  activeKey: string | null;
}

/** A job to store: queued and due at `runAt`, or (enqueueClaimed) already running under a lease. */
export type NewJob = Pick<Job, 'id' | 'kind' | 'storeId' | 'payload' | 'status' | 'attempts' | 'runAt' | 'leaseUntil' | 'createdAt' | 'activeKey'>;

/** A job as stored (JobRecords.enqueue answers the same): not failed or finished yet. */
export const storedJob = (job: NewJob): Job => ({ ...job, lastError: null, finishedAt: null });

/** What a requeued job's attempts become: `reset` (a step done: its failures count per step), `kept` (this run counts against them), `uncounted` (this run does not). */
export type RequeueAttempts = 'reset' | 'kept' | 'uncounted';

/** A job queued at `at`, due at once. */
export const queuedJob = (kind: string, storeId: string, payload: Record<string, unknown>, at: number): NewJob => ({ id: newId(), kind, storeId, payload, status: 'queued', attempts: 0, runAt: at, leaseUntil: null, createdAt: at, activeKey: null });

/** The statuses of a job not finished yet: waiting for a run, or in one. */
export const UNFINISHED_JOB_STATUSES = ['queued', 'running'] as const satisfies readonly Job['status'][];

/** The key of the one unfinished job of a kind per store that JobRecords.enqueueOnce keeps. */
export const onceKey = (job: Pick<Job, 'kind' | 'storeId'>): string => `${job.kind}:${job.storeId}`;

export interface QueueOptions {
  /** How long a started job is owned by its runner; after that (a crash) it is taken again. */
  leaseMs?: number;
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Durable jobs. A job is committed in the same transaction as the delivery that caused it, so once
 * a delivery is acknowledged its work survives a crash; a job interrupted mid-run is taken again
 * when its lease ends.
 */
export function createJobQueue(records: JobRecords, clock: Clock, options: QueueOptions = {}) {
  const leaseMs = options.leaseMs ?? 60_000;
  const maxAttempts = options.maxAttempts ?? 12;
  const baseDelayMs = options.baseDelayMs ?? 30_000;
  const maxDelayMs = options.maxDelayMs ?? 6 * 3_600_000;
  const queued = (kind: string, storeId: string, payload: Record<string, unknown>): NewJob => queuedJob(kind, storeId, payload, clock.now());
  const claimedJob = (kind: string, storeId: string, payload: Record<string, unknown>): NewJob => {
    const job = queued(kind, storeId, payload);
    return { ...job, status: 'running', attempts: 1, leaseUntil: job.runAt + leaseMs };
  };
  /** The store whose job was claimed last. */
  let lastStore: string | null = null;

  return {
    enqueue: (kind: string, storeId: string, payload: Record<string, unknown>): Promise<Job> => records.enqueue(queued(kind, storeId, payload)),

    /**
     * At most one unfinished job of this kind per store: a queued one is made due now, a running one
     * is left to its runner (which rereads what it works on before each step); else a new one.
     */
    enqueueOnce: (kind: string, storeId: string, payload: Record<string, unknown>): Promise<Job> => records.enqueueOnce(queued(kind, storeId, payload)),

    /**
     * A job taken by its creator to run at once (webhooks/queue.ts `runClaimed`): stored running,
     * its first attempt counted and leased, so the runner's own loop never takes it as well.
     */
    enqueueClaimed: (kind: string, storeId: string, payload: Record<string, unknown>): Promise<Job> => records.enqueue(claimedJob(kind, storeId, payload)),

    /**
     * The job enqueueClaimed stores, for a caller that stores it itself, in the transaction of the
     * write that calls for it (a store and its connection: StoreRecords.add).
     */
    claimedJob,

    /** The attempts a job gets before it is given up (`dead`). */
    maxAttempts,
    /** How long a claimed job is leased to its runner. */
    leaseMs,

    /**
     * Take the next due job (queued and due, or running with an expired lease) and count the attempt.
     * Stores take turns: a due job of another store goes before the next job of the store served
     * last, so no store's backlog (a burst of fetches, a pass of many pages) holds another's back.
     */
    async claim(): Promise<Job | null> {
      const now = clock.now();
      const job = await records.claim(now, now + leaseMs, lastStore);
      if (job) lastStore = job.storeId;
      return job;
    },

    /**
     * A job queued again for `runAt`. By default it did one step of longer work and has more: a fresh
     * attempt count (its failures are counted per step). `again` says the step was not done and is
     * tried again: `attempt` counts this run against its attempts (the platform refused it for its
     * rate limit), `wait` does not (svc held it back itself). Returns how long until it is due.
     */
    async requeue(id: string, runAt: number, again?: 'attempt' | 'wait'): Promise<number> {
      await records.requeue(id, runAt, again === 'attempt' ? 'kept' : again === 'wait' ? 'uncounted' : 'reset');
      return Math.max(0, runAt - clock.now());
    },

    /** The heartbeat of a run holding the job's lease until `heldUntil`: the lease's new end, or null when the lease is no longer the run's. */
    async renewLease(id: string, heldUntil: number): Promise<number | null> {
      const leaseUntil = clock.now() + leaseMs;
      return (await records.renewLease(id, heldUntil, leaseUntil)) ? leaseUntil : null;
    },

    /** A run stopped by the shutdown hands its lease (held until `heldUntil`) back: the job is due at once for another runner. */
    handBack: (id: string, heldUntil: number): Promise<void> => records.handBack(id, heldUntil, clock.now()),

    /** At start: jobs a previous process left running (the instance lock says it is gone) are due now. */
    releaseLeases: (): Promise<void> => records.releaseLeases(clock.now()),

    complete: (id: string): Promise<void> => records.complete(id, clock.now()),

    /**
     * The store's queued job (of `kinds`) that is waiting after failed (or refused) attempts, the
     * one due first: how many attempts failed and when the next is due. Null when none waits so.
     */
    nextRetry: (storeId: string, kinds: readonly string[]): Promise<{ attempts: number; runAt: number } | null> => records.nextRetry(storeId, kinds),

    /** Whether the store has a job of one of `kinds` that is queued or running. */
    hasUnfinished: (storeId: string, kinds: readonly string[]): Promise<boolean> => records.hasUnfinished(storeId, kinds),

    /**
     * Drops the store's unfinished jobs (queued, or running: a run in hand is stopped by
     * JobRunner.stopStore), all of them or those of `kinds`; returns how many.
     */
    dropUnfinished: (storeId: string, kinds: readonly string[] | null = null): Promise<number> => records.dropUnfinished(storeId, kinds),

    /**
     * Schedule a retry with exponential backoff and jitter (about base, 2x base, 4x base ... capped;
     * with the defaults up to ~22 h over 12 attempts), or give up (`dead`, kept for the operator)
     * after the last attempt.
     */
    fail(job: Job, error: string): Promise<void> {
      const now = clock.now();
      return records.fail(job.id, error, now, job.attempts >= maxAttempts ? null : now + backoffMs(job.attempts, baseDelayMs, maxDelayMs));
    },
  };
}

export type JobQueue = ReturnType<typeof createJobQueue>;

/**
 * Returned by a handler that did one step of longer work: run the job again at this time (epoch
 * ms). With `again`, the step was not done and is run again (see JobQueue.requeue).
 */
export interface JobContinuation {
  runAgainAt: number;
  again?: 'attempt' | 'wait';
}

/**
 * One run of a job. `signal` is aborted when the job's time budget runs out (OutOfTime: a failed
 * attempt), the server shuts down (ShuttingDown: its lease is handed back, for another runner or
 * the next start), the operator stops the store's work (StoreStopped: its jobs are dropped) or its
 * lease was taken by another runner (LeaseLost); every call and wait of the handler must stop on it.
 */
export type JobHandler = (job: Job, signal: AbortSignal) => Promise<void | JobContinuation>;

/** How long one run of a job may take by default: a quarter below the queue's 60 s lease, so no run outlives its lease. */
export const DEFAULT_JOB_BUDGET_MS = 45_000;

/**
 * Runs due jobs one at a time: `runDueJobs()` for tests (with an injected clock), `start()` for the
 * server (a poll timer plus `notify()` for work queued by a request), `runClaimed()` for a job its
 * creator runs at once beside the loop. Every run has a time budget (`budgetMs`, below the lease);
 * `stop()` aborts the runs in hand (their calls stop at once), starts no new one, and waits for them.
 */
export function createJobRunner(
  queue: JobQueue,
  handlers: Record<string, JobHandler>,
  log: (line: Record<string, unknown>) => void,
  options: {
    budgetMs?: number;
    /**
     * Whether `start()` first releases the leases of jobs left running: only where this is the one
     * runner of the database (SQLite), whose leases a previous process left. Instances sharing a
     * database never release one another's: a job whose runner died is taken again when its lease ends.
     */
    releaseLeftLeases?: boolean;
  } = {},
) {
  const releaseLeftLeases = options.releaseLeftLeases ?? true;
  const budgetMs = Math.min(options.budgetMs ?? DEFAULT_JOB_BUDGET_MS, Math.floor(queue.leaseMs * 0.75));
  let running: Promise<number> | null = null;
  /** A drain was asked for while one ran: another follows it. */
  let drainAgain = false;
  let timer: ReturnType<typeof setInterval> | null = null;
  let stopped = false;
  let failures = 0;
  let wake: { at: number; timer: ReturnType<typeof setTimeout> } | null = null;
  /** The runs in hand, by the controller that stops them, with their job. */
  const inFlight = new Map<AbortController, { job: Job; run: Promise<void> }>();

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

  /**
   * One run of a claimed job within its time budget, and what it comes to: done, continued, or
   * failed (retried with backoff). A run stopped from outside writes no outcome: by the shutdown,
   * its lease is handed back (another runner, or the next start, takes the job at once); by the
   * operator stopping its store's work, its row is dropped (JobQueue.dropUnfinished); by the loss of
   * its lease, the job is another runner's.
   */
  function runJob(job: Job, handler: JobHandler | undefined): Promise<void> {
    const controller = new AbortController();
    const budget = setTimeout(() => controller.abort(new OutOfTime(budgetMs)), budgetMs);
    const lease = heartbeat(job, controller);
    const run = (async () => {
      try {
        if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
        const result = await handler(job, controller.signal);
        await lease.stop();
        // A run that went on after losing its lease (a step it could not stop) writes nothing: the job is the other runner's.
        if (controller.signal.reason instanceof LeaseLost) return;
        if (result) wakeAfter(await queue.requeue(job.id, result.runAgainAt, result.again));
        else await queue.complete(job.id);
      } catch (error) {
        const heldUntil = await lease.stop();
        const stoppedBy = controller.signal.reason;
        // Stopped by the shutdown: the lease goes back, so another instance takes the job at once.
        if (stoppedBy instanceof ShuttingDown && heldUntil !== null) await queue.handBack(job.id, heldUntil);
        if (stoppedBy instanceof Stopped) return;
        const message = (error as Error).message ?? String(error);
        await queue.fail(job, message);
        failures++;
        log({ level: 'warn', msg: 'job failed', job: job.id, kind: job.kind, attempt: job.attempts, error: message });
      } finally {
        clearTimeout(budget);
        inFlight.delete(controller);
      }
    })();
    inFlight.set(controller, { job, run });
    return run;
  }

  /**
   * A run's lease, renewed every third of the lease while the run lasts: a runner that stops (a crash,
   * a frozen process) stops renewing, and another takes the job once the lease ends. A renewal that
   * finds the lease taken stops the run at once (LeaseLost): the job is never run twice at once. One
   * that fails (the database unreachable) is tried again at the next beat. `stop()` ends the beats
   * and answers the lease's end as the run holds it (null: lost).
   */
  function heartbeat(job: Job, controller: AbortController): { stop(): Promise<number | null> } {
    let heldUntil = job.leaseUntil;
    let renewal: Promise<void> = Promise.resolve();
    const beat = setInterval(() => {
      renewal = renewal.then(async () => {
        if (heldUntil === null || controller.signal.aborted) return;
        try {
          heldUntil = await queue.renewLease(job.id, heldUntil);
          if (heldUntil === null) controller.abort(new LeaseLost());
        } catch (error) {
          log({ level: 'warn', msg: 'renewing a job lease failed', job: job.id, kind: job.kind, error: String(error) });
        }
      });
    }, Math.max(1, Math.floor(queue.leaseMs / 3)));
    return {
      async stop() {
        clearInterval(beat);
        await renewal;
        return heldUntil;
      },
    };
  }

  async function drain(): Promise<number> {
    let done = 0;
    // The first job runs in a turn of its own, not in that of the request that queued it (notify).
    await yieldToEventLoop();
    if (stopped) return done;
    for (let job = await queue.claim(); job; job = stopped ? null : await queue.claim()) {
      // Claimed while the runner stopped: handed back at once, never left leased to a runner that is gone.
      if (stopped) {
        await queue.handBack(job.id, job.leaseUntil!);
        break;
      }
      await runJob(job, handlers[job.kind]);
      done++;
      // A turn of the event loop between jobs: requests queued behind one job's last write do not also wait for the next job's first step.
      await yieldToEventLoop();
    }
    return done;
  }

  /**
   * Drains the due jobs, one drain at a time. A call while a drain is under way asks for one more
   * after it (drainAgain): that drain's last claim may have looked before the job this call is about
   * was queued, and the job would otherwise wait for the next poll.
   */
  const runDueJobs = (): Promise<number> => {
    if (running) {
      drainAgain = true;
      return running;
    }
    running = (async () => {
      let done = 0;
      do {
        drainAgain = false;
        done += await drain();
      } while (drainAgain && !stopped);
      return done;
    })().finally(() => {
      running = null;
    });
    return running;
  };

  return {
    runDueJobs,
    /**
     * Run a job its creator has just claimed (JobQueue.enqueueClaimed) now, beside the loop, with the
     * same budget, stop and bookkeeping; resolves with what `work` returned (undefined when it did not
     * end in a result, or when the runner is stopped: the job's lease is then handed back, for
     * another instance or the next start).
     */
    async runClaimed<T>(job: Job, work: (job: Job, signal: AbortSignal) => Promise<T>): Promise<T | undefined> {
      if (stopped) {
        await queue.handBack(job.id, job.leaseUntil!);
        return undefined;
      }
      let outcome: T | undefined;
      await runJob(job, async (claimed, signal) => {
        outcome = await work(claimed, signal);
      });
      return outcome;
    },
    /**
     * Stops the runs in hand of the store's jobs (those `which` picks): their calls and waits end at
     * once with StoreStopped(`why`), and no failure is counted. Resolves, with how many there were,
     * once each has ended (a step writing its page finishes that page's transactions first).
     */
    async stopStore(storeId: string, why: string, which: (job: Job) => boolean = () => true): Promise<number> {
      const runs = [...inFlight].filter(([, { job }]) => job.storeId === storeId && which(job));
      for (const [controller] of runs) controller.abort(new StoreStopped(why));
      await Promise.all(runs.map(([, { run }]) => run));
      return runs.length;
    },
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
      // The leases a previous process left are released before the first claim (the one runner only).
      const released = timer || !releaseLeftLeases ? null : queue.releaseLeases();
      timer ??= setInterval(() => void runDueJobs(), pollMs);
      void Promise.resolve(released).then(runDueJobs, (error) => log({ level: 'error', msg: 'releasing the leases of jobs left running failed', error: String(error) }));
    },
    /** No new run starts; the runs in hand are aborted (ShuttingDown) and waited for. Safe to call twice. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      if (wake) clearTimeout(wake.timer);
      wake = null;
      for (const controller of inFlight.keys()) controller.abort(new ShuttingDown());
      await Promise.all([running, ...[...inFlight.values()].map(({ run }) => run)]);
    },
  };
}
