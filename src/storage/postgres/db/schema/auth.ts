import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { int8, jsonText } from './columns.ts';

// The twins of src/storage/sqlite/db/schema/auth.ts (what each table and column means is documented there).

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull().unique(),
    keyPrefix: text('key_prefix').notNull(),
    scopes: jsonText('scopes').$type<string[]>().notNull(),
    allowedDomains: jsonText('allowed_domains').$type<string[]>().notNull(),
    storeId: text('store_id'),
    createdAt: int8('created_at').notNull(),
    revokedAt: int8('revoked_at'),
  },
  (table) => [index('api_keys_store_id_idx').on(table.storeId)],
);

export const apiKeyUsage = pgTable('api_key_usage', {
  keyId: text('key_id')
    .primaryKey()
    .references(() => apiKeys.id, { onDelete: 'cascade' }),
  lastUsedAt: int8('last_used_at').notNull(),
});

export const leads = pgTable(
  'leads',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    repeatOf: text('repeat_of'),
    verified: boolean('verified').notNull().default(false),
    tokenHash: text('token_hash').unique(),
    tokenIssuedAt: int8('token_issued_at'),
    tokenRevokedAt: int8('token_revoked_at'),
    verifiedAt: int8('verified_at'),
    firstScanAt: int8('first_scan_at'),
    createdAt: int8('created_at').notNull(),
  },
  (table) => [
    uniqueIndex('leads_email_unique').on(table.email).where(sql`repeat_of IS NULL`),
    index('leads_created_idx').on(table.createdAt, table.id),
    index('leads_unused_idx').on(table.createdAt).where(sql`verified = false AND first_scan_at IS NULL`),
  ],
);
