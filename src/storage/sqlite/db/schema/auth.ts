import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/** `sk_live_` API keys. Only the SHA-256 of the key is stored; the raw key is shown once at creation. */
export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull().unique(),
    /** First characters of the key, enough for an operator to recognise it, useless to an attacker. */
    keyPrefix: text('key_prefix').notNull(),
    scopes: text('scopes', { mode: 'json' }).$type<string[]>().notNull(),
    allowedDomains: text('allowed_domains', { mode: 'json' }).$type<string[]>().notNull(),
    storeId: text('store_id'),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
  },
  (table) => [index('api_keys_store_id_idx').on(table.storeId)],
);

/**
 * When each API key was last used, to about a minute (src/auth/key-usage.ts). Not a column of
 * api_keys: every write to that table empties the cache of verified keys (auth/verified-cache.ts).
 */
export const apiKeyUsage = sqliteTable('api_key_usage', {
  keyId: text('key_id')
    .primaryKey()
    .references(() => apiKeys.id, { onDelete: 'cascade' }),
  lastUsedAt: integer('last_used_at').notNull(),
});

/**
 * Sign-ups from the landing page or the extension popup; each holds one public `apiToken` (as a hash).
 * An email has one first lead; each later public sign-up with it is a lead of its own that names the
 * first in `repeatOf` (sign-up never tells whether an address is known: README, "Sign-up").
 */
export const leads = sqliteTable(
  'leads',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    /** The id of the email's first lead when this one is a repeat sign-up; null for the first. */
    repeatOf: text('repeat_of'),
    verified: integer('verified', { mode: 'boolean' }).notNull().default(false),
    /** SHA-256 of the current token; null once revoked. Rotation replaces it, so the old token stops at once. */
    tokenHash: text('token_hash').unique(),
    tokenIssuedAt: integer('token_issued_at'),
    tokenRevokedAt: integer('token_revoked_at'),
    verifiedAt: integer('verified_at'),
    /** When a scan sent with the lead's token was first committed; null while it has sent none. */
    firstScanAt: integer('first_scan_at'),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [
    // One first lead per email; repeat sign-ups find it through this index.
    uniqueIndex('leads_email_unique').on(table.email).where(sql`repeat_of IS NULL`),
    // The admin listing pages newest first.
    index('leads_created_idx').on(table.createdAt, table.id),
    // Retention of sign-ups that were never verified and never sent a scan (src/retention/records.ts).
    index('leads_unused_idx').on(table.createdAt).where(sql`verified = 0 AND first_scan_at IS NULL`),
  ],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type LeadRow = typeof leads.$inferSelect;
