import type { ExpiringKind } from '../../retention/records.ts';
import type { RetentionRecords } from '../retention.ts';
import type { PostgresClient } from './client.ts';

/**
 * The rows of each kind that expire (as on SQLite, src/storage/sqlite/retention.ts): `table` rows
 * matching `where` whose `column` is before the cutoff, each with an index over exactly these rows.
 */
const EXPIRING = {
  webhook_deliveries: { table: 'webhook_deliveries', column: 'received_at', where: '' },
  finished_jobs: { table: 'jobs', column: 'finished_at', where: "status IN ('done', 'dead') AND " },
  store_events: { table: 'store_events', column: 'occurred_at', where: '' },
  order_signals: { table: 'order_signals', column: 'received_at', where: '' },
  unused_leads: { table: 'leads', column: 'created_at', where: 'verified = false AND first_scan_at IS NULL AND ' },
} as const satisfies Record<ExpiringKind, { table: string; column: string; where: string }>;

/** Record retention's deletes on PostgreSQL (the same contract as src/storage/sqlite/retention.ts): one statement, its own transaction. */
export function postgresRetentionRecords({ sql }: Pick<PostgresClient, 'sql'>): RetentionRecords {
  return {
    async deleteOldest(kind, cutoff, limit) {
      const { table, column, where } = EXPIRING[kind];
      const deleted = await sql.unsafe(`DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE ${where}${column} < $1 ORDER BY ${column} LIMIT $2)`, [cutoff, limit]);
      return deleted.count;
    },
  };
}
