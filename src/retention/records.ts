import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import { inBatches, periodicTask } from '../lib/periodic.ts';
import { DAY_MS } from '../lib/time.ts';
import type { WritePause } from '../lib/write-pause.ts';
import type { RetentionRecords } from '../storage/retention.ts';

/** At most this many rows per deleting transaction; fewer when that would take longer than a step may (lib/periodic.ts). */
export const RECORD_RETENTION_BATCH_ROWS = 500;
const HOUR_MS = 3_600_000;

/** What each retention setting deletes (RetentionRecords.deleteOldest says which rows of each kind count). */
const RULES = [
  { setting: 'webhookDeliveryDays', kind: 'webhook_deliveries' },
  // Only finished work: queued and running jobs (and retries waiting for their turn) are never touched.
  { setting: 'jobDays', kind: 'finished_jobs' },
  { setting: 'storeEventDays', kind: 'store_events' },
  { setting: 'orderSignalDays', kind: 'order_signals' },
  // Sign-ups never verified that never sent a scan: their token was never used.
  { setting: 'unusedLeadDays', kind: 'unused_leads' },
] as const satisfies readonly { setting: keyof Config['retention']; kind: string }[];

/** A kind of record that expires. */
export type ExpiringKind = (typeof RULES)[number]['kind'];

export interface RecordRetentionOptions {
  /** Most rows per deleting transaction (RECORD_RETENTION_BATCH_ROWS). */
  batchRows?: number;
  /** The engine's pause of the writes that can wait (SQLite's, while its WAL checkpointer catches up): no batch starts during it. */
  pause?: Pick<WritePause, 'paused' | 'afterPause'>;
}

/**
 * Deletes expired webhook deliveries, finished jobs, store events, order signals and unused leads
 * (SVC_*_RETENTION_DAYS, see docs/operations.md), in transactions of at most `batchRows` rows with a
 * turn of the event loop between them. A setting of 0 keeps its records forever.
 */
export function createRecordRetention(records: RetentionRecords, clock: Clock, days: Config['retention'], { batchRows = RECORD_RETENTION_BATCH_ROWS, pause }: RecordRetentionOptions = {}) {
  const rules = RULES.filter((rule) => days[rule.setting] > 0).map((rule) => ({ days: days[rule.setting], kind: rule.kind }));

  async function sweep(signal: AbortSignal): Promise<number> {
    let deleted = 0;
    for (const rule of rules) {
      const cutoff = clock.now() - rule.days * DAY_MS;
      deleted += await inBatches((rows) => records.deleteOldest(rule.kind, cutoff, rows), batchRows, signal, { pause });
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
