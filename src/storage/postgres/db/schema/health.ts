import { integer, pgTable } from 'drizzle-orm/pg-core';
import { int8 } from './columns.ts';

// The twin of src/storage/sqlite/db/schema/health.ts (what the table and its columns mean is documented there).

export const healthProbe = pgTable('health_probe', {
  /** SQLite fills an omitted integer primary key (the rowid); so does an identity. svc writes id 1 itself. */
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  writtenAt: int8('written_at').notNull(),
});
