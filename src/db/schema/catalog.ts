import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { stores } from './stores.ts';

export type Availability = 'in_stock' | 'out_of_stock' | 'backorder';

/**
 * A store's synced catalogue, one row per platform product. A removed product keeps its row as a
 * tombstone (`removedAt`) so a late, older delivery cannot bring it back, and so records hanging off
 * `products.id` (enrichment, later) survive a remove/restore. Catalogue data only: never enrichment.
 */
export const products = sqliteTable(
  'products',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    /** The platform's product id, as a string. */
    productId: text('product_id').notNull(),
    handle: text('handle'),
    title: text('title').notNull().default(''),
    descriptionHtml: text('description_html'),
    descriptionText: text('description_text'),
    /** Decimal string as the platform sends it (no float rounding). */
    price: text('price'),
    currency: text('currency'),
    availability: text('availability').$type<Availability>(),
    sku: text('sku'),
    gtin: text('gtin'),
    brand: text('brand'),
    images: text('images', { mode: 'json' }).$type<string[]>().notNull(),
    url: text('url'),
    /** The platform's own modification time (epoch ms): an older payload never overwrites a newer one. */
    platformUpdatedAt: integer('platform_updated_at').notNull(),
    raw: text('raw', { mode: 'json' }),
    removedAt: integer('removed_at'),
    syncedAt: integer('synced_at').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [uniqueIndex('products_store_product_idx').on(table.storeId, table.productId), index('products_store_idx').on(table.storeId, table.id)],
);

export type ProductRow = typeof products.$inferSelect;
