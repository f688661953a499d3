import { and, asc, eq, gt, inArray, or, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { catalogEntries, type CatalogEntryRow } from '../db/schema/index.ts';
import type { FaqEntityType } from '../faqs/types.ts';
import type { CatalogEntryType, EntryData } from './entry-data.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { keysetPage } from '../lib/query.ts';
import { isoOrNull } from '../lib/time.ts';
import type { Catalog } from './products.ts';
import { unlistedChunk, type UnlistedChunk } from './sweep.ts';

/** A category or content page as the admin API shows it; `id` is always the platform's id. */
export interface EntryView {
  id: string;
  handle: string | null;
  title: string;
  url: string | null;
  /** The platform's modification time; null where the platform reports none. */
  updatedAt: string | null;
  syncedAt: string;
}

export const toEntryView = (row: CatalogEntryRow): EntryView => ({
  id: row.entryId,
  handle: row.handle,
  title: row.title,
  url: row.url,
  updatedAt: isoOrNull(row.platformUpdatedAt),
  syncedAt: new Date(row.syncedAt).toISOString(),
});

/**
 * A store's categories and content pages. Only catalogue sync writes them (no platform sends
 * webhooks for them), so the latest page read is the truth: a write replaces the row's data.
 */
export function createCatalogEntries(db: Db, clock: Clock) {
  const whereType = (storeId: string, type: CatalogEntryType) => and(eq(catalogEntries.storeId, storeId), eq(catalogEntries.type, type));
  return {
    /** Write one page's entries, each marked as listed by the pass that started at `passStartedAt`. */
    upsert(storeId: string, type: CatalogEntryType, entries: EntryData[], passStartedAt: number): void {
      if (entries.length === 0) return;
      const now = clock.now();
      db.insert(catalogEntries)
        .values(
          entries.map((entry) => ({
            id: newId(),
            storeId,
            type,
            entryId: entry.entryId,
            handle: entry.handle,
            title: entry.title,
            url: entry.url,
            platformUpdatedAt: entry.updatedAt,
            listedAt: passStartedAt,
            syncedAt: now,
            createdAt: now,
          })),
        )
        .onConflictDoUpdate({
          target: [catalogEntries.storeId, catalogEntries.type, catalogEntries.entryId],
          set: {
            handle: sql.raw('excluded.handle'),
            title: sql.raw('excluded.title'),
            url: sql.raw('excluded.url'),
            platformUpdatedAt: sql.raw('excluded.platform_updated_at'),
            listedAt: sql.raw('excluded.listed_at'),
            syncedAt: sql.raw('excluded.synced_at'),
          },
        })
        .run();
    },

    /** The sweep after a complete pass that started at `passStartedAt`, a step at a time: of the next `limit` entries after `after` (in id order), those it did not list. */
    unlistedAfter(storeId: string, type: CatalogEntryType, passStartedAt: number, after: string, limit: number): UnlistedChunk {
      const rows = db
        .select({ id: catalogEntries.entryId, unlisted: sql<number>`${catalogEntries.listedAt} < ${passStartedAt}` })
        .from(catalogEntries)
        .where(and(whereType(storeId, type), gt(catalogEntries.entryId, after)))
        .orderBy(asc(catalogEntries.entryId))
        .limit(limit)
        .all();
      return unlistedChunk(rows, limit);
    },

    /** Entries the platform no longer has; returns how many were held. */
    remove(storeId: string, type: CatalogEntryType, entryIds: string[]): number {
      if (entryIds.length === 0) return 0;
      return db.delete(catalogEntries).where(and(whereType(storeId, type), inArray(catalogEntries.entryId, entryIds))).returning({ id: catalogEntries.id }).all().length;
    },

    /**
     * The identifiers an entry goes by (platform id, then handle) when `ref` is either of them; just
     * `[ref]` otherwise. FAQs may be filed under either, and the widget detects either.
     */
    refsOf(storeId: string, type: CatalogEntryType, ref: string): string[] {
      const row = db
        .select({ entryId: catalogEntries.entryId, handle: catalogEntries.handle })
        .from(catalogEntries)
        .where(and(whereType(storeId, type), or(eq(catalogEntries.entryId, ref), eq(catalogEntries.handle, ref))))
        .orderBy(sql`${catalogEntries.entryId} = ${ref} DESC`)
        .get();
      if (!row) return [ref];
      return row.handle !== null && row.handle !== row.entryId ? [row.entryId, row.handle] : [row.entryId];
    },

    /** The entries any of `refs` names (by platform id or handle), for naming them: id, handle, title, storefront URL. */
    namedBy(storeId: string, type: CatalogEntryType, refs: string[]): NamedRow[] {
      return db
        .select({ id: catalogEntries.entryId, handle: catalogEntries.handle, title: catalogEntries.title, url: catalogEntries.url })
        .from(catalogEntries)
        .where(and(whereType(storeId, type), or(inArray(catalogEntries.entryId, refs), inArray(catalogEntries.handle, refs))))
        .all();
    },

    /** Keyset page in sync order; `cursor` is the last row's internal id. */
    list(storeId: string, type: CatalogEntryType, cursor: string | null, limit: number): { items: CatalogEntryRow[]; nextCursor: string | null } {
      const rows = db
        .select()
        .from(catalogEntries)
        .where(and(whereType(storeId, type), cursor ? gt(catalogEntries.id, cursor) : undefined))
        .orderBy(asc(catalogEntries.id))
        .limit(limit + 1)
        .all();
      return keysetPage(rows, limit);
    },
  };
}

export type CatalogEntries = ReturnType<typeof createCatalogEntries>;

/** Every identifier a storefront entity of any FAQ type goes by (platform id and handle), for FAQ lookups. */
export interface EntityRefs {
  refsOf(storeId: string, type: FaqEntityType, ref: string): string[];
}

export const entityRefs = (catalog: Pick<Catalog, 'refsOf'>, entries: Pick<CatalogEntries, 'refsOf'>): EntityRefs => ({
  refsOf: (storeId, type, ref) => (type === 'product' ? catalog.refsOf(storeId, ref) : entries.refsOf(storeId, type, ref)),
});

/** A product, category or page as found by one of its identifiers. */
export interface NamedRow {
  id: string;
  handle: string | null;
  title: string;
  url: string | null;
}

/** What a reference (as an FAQ is filed under) names: the entity's platform id, handle, title and storefront URL. */
export interface NamedEntity extends NamedRow {
  ref: string;
}

/** The entities `refs` name, in ref order: a ref is matched to the platform id first, then to a handle; refs that name nothing are left out. */
export function nameRefs(refs: string[], rows: NamedRow[]): NamedEntity[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const byHandle = new Map(rows.filter((row) => row.handle !== null).map((row) => [row.handle!, row]));
  return refs.flatMap((ref) => {
    const row = byId.get(ref) ?? byHandle.get(ref);
    return row ? [{ ref, ...row }] : [];
  });
}

/** Names for the references of one entity type, a store's products, categories or pages looked up in one query. */
export const entityNames = (catalog: Pick<Catalog, 'namedBy'>, entries: Pick<CatalogEntries, 'namedBy'>) => (storeId: string, type: FaqEntityType, refs: string[]): NamedEntity[] =>
  nameRefs(refs, type === 'product' ? catalog.namedBy(storeId, refs) : entries.namedBy(storeId, type, refs));
