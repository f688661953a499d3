import { and, asc, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import { faqEntityChanges, faqEntries, productEnrichments } from './db/schema/index.ts';
import type { FaqEntry } from '../../faqs/store.ts';
import { keysetPage } from '../../lib/query.ts';
import type { EnrichmentRecords, FaqRecords } from '../content.ts';
import type { PostgresClient, PostgresDb } from './client.ts';

type Transaction = Parameters<Parameters<PostgresDb['transaction']>[0]>[0];

/** FAQ entries on PostgreSQL (the same contract as src/storage/sqlite/content.ts). */
export function postgresFaqRecords({ db }: PostgresClient): FaqRecords {
  const stamp = (tx: Transaction, entry: Pick<FaqEntry, 'storeId' | 'entityType' | 'entityRef'>, at: number) =>
    tx
      .insert(faqEntityChanges)
      .values({ storeId: entry.storeId, entityType: entry.entityType, entityRef: entry.entityRef, changedAt: at })
      .onConflictDoUpdate({ target: [faqEntityChanges.storeId, faqEntityChanges.entityType, faqEntityChanges.entityRef], set: { changedAt: sql`greatest(${faqEntityChanges.changedAt} + 1, excluded.changed_at)` } });
  const displayOrder = [asc(faqEntries.position), asc(faqEntries.createdAt), asc(faqEntries.id)];

  return {
    async byId(id) {
      const [entry] = await db.select().from(faqEntries).where(eq(faqEntries.id, id)).limit(1);
      return entry ?? null;
    },

    create: (entry) =>
      db.transaction(async (tx) => {
        await stamp(tx, entry, entry.updatedAt);
        const [created] = await tx.insert(faqEntries).values(entry).returning();
        return created!;
      }),

    update: (entry, changes) =>
      db.transaction(async (tx) => {
        await stamp(tx, entry, changes.updatedAt);
        const [updated] = await tx.update(faqEntries).set(changes).where(eq(faqEntries.id, entry.id)).returning();
        return updated ?? null;
      }),

    remove: (entry, at) =>
      db.transaction(async (tx) => {
        await stamp(tx, entry, at);
        await tx.delete(faqEntries).where(eq(faqEntries.id, entry.id));
      }),

    listByEntity: async (storeId, entityType, entityRef) =>
      db
        .select()
        .from(faqEntries)
        .where(and(eq(faqEntries.storeId, storeId), eq(faqEntries.entityType, entityType), eq(faqEntries.entityRef, entityRef)))
        .orderBy(...displayOrder),

    async listByStore(storeId, status, cursor, limit) {
      const rows = await db
        .select()
        .from(faqEntries)
        .where(and(eq(faqEntries.storeId, storeId), status ? eq(faqEntries.status, status) : undefined, cursor ? lt(faqEntries.id, cursor) : undefined))
        .orderBy(desc(faqEntries.id))
        .limit(limit + 1);
      return keysetPage(rows, limit);
    },

    approved: async (storeId, entityType, refs) =>
      db
        .select({ id: faqEntries.id, question: faqEntries.question, answer: faqEntries.answer })
        .from(faqEntries)
        .where(and(eq(faqEntries.storeId, storeId), eq(faqEntries.entityType, entityType), inArray(faqEntries.entityRef, refs), eq(faqEntries.status, 'approved')))
        .orderBy(...displayOrder),
  };
}

/** Merchant enrichment on PostgreSQL (the same contract as src/storage/sqlite/content.ts). */
export function postgresEnrichmentRecords({ db }: PostgresClient): EnrichmentRecords {
  return {
    async byProductRow(productRowId) {
      const [enrichment] = await db.select().from(productEnrichments).where(eq(productEnrichments.productRowId, productRowId)).limit(1);
      return enrichment ?? null;
    },

    async put(storeId, productRowId, content, at) {
      const [enrichment] = await db
        .insert(productEnrichments)
        .values({ productRowId, storeId, ...content, createdAt: at, updatedAt: at })
        .onConflictDoUpdate({ target: productEnrichments.productRowId, set: { ...content, updatedAt: sql`greatest(excluded.updated_at, ${productEnrichments.updatedAt} + 1)` } })
        .returning();
      return enrichment!;
    },

    async enrichedAt(productRowIds) {
      if (productRowIds.length === 0) return new Map();
      const rows = await db
        .select({ id: productEnrichments.productRowId, at: productEnrichments.updatedAt })
        .from(productEnrichments)
        .where(inArray(productEnrichments.productRowId, productRowIds));
      return new Map(rows.map((row) => [row.id, row.at]));
    },

    async remove(productRowId) {
      const removed = await db.delete(productEnrichments).where(eq(productEnrichments.productRowId, productRowId)).returning({ id: productEnrichments.productRowId });
      return removed.length > 0;
    },
  };
}
