import { sql } from 'drizzle-orm';
import { index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { CatalogEntryType } from '../../../../catalog/entry-data.ts';
import type { Availability } from '../../../../catalog/product-data.ts';
import { int8, jsonText } from './columns.ts';
import { stores } from './stores.ts';

// The twins of src/storage/sqlite/db/schema/catalog.ts (what each table and column means is documented there).

export const products = pgTable(
  'products',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    productId: text('product_id').notNull(),
    handle: text('handle'),
    title: text('title').notNull().default(''),
    descriptionHtml: text('description_html'),
    descriptionText: text('description_text'),
    price: text('price'),
    currency: text('currency'),
    availability: text('availability').$type<Availability>(),
    sku: text('sku'),
    barcode: text('barcode'),
    mpn: text('mpn'),
    brand: text('brand'),
    images: jsonText('images').$type<string[]>().notNull(),
    url: text('url'),
    options: jsonText('options').$type<string[]>().notNull().default(sql`'[]'`),
    platformUpdatedAt: int8('platform_updated_at').notNull(),
    raw: jsonText('raw'),
    removedAt: int8('removed_at'),
    listedAt: int8('listed_at'),
    syncedAt: int8('synced_at').notNull(),
    createdAt: int8('created_at').notNull(),
  },
  (table) => [uniqueIndex('products_store_product_idx').on(table.storeId, table.productId), index('products_store_idx').on(table.storeId, table.id)],
);

export const productVariants = pgTable(
  'product_variants',
  {
    productRowId: text('product_row_id')
      .notNull()
      .references(() => products.id),
    position: integer('position').notNull(),
    variantId: text('variant_id').notNull(),
    title: text('title'),
    sku: text('sku'),
    barcode: text('barcode'),
    mpn: text('mpn'),
    price: text('price'),
    compareAtPrice: text('compare_at_price'),
    availability: text('availability').$type<Availability>(),
    options: jsonText('options').$type<Record<string, string>>().notNull(),
    image: text('image'),
    url: text('url'),
  },
  (table) => [primaryKey({ columns: [table.productRowId, table.position] })],
);

export const catalogEntries = pgTable(
  'catalog_entries',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    type: text('type').$type<CatalogEntryType>().notNull(),
    entryId: text('entry_id').notNull(),
    handle: text('handle'),
    title: text('title').notNull().default(''),
    url: text('url'),
    platformUpdatedAt: int8('platform_updated_at'),
    listedAt: int8('listed_at').notNull(),
    syncedAt: int8('synced_at').notNull(),
    createdAt: int8('created_at').notNull(),
  },
  (table) => [
    uniqueIndex('catalog_entries_store_entry_idx').on(table.storeId, table.type, table.entryId),
    index('catalog_entries_store_handle_idx').on(table.storeId, table.type, table.handle),
  ],
);
