import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { StoreSettings } from '../../../../stores/settings.ts';
import type { CredentialKind, HookStatus, Platform } from '../../../../stores/types.ts';
import { int8, jsonText } from './columns.ts';

// The twins of src/storage/sqlite/db/schema/stores.ts (what each table and column means is documented there).

export const stores = pgTable(
  'stores',
  {
    id: text('id').primaryKey(),
    platform: text('platform').$type<Platform>().notNull(),
    domain: text('domain').notNull(),
    platformRef: text('platform_ref').notNull(),
    currency: text('currency'),
    status: text('status').$type<'active' | 'inactive'>().notNull(),
    credentialKind: text('credential_kind').$type<CredentialKind>().notNull(),
    credentials: text('credentials').notNull(),
    webhookSecret: text('webhook_secret'),
    hookStatus: text('hook_status').$type<HookStatus>().notNull(),
    hookError: text('hook_error'),
    hookTopics: jsonText('hook_topics').$type<string[]>().notNull(),
    hooksRegisteredAt: int8('hooks_registered_at'),
    hooksConfirmedAt: int8('hooks_confirmed_at'),
    deactivatedAt: int8('deactivated_at'),
    signalsWithdrawnAt: int8('signals_withdrawn_at'),
    disconnectedAt: int8('disconnected_at'),
    syncPausedAt: int8('sync_paused_at'),
    settings: jsonText('settings').$type<StoreSettings>().notNull().default(sql`'{}'`),
    createdAt: int8('created_at').notNull(),
    updatedAt: int8('updated_at').notNull(),
  },
  (table) => [uniqueIndex('stores_platform_ref_idx').on(table.platform, table.platformRef)],
);

export const storeEvents = pgTable(
  'store_events',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    kind: text('kind').notNull(),
    occurredAt: int8('occurred_at').notNull(),
  },
  (table) => [index('store_events_store_idx').on(table.storeId, table.occurredAt), index('store_events_occurred_idx').on(table.occurredAt)],
);

/** Platform C's creation-ping windows (the twin of src/storage/sqlite/db/schema/stores.ts). */
export const hookPingWindows = pgTable('hook_ping_windows', {
  storeId: text('store_id')
    .primaryKey()
    .references(() => stores.id),
  openedAt: int8('opened_at').notNull(),
  closesAt: int8('closes_at').notNull(),
});

export const jobs = pgTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    storeId: text('store_id').notNull(),
    payload: jsonText('payload').$type<Record<string, unknown>>().notNull(),
    status: text('status').$type<'queued' | 'running' | 'done' | 'dead'>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    runAt: int8('run_at').notNull(),
    leaseUntil: int8('lease_until'),
    lastError: text('last_error'),
    createdAt: int8('created_at').notNull(),
    finishedAt: int8('finished_at'),
    /** What makes it the same job as another: two unfinished (queued or running) jobs never share a key (null: none). */
    activeKey: text('active_key'),
  },
  (table) => [
    // Enqueueing the same job twice (two requests, two instances) stores one (JobRecords.enqueueOnce).
    uniqueIndex('jobs_active_key_idx').on(table.activeKey).where(sql`status IN ('queued', 'running')`),
    index('jobs_due_idx').on(table.status, table.runAt).where(sql`status IN ('queued', 'running')`),
    index('jobs_finished_idx').on(table.finishedAt).where(sql`status IN ('done', 'dead')`),
  ],
);
