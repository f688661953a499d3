import type { WritePause } from './write-pause.ts';

/** A turn of the event loop: lets queued requests and group commits run between batches of background work. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * How long one step of background work may hold the request thread: each step is a transaction,
 * and requests queued behind it wait for it whole (issue 12: never more than 5 ms at a stretch).
 */
export const STEP_BUDGET_MS = 2;
/** Rows of the first step, before its time is known. */
const FIRST_STEP_ROWS = 8;

/**
 * Runs `batch(rows)` (one short transaction over at most `rows` rows, returning how many) until a
 * batch comes back short, with a turn of the event loop between batches; resolves with the total.
 * A batch may answer with a promise (its transaction waits on the database). Batch sizes follow
 * the time each batch took, aiming at `budgetMs` (STEP_BUDGET_MS unless the task has a budget of
 * its own, as the roller does; at most doubling from one batch to the next, never above `maxRows`;
 * the first is `firstRows`): the cost of a row varies with the table, the machine and its load, so
 * a fixed count cannot keep steps short everywhere.
 * (A batch whose rows differ widely in cost counts weighted work units instead of rows, so that a
 * size that fit one batch fits the next.) An aborted `signal` (the task is stopping) ends the run
 * at the next turn. Writes of the connection paused (`pause`, by the WAL checkpointer): no batch
 * starts, the first included, until the pause ends.
 */
export async function inBatches(
  batch: (rows: number) => number | Promise<number>,
  maxRows: number,
  signal?: AbortSignal,
  {
    now = () => performance.now(),
    pause,
    firstRows = FIRST_STEP_ROWS,
    budgetMs = STEP_BUDGET_MS,
  }: { now?: () => number; pause?: Pick<WritePause, 'paused' | 'afterPause'>; firstRows?: number; budgetMs?: number } = {},
): Promise<number> {
  let total = 0;
  let rows = Math.min(firstRows, maxRows);
  for (;;) {
    // Before every batch, the first included: a run that starts during a pause waits for its end too.
    if (pause?.paused) await new Promise<void>((resolve) => pause.afterPause(resolve));
    if (signal?.aborted) return total;
    const started = now();
    const batched = batch(rows);
    const changes = typeof batched === 'number' ? batched : await batched;
    const elapsed = now() - started;
    total += changes;
    if (changes < rows) return total;
    rows = Math.max(1, Math.min(maxRows, rows * 2, Math.floor((rows * budgetMs) / Math.max(elapsed, 0.01))));
    await yieldToEventLoop();
  }
}

/**
 * Background work run now and then every interval, one run at a time (a tick during a run joins it).
 * `stop()` clears the timer, ends the run in progress at its next step (`work` passes the signal to
 * inBatches: a large backlog must not hold a graceful shutdown for minutes; the next start goes on
 * from where it stopped) and waits for it, before the database closes.
 */
export function periodicTask(name: string, work: (signal: AbortSignal) => Promise<number>) {
  let timer: ReturnType<typeof setInterval> | null = null;
  let running: Promise<number> | null = null;
  let stopping = new AbortController();

  const runOnce = (): Promise<number> => {
    if (!running && stopping.signal.aborted) stopping = new AbortController();
    running ??= work(stopping.signal).finally(() => {
      running = null;
    });
    return running;
  };

  return {
    runOnce,
    start(intervalMs: number): void {
      if (timer) return;
      const tick = () => {
        runOnce().catch((error) => console.error(JSON.stringify({ level: 'error', msg: `${name} failed`, error: String(error) })));
      };
      timer = setInterval(tick, intervalMs);
      tick();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      stopping.abort();
      await running;
    },
  };
}
