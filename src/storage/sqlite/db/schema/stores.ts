import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import type { StoreSettings } from '../../../../stores/settings.ts';
import type { CredentialKind, HookStatus, Platform } from '../../../../stores/types.ts';

/** A connected store. Credentials and the webhook secret are sealed (lib/secrets.ts), never returned. */
export const stores = sqliteTable(
  'stores',
  {
    id: text('id').primaryKey(),
    platform: text('platform').$type<Platform>().notNull(),
    /** Storefront domain given by the operator (platform A: the `<name>.<suffix>` shop domain). */
    domain: text('domain').notNull(),
    /** What deliveries name the store by: A shop domain, B store hash, C site URL. Unique per platform. */
    platformRef: text('platform_ref').notNull(),
    currency: text('currency'),
    status: text('status').$type<'active' | 'inactive'>().notNull(),
    credentialKind: text('credential_kind').$type<CredentialKind>().notNull(),
    credentials: text('credentials').notNull(),
    webhookSecret: text('webhook_secret'),
    hookStatus: text('hook_status').$type<HookStatus>().notNull(),
    hookError: text('hook_error'),
    hookTopics: text('hook_topics', { mode: 'json' }).$type<string[]>().notNull(),
    hooksRegisteredAt: integer('hooks_registered_at'),
    /** Platform C's creation ping arrived: the platform delivered to us at least once. */
    hooksConfirmedAt: integer('hooks_confirmed_at'),
    deactivatedAt: integer('deactivated_at'),
    /** Set by `app/uninstalled` and by a disconnect; the signals capability serves nothing for the store while set. */
    signalsWithdrawnAt: integer('signals_withdrawn_at'),
    /** The operator disconnected the store, keeping its data (stores/removal.ts); cleared when credentials are saved again. */
    disconnectedAt: integer('disconnected_at'),
    /** The operator paused its catalogue sync: no pass runs until it is resumed (sync/service.ts). */
    syncPausedAt: integer('sync_paused_at'),
    /** Merchant-listing facts set by the operator (stores/settings.ts): emitted on every offer. */
    settings: text('settings', { mode: 'json' }).$type<StoreSettings>().notNull().default({}),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [uniqueIndex('stores_platform_ref_idx').on(table.platform, table.platformRef)],
);

/** Lifecycle and privacy events against a store (uninstall, signals withdrawn, redact requests). No personal data. */
export const storeEvents = sqliteTable(
  'store_events',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    kind: text('kind').notNull(),
    occurredAt: integer('occurred_at').notNull(),
  },
  (table) => [index('store_events_store_idx').on(table.storeId, table.occurredAt), index('store_events_occurred_idx').on(table.occurredAt)],
);

/**
 * Stores whose hooks svc is registering or has just registered on platform C, with the window in
 * which the platform's unsigned creation ping may confirm them (src/stores/registry.ts): in the
 * database, so a ping that reaches another instance than the one registering is honoured too.
 */
export const hookPingWindows = sqliteTable('hook_ping_windows', {
  storeId: text('store_id')
    .primaryKey()
    .references(() => stores.id),
  openedAt: integer('opened_at').notNull(),
  closesAt: integer('closes_at').notNull(),
});

/** Durable background work (platform-B product fetches): retried with exponential backoff. */
export const jobs = sqliteTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    storeId: text('store_id').notNull(),
    payload: text('payload', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    status: text('status').$type<'queued' | 'running' | 'done' | 'dead'>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    runAt: integer('run_at').notNull(),
    /** While running: when the lease ends and another worker (or the restarted process) may take it. */
    leaseUntil: integer('lease_until'),
    lastError: text('last_error'),
    createdAt: integer('created_at').notNull(),
    finishedAt: integer('finished_at'),
    /** What makes it the same job as another: two unfinished (queued or running) jobs never share a key (null: none). */
    activeKey: text('active_key'),
  },
  (table) => [
    // Enqueueing the same job twice (two requests, two instances) stores one (JobRecords.enqueueOnce).
    uniqueIndex('jobs_active_key_idx').on(table.activeKey).where(sql`status IN ('queued', 'running')`),
    index('jobs_due_idx').on(table.status, table.runAt).where(sql`status IN ('queued', 'running')`),
    // Retention of finished work (src/retention/records.ts); queued and running jobs are never in it.
    index('jobs_finished_idx').on(table.finishedAt).where(sql`status IN ('done', 'dead')`),
  ],
);

export type StoreRow = typeof stores.$inferSelect;
export type JobRow = typeof jobs.$inferSelect;
