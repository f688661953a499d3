import type { AppDatabase } from '../../db/index.ts';
import type { ExpiringKind } from '../../retention/records.ts';
import type { RetentionRecords } from '../retention.ts';
import type { Synchronous } from '../synchronous.ts';
import { promised } from './promised.ts';

/**
 * The rows of each kind that expire: `table` rows matching `where` whose `column` is before the
 * cutoff. Each has an index over exactly these rows (src/db/schema), so a batch reads only what it
 * deletes, oldest first, however large the table.
 */
const EXPIRING = {
  webhook_deliveries: { table: 'webhook_deliveries', column: 'received_at', where: '' },
  finished_jobs: { table: 'jobs', column: 'finished_at', where: "status IN ('done', 'dead') AND " },
  store_events: { table: 'store_events', column: 'occurred_at', where: '' },
  order_signals: { table: 'order_signals', column: 'received_at', where: '' },
  unused_leads: { table: 'leads', column: 'created_at', where: 'verified = 0 AND first_scan_at IS NULL AND ' },
} as const satisfies Record<ExpiringKind, { table: string; column: string; where: string }>;

/** Record retention's deletes on SQLite, answered synchronously (each statement its own transaction). */
export function sqliteRetentionRecordsSync({ sqlite }: Pick<AppDatabase, 'sqlite'>): Synchronous<RetentionRecords> {
  const statements = new Map<ExpiringKind, ReturnType<typeof prepare>>();
  const prepare = (kind: ExpiringKind) => {
    const { table, column, where } = EXPIRING[kind];
    return sqlite.prepare<never, [number, number]>(`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where}${column} < ?1 ORDER BY ${column} LIMIT ?2)`);
  };
  return {
    deleteOldest(kind, cutoff, limit) {
      let statement = statements.get(kind);
      if (statement === undefined) statements.set(kind, (statement = prepare(kind)));
      return statement.run(cutoff, limit).changes;
    },
  };
}

/** Record retention's deletes on SQLite. */
export const sqliteRetentionRecords = (database: Pick<AppDatabase, 'sqlite'>): RetentionRecords => promised(sqliteRetentionRecordsSync(database));
