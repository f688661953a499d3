import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import type { CatalogEntryType } from '../../../../catalog/entry-data.ts';
import type { Availability } from '../../../../catalog/product-data.ts';
import { stores } from './stores.ts';

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
    /** The barcode as the platform sent it; only a valid GTIN (lib/gtin.ts) is ever published. */
    barcode: text('barcode'),
    mpn: text('mpn'),
    brand: text('brand'),
    images: text('images', { mode: 'json' }).$type<string[]>().notNull(),
    url: text('url'),
    /** Option names in the platform's order (`["Color","Size"]`); the values are on the variants. */
    options: text('options', { mode: 'json' }).$type<string[]>().notNull().default([]),
    /** The platform's own modification time (epoch ms): an older payload never overwrites a newer one. */
    platformUpdatedAt: integer('platform_updated_at').notNull(),
    raw: text('raw', { mode: 'json' }),
    removedAt: integer('removed_at'),
    /** The start of the latest catalogue sync pass that listed this product (mark-and-sweep after a complete pass). */
    listedAt: integer('listed_at'),
    syncedAt: integer('synced_at').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [uniqueIndex('products_store_product_idx').on(table.storeId, table.productId), index('products_store_idx').on(table.storeId, table.id)],
);

export type ProductRow = typeof products.$inferSelect;

/**
 * The variants of a catalogue product (src/catalog/product-data.ts ProductVariant), replaced as a whole
 * whenever the product's data is applied, in the platform's order (`position`).
 */
export const productVariants = sqliteTable(
  'product_variants',
  {
    productRowId: text('product_row_id')
      .notNull()
      .references(() => products.id),
    position: integer('position').notNull(),
    /** The platform's variant id. */
    variantId: text('variant_id').notNull(),
    title: text('title'),
    sku: text('sku'),
    /** As sent by the platform, like products.barcode. */
    barcode: text('barcode'),
    mpn: text('mpn'),
    price: text('price'),
    compareAtPrice: text('compare_at_price'),
    availability: text('availability').$type<Availability>(),
    /** Option value by option name. */
    options: text('options', { mode: 'json' }).$type<Record<string, string>>().notNull(),
    image: text('image'),
    url: text('url'),
  },
  (table) => [primaryKey({ columns: [table.productRowId, table.position] })],
);

export type ProductVariantRow = typeof productVariants.$inferSelect;

/**
 * A store's categories (collections) and content pages, one row per platform entity, written only by
 * catalogue sync (platforms send no webhooks for them). A complete pass deletes the rows it did not
 * list (mark and sweep on `listedAt`); FAQs about them are filed by ref and stay.
 */
export const catalogEntries = sqliteTable(
  'catalog_entries',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    type: text('type').$type<CatalogEntryType>().notNull(),
    /** The platform's id, as a string. */
    entryId: text('entry_id').notNull(),
    /** The handle or slug the storefront's URL uses. */
    handle: text('handle'),
    title: text('title').notNull().default(''),
    url: text('url'),
    /** The platform's own modification time (epoch ms), when it reports one (platforms B and C do not for categories). */
    platformUpdatedAt: integer('platform_updated_at'),
    /** The start of the latest sync pass that listed this entry. */
    listedAt: integer('listed_at').notNull(),
    syncedAt: integer('synced_at').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [
    uniqueIndex('catalog_entries_store_entry_idx').on(table.storeId, table.type, table.entryId),
    index('catalog_entries_store_handle_idx').on(table.storeId, table.type, table.handle),
  ],
);

export type CatalogEntryRow = typeof catalogEntries.$inferSelect;
