import { expiringRows } from '../expiring-rows.ts';
import type { RetentionRecords } from '../retention.ts';
import type { PostgresClient } from './client.ts';

const EXPIRING = expiringRows('false');

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
