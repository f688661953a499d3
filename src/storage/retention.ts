// What record retention (src/retention/records.ts) deletes: one implementation per engine
// (src/storage/sqlite/retention.ts, src/storage/postgres/retention.ts), held to the same contract by
// test/storage/retention-records.test.ts. All times are epoch milliseconds.
import type { ExpiringKind } from '../retention/records.ts';

/** The records that grow with traffic, each kind with its own time (received, finished, occurred, created). */
export interface RetentionRecords {
  /**
   * Deletes, in one transaction, the oldest records of `kind` whose time is before `cutoff`, at most
   * `limit` of them; how many it deleted. Only the records of the kind count: finished jobs (done or
   * dead; queued, running and retrying ones never), unused leads (never verified, no scan committed
   * with their token). Each kind has an index over exactly these rows, so a batch reads only what it deletes.
   */
  deleteOldest(kind: ExpiringKind, cutoff: number, limit: number): Promise<number>;
}
