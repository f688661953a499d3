import type { Database } from 'bun:sqlite';
import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import { inBatches, periodicTask } from '../lib/periodic.ts';
import { DAY_MS } from '../lib/time.ts';
import { writePause } from '../lib/write-pause.ts';

/** At most this many rows per deleting transaction; fewer when that would take longer than a step may (lib/periodic.ts). */
export const RECORD_RETENTION_BATCH_ROWS = 500;
const HOUR_MS = 3_600_000;

/**
 * What each retention setting deletes: rows of `table` whose `column` is older than the cutoff and
 * that match `where`. Each has an index over exactly these rows (src/db/schema), so a batch reads
 * only what it deletes, oldest first, however large the table.
 */
const RULES = [
  { setting: 'webhookDeliveryDays', table: 'webhook_deliveries', column: 'received_at', where: '' },
  // Only finished work: queued and running jobs (and retries waiting for their turn) are never touched.
  { setting: 'jobDays', table: 'jobs', column: 'finished_at', where: "status IN ('done', 'dead') AND " },
  { setting: 'storeEventDays', table: 'store_events', column: 'occurred_at', where: '' },
  { setting: 'orderSignalDays', table: 'order_signals', column: 'received_at', where: '' },
  // Sign-ups never verified that never sent a scan: their token was never used.
  { setting: 'unusedLeadDays', table: 'leads', column: 'created_at', where: 'verified = 0 AND first_scan_at IS NULL AND ' },
] as const satisfies readonly { setting: keyof Config['retention']; table: string; column: string; where: string }[];

/**
 * Deletes expired webhook deliveries, finished jobs, store events, order signals and unused leads
 * (SVC_*_RETENTION_DAYS, see docs/operations.md), in transactions of `batchRows` rows with a turn
 * of the event loop between them. A setting of 0 keeps its records forever.
 */
export function createRecordRetention(sqlite: Database, clock: Clock, days: Config['retention'], batchRows = RECORD_RETENTION_BATCH_ROWS) {
  const rules = RULES.filter((rule) => days[rule.setting] > 0).map((rule) => ({
    days: days[rule.setting],
    deleteOldest: sqlite.prepare<never, [number, number]>(
      `DELETE FROM ${rule.table} WHERE rowid IN (SELECT rowid FROM ${rule.table} WHERE ${rule.where}${rule.column} < ?1 ORDER BY ${rule.column} LIMIT ?2)`,
    ),
  }));

  async function sweep(signal: AbortSignal): Promise<number> {
    let deleted = 0;
    for (const rule of rules) {
      const cutoff = clock.now() - rule.days * DAY_MS;
      deleted += await inBatches((rows) => rule.deleteOldest.run(cutoff, rows).changes, batchRows, signal, { pause: writePause(sqlite) });
    }
    return deleted;
  }
  const task = periodicTask('record retention', sweep);

  return {
    /** Delete every expired record now; resolves with how many. One sweep at a time. */
    runOnce: task.runOnce,
    /** Sweep now and then every `intervalMs` (hourly by default). */
    start(intervalMs = HOUR_MS): void {
      if (rules.length > 0) task.start(intervalMs);
    },
    /** Stop the timer and wait for a sweep in progress (graceful shutdown, before the database closes). */
    stop: task.stop,
  };
}
