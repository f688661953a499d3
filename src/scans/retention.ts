import type { Clock } from '../lib/clock.ts';
import { periodicTask } from '../lib/periodic.ts';
import { DAY_MS } from '../lib/time.ts';
import type { ScanRollups } from '../storage/scans.ts';
import { RETENTION_BATCH_ROWS } from './fold.ts';
import { dayOf } from './rollups.ts';

const HOUR_MS = 3_600_000;

/**
 * `SVC_SCAN_RETENTION_DAYS`: deletes scans whose UTC day ended more than the retention ago (whole
 * days, so the stats rollups of a day are dropped, never rebuilt from the scans left). The sweep
 * is the roller's (ScanRollups.retain; on SQLite in its Worker): first the rollups of the expired
 * days go, then the scans, oldest first, in short transactions, so the request thread's writes
 * interleave; stats never count a deleted scan.
 */
export function createScanRetention(clock: Clock, days: number, rollups: ScanRollups, batchRows = RETENTION_BATCH_ROWS) {
  const task = periodicTask('scan retention', (signal) => rollups.retain(dayOf(clock.now() - days * DAY_MS), signal, batchRows));

  return {
    /** Delete every expired scan now; resolves with how many. One sweep at a time. */
    runOnce: (): Promise<number> => (days === 0 ? Promise.resolve(0) : task.runOnce()),
    /** Sweep now and then every `intervalMs` (hourly by default); nothing when retention is 0. */
    start(intervalMs = HOUR_MS): void {
      if (days !== 0) task.start(intervalMs);
    },
    /** Stop the timer and wait for a sweep in progress (graceful shutdown, before the roller stops). */
    stop: task.stop,
  };
}
