import type { Database } from 'bun:sqlite';
import type { Clock } from '../lib/clock.ts';
import { DAY_MS } from '../lib/time.ts';

/** Rows per deleting transaction: a few milliseconds of work, so queued scans never wait long. */
export const RETENTION_BATCH_ROWS = 500;
const HOUR_MS = 3_600_000;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * `SVC_SCAN_RETENTION_DAYS`: deletes scans whose scannedAt is older than the retention, in small
 * transactions (over the scanned_at index) with a turn of the event loop between them, so the scan
 * writer's group commits interleave instead of waiting for one long delete.
 */
export function createScanRetention(sqlite: Database, clock: Clock, days: number, batchRows = RETENTION_BATCH_ROWS) {
  const deleteBatch = sqlite.prepare<unknown, [number, number]>(
    'DELETE FROM scans WHERE rowid IN (SELECT rowid FROM scans WHERE scanned_at < ? ORDER BY scanned_at LIMIT ?)',
  );
  let timer: ReturnType<typeof setInterval> | null = null;
  let running: Promise<number> | null = null;

  async function sweep(): Promise<number> {
    const cutoff = clock.now() - days * DAY_MS;
    let deleted = 0;
    for (;;) {
      const { changes } = deleteBatch.run(cutoff, batchRows);
      deleted += changes;
      if (changes < batchRows) return deleted;
      await yieldToEventLoop();
    }
  }

  return {
    /** Delete every expired scan now; resolves with how many. One sweep at a time. */
    runOnce(): Promise<number> {
      if (days === 0) return Promise.resolve(0);
      running ??= sweep().finally(() => {
        running = null;
      });
      return running;
    },
    /** Sweep now and then every `intervalMs` (hourly by default); nothing when retention is 0. */
    start(intervalMs = HOUR_MS): void {
      if (days === 0 || timer) return;
      const tick = () => {
        this.runOnce().catch((error) => console.error(JSON.stringify({ level: 'error', msg: 'scan retention failed', error: String(error) })));
      };
      timer = setInterval(tick, intervalMs);
      tick();
    },
    /** Stop the timer and wait for a sweep in progress (graceful shutdown, before the database closes). */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
