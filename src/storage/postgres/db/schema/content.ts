import { index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import type { FaqEntityType, FaqStatus } from '../../../../faqs/types.ts';
import { products } from './catalog.ts';
import { int8, jsonText } from './columns.ts';
import { stores } from './stores.ts';

// The twins of src/storage/sqlite/db/schema/content.ts (what each table and column means is documented there).

export const faqEntries = pgTable(
  'faq_entries',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    entityType: text('entity_type').$type<FaqEntityType>().notNull(),
    entityRef: text('entity_ref').notNull(),
    question: text('question').notNull(),
    answer: text('answer').notNull(),
    position: integer('position').notNull().default(0),
    status: text('status').$type<FaqStatus>().notNull(),
    createdAt: int8('created_at').notNull(),
    updatedAt: int8('updated_at').notNull(),
  },
  (table) => [
    index('faq_entries_entity_idx').on(table.storeId, table.entityType, table.entityRef, table.status, table.position, table.createdAt),
    index('faq_entries_store_status_idx').on(table.storeId, table.status, table.id),
  ],
);

export const faqEntityChanges = pgTable(
  'faq_entity_changes',
  {
    storeId: text('store_id').notNull(),
    entityType: text('entity_type').$type<FaqEntityType>().notNull(),
    entityRef: text('entity_ref').notNull(),
    changedAt: int8('changed_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.storeId, table.entityType, table.entityRef] })],
);

export const productEnrichments = pgTable(
  'product_enrichments',
  {
    productRowId: text('product_row_id')
      .primaryKey()
      .references(() => products.id),
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    summary: text('summary').notNull(),
    highlights: jsonText('highlights').$type<string[]>().notNull(),
    attributes: jsonText('attributes').$type<Record<string, string>>().notNull(),
    createdAt: int8('created_at').notNull(),
    updatedAt: int8('updated_at').notNull(),
  },
  (table) => [index('product_enrichments_store_idx').on(table.storeId)],
);
