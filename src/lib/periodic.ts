/** A turn of the event loop: lets queued requests and group commits run between batches of background work. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs `batch` (one short transaction over at most `batchRows` rows, returning how many) until a
 * batch comes back short, with a turn of the event loop between batches; resolves with the total.
 */
export async function inBatches(batch: () => number, batchRows: number): Promise<number> {
  let total = 0;
  for (;;) {
    const changes = batch();
    total += changes;
    if (changes < batchRows) return total;
    await yieldToEventLoop();
  }
}

/**
 * Background work run now and then every interval, one run at a time (a tick during a run joins it).
 * `stop()` clears the timer and waits for the run in progress (graceful shutdown, before the database closes).
 */
export function periodicTask(name: string, work: () => Promise<number>) {
  let timer: ReturnType<typeof setInterval> | null = null;
  let running: Promise<number> | null = null;

  const runOnce = (): Promise<number> => {
    running ??= work().finally(() => {
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
      await running;
    },
  };
}
