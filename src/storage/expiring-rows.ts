// The rows record retention deletes (src/retention/records.ts), as SQL both engines answer alike:
// src/storage/sqlite/retention.ts and src/storage/postgres/retention.ts run it.
import type { ExpiringKind } from '../retention/records.ts';

/** Where the rows of a kind are and which expire: `table` rows matching `where` whose `column` is before the cutoff. */
export interface ExpiringRows {
  table: string;
  column: string;
  /** A condition ending in `AND `, or empty. */
  where: string;
}

/**
 * The rows of each kind. Each has an index over exactly these rows (src/storage/sqlite/db/schema and its
 * PostgreSQL twin), so a batch reads only what it deletes, oldest first, however large the table.
 * `no` is the engine's spelling of a false boolean column as its partial index writes it.
 */
export function expiringRows(no: '0' | 'false'): Record<ExpiringKind, ExpiringRows> {
  return {
    webhook_deliveries: { table: 'webhook_deliveries', column: 'received_at', where: '' },
    // Finished work only: queued and running jobs (and retries waiting for their turn) are never touched.
    finished_jobs: { table: 'jobs', column: 'finished_at', where: "status IN ('done', 'dead') AND " },
    store_events: { table: 'store_events', column: 'occurred_at', where: '' },
    order_signals: { table: 'order_signals', column: 'received_at', where: '' },
    // Sign-ups never verified that never sent a scan: their token was never used.
    unused_leads: { table: 'leads', column: 'created_at', where: `verified = ${no} AND first_scan_at IS NULL AND ` },
  };
}
