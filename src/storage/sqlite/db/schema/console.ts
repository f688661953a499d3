import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { apiKeys } from './auth.ts';

/**
 * Web console sessions (src/console): one per sign-in with an API key. Only the SHA-256 of the
 * cookie's random id is stored; the session acts with its key's scopes for as long as the key is
 * active and the session has been used within the idle timeout.
 */
export const consoleSessions = sqliteTable(
  'console_sessions',
  {
    idHash: text('id_hash').primaryKey(),
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
    lastSeenAt: integer('last_seen_at').notNull(),
  },
  (table) => [index('console_sessions_key_id_idx').on(table.keyId), index('console_sessions_last_seen_at_idx').on(table.lastSeenAt)],
);

export type ConsoleSessionRow = typeof consoleSessions.$inferSelect;
