import type { Database } from 'bun:sqlite';
import type { Clock } from '../lib/clock.ts';
import { inBatches, periodicTask } from '../lib/periodic.ts';
import { DAY_MS } from '../lib/time.ts';
import { dayOf, type ScanRollups } from './rollups.ts';

/** At most this many rows per deleting transaction; fewer when that would take longer than a step may (lib/periodic.ts). */
export const RETENTION_BATCH_ROWS = 500;
const HOUR_MS = 3_600_000;

/**
 * `SVC_SCAN_RETENTION_DAYS`: deletes scans whose scannedAt is older than the retention, in small
 * transactions (over the scanned_at index) with a turn of the event loop between them, so the scan
 * writer's group commits interleave instead of waiting for one long delete. Each transaction also
 * brings the stats rollups in step with the rows left, so stats never count deleted scans.
 */
export function createScanRetention(sqlite: Database, clock: Clock, days: number, rollups: ScanRollups, batchRows = RETENTION_BATCH_ROWS) {
  const deleteOldest = sqlite.prepare<{ scanned_at: number }, [number, number]>(
    'DELETE FROM scans WHERE rowid IN (SELECT rowid FROM scans WHERE scanned_at < ? ORDER BY scanned_at LIMIT ?) RETURNING scanned_at',
  );
  const deleteBatch = sqlite.transaction((cutoff: number, rows: number): number => {
    const deleted = deleteOldest.all(cutoff, rows);
    // Deleted oldest first: every day before the latest deleted scan's day is now empty.
    if (deleted.length > 0) rollups.afterDeletingBefore(dayOf(Math.max(...deleted.map((row) => row.scanned_at))));
    return deleted.length;
  });
  const sweep = (): Promise<number> => {
    const cutoff = clock.now() - days * DAY_MS;
    return inBatches((rows) => deleteBatch(cutoff, rows), batchRows);
  };
  const task = periodicTask('scan retention', sweep);

  return {
    /** Delete every expired scan now; resolves with how many. One sweep at a time. */
    runOnce: (): Promise<number> => (days === 0 ? Promise.resolve(0) : task.runOnce()),
    /** Sweep now and then every `intervalMs` (hourly by default); nothing when retention is 0. */
    start(intervalMs = HOUR_MS): void {
      if (days !== 0) task.start(intervalMs);
    },
    /** Stop the timer and wait for a sweep in progress (graceful shutdown, before the database closes). */
    stop: task.stop,
  };
}
