import { and, asc, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import type { AppDatabase, Db } from './db/index.ts';
import { faqEntityChanges, faqEntries, productEnrichments } from './db/schema/index.ts';
import type { FaqEntry } from '../../faqs/store.ts';
import { keysetPage } from '../../lib/query.ts';
import type { EnrichmentRecords, FaqRecords } from '../content.ts';
import type { Synchronous } from '../synchronous.ts';
import { promised } from './promised.ts';

/** FAQ entries on SQLite, answered synchronously (the signals and the public FAQ read use this form). */
export function sqliteFaqRecordsSync({ db }: Pick<AppDatabase, 'db'>): Synchronous<FaqRecords> {
  const stamp = (tx: Pick<Db, 'insert'>, entry: Pick<FaqEntry, 'storeId' | 'entityType' | 'entityRef'>, at: number) =>
    tx
      .insert(faqEntityChanges)
      .values({ storeId: entry.storeId, entityType: entry.entityType, entityRef: entry.entityRef, changedAt: at })
      .onConflictDoUpdate({ target: [faqEntityChanges.storeId, faqEntityChanges.entityType, faqEntityChanges.entityRef], set: { changedAt: sql`max(${faqEntityChanges.changedAt} + 1, ${at})` } })
      .run();
  const displayOrder = [asc(faqEntries.position), asc(faqEntries.createdAt), asc(faqEntries.id)];

  return {
    byId: (id) => db.select().from(faqEntries).where(eq(faqEntries.id, id)).get() ?? null,

    create: (entry) =>
      db.transaction((tx) => {
        stamp(tx, entry, entry.updatedAt);
        return tx.insert(faqEntries).values(entry).returning().get();
      }),

    update: (entry, changes) =>
      db.transaction((tx) => {
        stamp(tx, entry, changes.updatedAt);
        return tx.update(faqEntries).set(changes).where(eq(faqEntries.id, entry.id)).returning().get() ?? null;
      }),

    remove: (entry, at) =>
      db.transaction((tx) => {
        stamp(tx, entry, at);
        tx.delete(faqEntries).where(eq(faqEntries.id, entry.id)).run();
      }),

    listByEntity: (storeId, entityType, entityRef) =>
      db
        .select()
        .from(faqEntries)
        .where(and(eq(faqEntries.storeId, storeId), eq(faqEntries.entityType, entityType), eq(faqEntries.entityRef, entityRef)))
        .orderBy(...displayOrder)
        .all(),

    listByStore(storeId, status, cursor, limit) {
      const rows = db
        .select()
        .from(faqEntries)
        .where(and(eq(faqEntries.storeId, storeId), status ? eq(faqEntries.status, status) : undefined, cursor ? lt(faqEntries.id, cursor) : undefined))
        .orderBy(desc(faqEntries.id))
        .limit(limit + 1)
        .all();
      return keysetPage(rows, limit);
    },

    approved: (storeId, entityType, refs) =>
      db
        .select({ id: faqEntries.id, question: faqEntries.question, answer: faqEntries.answer })
        .from(faqEntries)
        .where(and(eq(faqEntries.storeId, storeId), eq(faqEntries.entityType, entityType), inArray(faqEntries.entityRef, refs), eq(faqEntries.status, 'approved')))
        .orderBy(...displayOrder)
        .all(),
  };
}

export const sqliteFaqRecords = (database: Pick<AppDatabase, 'db'>): FaqRecords => promised<FaqRecords>(sqliteFaqRecordsSync(database));

/** Merchant enrichment on SQLite. */
export function sqliteEnrichmentRecords({ db }: Pick<AppDatabase, 'db'>): EnrichmentRecords {
  return promised<EnrichmentRecords>({
    byProductRow: (productRowId) => db.select().from(productEnrichments).where(eq(productEnrichments.productRowId, productRowId)).get() ?? null,

    put: (storeId, productRowId, content, at) =>
      db
        .insert(productEnrichments)
        .values({ productRowId, storeId, ...content, createdAt: at, updatedAt: at })
        .onConflictDoUpdate({ target: productEnrichments.productRowId, set: { ...content, updatedAt: sql`max(${at}, ${productEnrichments.updatedAt} + 1)` } })
        .returning()
        .get(),

    enrichedAt(productRowIds) {
      if (productRowIds.length === 0) return new Map();
      const rows = db
        .select({ id: productEnrichments.productRowId, at: productEnrichments.updatedAt })
        .from(productEnrichments)
        .where(inArray(productEnrichments.productRowId, productRowIds))
        .all();
      return new Map(rows.map((row) => [row.id, row.at]));
    },

    remove: (productRowId) => db.delete(productEnrichments).where(eq(productEnrichments.productRowId, productRowId)).returning({ id: productEnrichments.productRowId }).all().length > 0,
  });
}
