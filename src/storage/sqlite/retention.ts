import type { AppDatabase } from './db/index.ts';
import type { ExpiringKind } from '../../retention/records.ts';
import { expiringRows } from '../expiring-rows.ts';
import type { RetentionRecords } from '../retention.ts';
import type { Synchronous } from '../synchronous.ts';
import { promised } from './promised.ts';

// `verified = 0`, as the partial index of unused leads spells it (so the planner takes the index).
const EXPIRING = expiringRows('0');

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
