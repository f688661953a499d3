import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { apiKeys } from './auth.ts';
import { int8 } from './columns.ts';

// The twin of src/storage/sqlite/db/schema/console.ts (what the table and its columns mean is documented there).

export const consoleSessions = pgTable(
  'console_sessions',
  {
    idHash: text('id_hash').primaryKey(),
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    createdAt: int8('created_at').notNull(),
    lastSeenAt: int8('last_seen_at').notNull(),
  },
  (table) => [index('console_sessions_key_id_idx').on(table.keyId), index('console_sessions_last_seen_at_idx').on(table.lastSeenAt)],
);
