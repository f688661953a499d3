import { integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import type { SyncKind, SyncTrigger } from '../../../../sync/types.ts';
import { int8 } from './columns.ts';
import { stores } from './stores.ts';

// The twin of src/storage/sqlite/db/schema/sync.ts (what the table and its columns mean is documented there).

export const catalogSyncs = pgTable(
  'catalog_syncs',
  {
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    kind: text('kind').$type<SyncKind>().notNull(),
    runId: text('run_id').notNull(),
    trigger: text('trigger').$type<SyncTrigger>().notNull(),
    status: text('status').$type<'running' | 'done' | 'failed'>().notNull(),
    cursor: text('cursor'),
    pageSpan: text('page_span'),
    pages: int8('pages').notNull().default(0),
    items: int8('items').notNull().default(0),
    sweptThrough: text('swept_through'),
    removed: int8('removed').notNull().default(0),
    error: text('error'),
    startedAt: int8('started_at').notNull(),
    finishedAt: int8('finished_at'),
    lastCompletedAt: int8('last_completed_at'),
    failedPasses: integer('failed_passes').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.storeId, table.kind] })],
);
