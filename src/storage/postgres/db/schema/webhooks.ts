import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { int8 } from './columns.ts';

// The twins of src/storage/sqlite/db/schema/webhooks.ts (what each table and column means is documented there).

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id').notNull(),
    platform: text('platform').notNull(),
    topic: text('topic').notNull(),
    dedupeKey: text('dedupe_key'),
    productId: text('product_id'),
    outcome: text('outcome').notNull(),
    reason: text('reason'),
    duplicates: int8('duplicates').notNull().default(0),
    receivedAt: int8('received_at').notNull(),
  },
  (table) => [
    uniqueIndex('webhook_deliveries_dedupe_idx').on(table.storeId, table.dedupeKey).where(sql`dedupe_key IS NOT NULL`),
    index('webhook_deliveries_received_idx').on(table.receivedAt),
  ],
);

export const orderSignals = pgTable(
  'order_signals',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id').notNull(),
    topic: text('topic').notNull(),
    orderId: text('order_id').notNull(),
    status: text('status'),
    receivedAt: int8('received_at').notNull(),
  },
  (table) => [index('order_signals_received_idx').on(table.receivedAt), index('order_signals_order_idx').on(table.orderId)],
);
