import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { SyncKind, SyncTrigger } from '../../../../sync/types.ts';
import { stores } from './stores.ts';

/**
 * The latest catalogue sync pass of a store, one row per kind. The position of the next page
 * (`cursor`) is committed in the same transaction as the page before it, so a pass resumes where it
 * stopped after a crash or restart and never applies a page twice (and the sweep after the last
 * page, `sweptThrough`, goes on from the last id it went through); `runId` ties the pass to its
 * queued job, so a pass superseded by a newer trigger stops at its next page.
 */
export const catalogSyncs = sqliteTable(
  'catalog_syncs',
  {
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    kind: text('kind').$type<SyncKind>().notNull(),
    runId: text('run_id').notNull(),
    trigger: text('trigger').$type<SyncTrigger>().notNull(),
    status: text('status').$type<'running' | 'done' | 'failed'>().notNull(),
    /** The platform's cursor (platform A) or page number of the next page; null: the first page. */
    cursor: text('cursor'),
    /**
     * The lowest and highest item id of the page before (`low:high`): the next page must reach
     * beyond it (a list in id order) or differ from it, or the pass is not advancing. Null before
     * the first page.
     */
    pageSpan: text('page_span'),
    pages: integer('pages').notNull().default(0),
    /** Items read from the platform in this pass (applied or older than what svc holds). */
    items: integer('items').notNull().default(0),
    /**
     * After the last page, the sweep for what the pass did not list, in steps: the last id it has gone
     * through ('' when it has just begun). Null while pages are being read.
     */
    sweptThrough: text('swept_through'),
    /** Items the sweep has removed (the platform no longer has them). */
    removed: integer('removed').notNull().default(0),
    /** Failed: why. Running: the last error, being retried with backoff. */
    error: text('error'),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at'),
    /** When a pass of this kind last went through every page (kept across later passes). */
    lastCompletedAt: integer('last_completed_at'),
    /** Passes of this kind that failed in a row (kept across later passes, 0 once one completes): the schedule waits longer after each. */
    failedPasses: integer('failed_passes').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.storeId, table.kind] })],
);

export type CatalogSyncRow = typeof catalogSyncs.$inferSelect;
