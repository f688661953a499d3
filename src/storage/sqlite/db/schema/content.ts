import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { FaqEntityType, FaqStatus } from '../../../../faqs/types.ts';
import { products } from './catalog.ts';
import { stores } from './stores.ts';

/**
 * FAQ entries of a store's product, category or page. `answer` is sanitized basic HTML
 * (lib/html.ts), `question` plain text; both are cleaned on input, so what is stored is safe to serve.
 */
export const faqEntries = sqliteTable(
  'faq_entries',
  {
    id: text('id').primaryKey(),
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    entityType: text('entity_type').$type<FaqEntityType>().notNull(),
    /** The platform id or the handle/slug of the entity. */
    entityRef: text('entity_ref').notNull(),
    question: text('question').notNull(),
    answer: text('answer').notNull(),
    position: integer('position').notNull().default(0),
    status: text('status').$type<FaqStatus>().notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    index('faq_entries_entity_idx').on(table.storeId, table.entityType, table.entityRef, table.status, table.position, table.createdAt),
    // A store's moderation queue (status = pending) and whole list, newest first (ids are time-ordered).
    index('faq_entries_store_status_idx').on(table.storeId, table.status, table.id),
  ],
);

/**
 * When the FAQs of one entity last changed (any create, update or delete). Deleted entries leave
 * no row behind, so this is what lets Last-Modified and cached renderings move forward on a delete.
 */
export const faqEntityChanges = sqliteTable(
  'faq_entity_changes',
  {
    storeId: text('store_id').notNull(),
    entityType: text('entity_type').$type<FaqEntityType>().notNull(),
    entityRef: text('entity_ref').notNull(),
    changedAt: integer('changed_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.storeId, table.entityType, table.entityRef] })],
);

/** Merchant enrichment of one catalogue product; its presence marks the product enriched. Webhooks never write it. */
export const productEnrichments = sqliteTable(
  'product_enrichments',
  {
    /** The catalogue row (`products.id`), so enrichment survives a remove/restore of the product. */
    productRowId: text('product_row_id')
      .primaryKey()
      .references(() => products.id),
    storeId: text('store_id')
      .notNull()
      .references(() => stores.id),
    summary: text('summary').notNull(),
    highlights: text('highlights', { mode: 'json' }).$type<string[]>().notNull(),
    attributes: text('attributes', { mode: 'json' }).$type<Record<string, string>>().notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [index('product_enrichments_store_idx').on(table.storeId)],
);

export type FaqEntryRow = typeof faqEntries.$inferSelect;
export type ProductEnrichmentRow = typeof productEnrichments.$inferSelect;
