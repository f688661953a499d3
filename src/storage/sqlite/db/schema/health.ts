import { integer, sqliteTable } from 'drizzle-orm/sqlite-core';

/**
 * One row `/healthz` rewrites (at most every few seconds) to learn whether the database still takes
 * writes: a read-only file, a full disk or a lost write lock show up here before a scan is lost.
 */
export const healthProbe = sqliteTable('health_probe', {
  id: integer('id').primaryKey(),
  writtenAt: integer('written_at').notNull(),
});
