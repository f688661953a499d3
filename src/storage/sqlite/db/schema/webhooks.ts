import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/**
 * One row per verified delivery (duplicates only bump `duplicates`). Holds what happened, never the
 * payload: no customer personal data is kept. A delivery whose removal is confirmed with the
 * platform later (outcome `queued`) gets that confirmation's outcome when it is known.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id').notNull(),
    platform: text('platform').notNull(),
    topic: text('topic').notNull(),
    /** Platform A event id, platform B payload hash, platform C product id + modification time. */
    dedupeKey: text('dedupe_key'),
    productId: text('product_id'),
    outcome: text('outcome').notNull(),
    /** Why a `refused` delivery changed nothing (platforms/types.ts RefusalReason); null otherwise. */
    reason: text('reason'),
    duplicates: integer('duplicates').notNull().default(0),
    receivedAt: integer('received_at').notNull(),
  },
  // Only the indexes a query uses: each one is another B-tree written by every delivery.
  (table) => [
    // The dedupe point: every delivery looks itself up here (src/webhooks/dispatch.ts).
    uniqueIndex('webhook_deliveries_dedupe_idx').on(table.storeId, table.dedupeKey).where(sql`dedupe_key IS NOT NULL`),
    // Retention deletes the oldest first (src/retention/records.ts).
    index('webhook_deliveries_received_idx').on(table.receivedAt),
  ],
);

/** Order topics (spec §4.3 rule 4): the order's platform id and what happened, nothing about the buyer. */
export const orderSignals = sqliteTable(
  'order_signals',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id').notNull(),
    topic: text('topic').notNull(),
    orderId: text('order_id').notNull(),
    status: text('status'),
    receivedAt: integer('received_at').notNull(),
  },
  (table) => [
    // Retention deletes the oldest first (src/retention/records.ts).
    index('order_signals_received_idx').on(table.receivedAt),
    // Whether another store of svc's platform-A app holds an order (src/webhooks/dispatch.ts).
    index('order_signals_order_idx').on(table.orderId),
  ],
);
