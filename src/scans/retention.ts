import type { Database } from 'bun:sqlite';
import type { Clock } from '../lib/clock.ts';
import { inBatches, periodicTask } from '../lib/periodic.ts';
import { DAY_MS } from '../lib/time.ts';
import { writePause } from '../lib/write-pause.ts';
import { dayOf, type ScanRollups } from './rollups.ts';

/** At most this many rows per deleting transaction; fewer when that would take longer than a step may (lib/periodic.ts). */
export const RETENTION_BATCH_ROWS = 500;
const HOUR_MS = 3_600_000;

/**
 * `SVC_SCAN_RETENTION_DAYS`: deletes scans whose UTC day ended more than the retention ago (whole
 * days, so the stats rollups of a day are dropped, never rebuilt from the scans left: rebuilding a
 * cut day held the event loop for over 100 ms). First the rollups of the expired days go, then
 * the scans, oldest first over the scanned_at index, in timed transactions with a turn of the
 * event loop between them, so the scan writer's group commits interleave; stats never count a
 * deleted scan.
 */
export function createScanRetention(sqlite: Database, clock: Clock, days: number, rollups: ScanRollups, batchRows = RETENTION_BATCH_ROWS) {
  const deleteOldest = sqlite.prepare<{ rowid: number; hostname: string }, [number, number]>(
    'DELETE FROM scans WHERE rowid IN (SELECT rowid FROM scans WHERE scanned_at < ? ORDER BY scanned_at LIMIT ?) RETURNING rowid, hostname',
  );
  const deleteBatch = sqlite.transaction((cutoff: number, rows: number): number => {
    const deleted = deleteOldest.all(cutoff, rows);
    if (deleted.length > 0) rollups.afterDeleting(deleted);
    return deleted.length;
  });
  const sweep = async (signal: AbortSignal): Promise<number> => {
    const firstKept = dayOf(clock.now() - days * DAY_MS);
    await rollups.forgetBefore(firstKept, signal);
    // Stopped before every expired day's rollups were dropped: no scan may go yet.
    if (signal.aborted) return 0;
    const deleted = await inBatches((rows) => deleteBatch(firstKept * DAY_MS, rows), batchRows, signal, { pause: writePause(sqlite) });
    // Rollups the roller made meanwhile for expired days (also when stopped: they are cheap to drop).
    await rollups.forgetBefore(firstKept);
    return deleted;
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
