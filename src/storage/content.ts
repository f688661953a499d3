// What the content capabilities (FAQs, enrichment, the synced catalogue) keep in storage, in their
// own value types: one implementation per engine (src/storage/sqlite/content.ts,
// src/storage/postgres/content.ts), held to the same contract by test/storage/content-records.test.ts.
// Every operation that must be atomic is one method; all times are epoch milliseconds.
import type { CatalogEntry, NamedRow } from '../catalog/entries.ts';
import type { CatalogEntryType } from '../catalog/entry-data.ts';
import type { ProductData, ProductVariant } from '../catalog/product-data.ts';
import type { DescriptionText, ProductRecord, RemoveOutcome, UpsertOutcome } from '../catalog/products.ts';
import type { UnlistedChunk } from '../catalog/sweep.ts';
import type { Enrichment, EnrichmentInput } from '../enrichment/store.ts';
import type { FaqChanges, FaqEntry, PublicFaq } from '../faqs/store.ts';
import type { FaqEntityType, FaqStatus } from '../faqs/types.ts';
import type { KeysetPage } from '../lib/query.ts';

/**
 * FAQ entries, and when the FAQs of each entity last changed: every write moves its entity's change
 * time to `at`, or 1 ms past the previous one when that is not earlier (so it works as a version),
 * in the same transaction as the write.
 */
export interface FaqRecords {
  byId(id: string): Promise<FaqEntry | null>;
  /** The new entry, stored with its entity's change time at its `updatedAt`. */
  create(entry: FaqEntry): Promise<FaqEntry>;
  /** `entry` (as read before) with `changes` applied; null when it is gone meanwhile (its entity's change time moves all the same). */
  update(entry: FaqEntry, changes: FaqChanges): Promise<FaqEntry | null>;
  /** Deletes `entry` (as read before), its entity's change time moved to `at`. */
  remove(entry: FaqEntry, at: number): Promise<void>;
  /** Every entry of one entity, any status, in display order: position, then creation, then id. */
  listByEntity(storeId: string, entityType: FaqEntityType, entityRef: string): Promise<FaqEntry[]>;
  /** A store's entries across entities, newest id first, optionally of one status; `cursor` is the last id of the previous page. */
  listByStore(storeId: string, status: FaqStatus | undefined, cursor: string | null, limit: number): Promise<KeysetPage<FaqEntry>>;
  /** The approved entries filed under any of `refs`, in display order. */
  approved(storeId: string, entityType: FaqEntityType, refs: string[]): Promise<PublicFaq[]>;
}

/** Merchant enrichment, one per catalogue row (`ProductRecord.id`). */
export interface EnrichmentRecords {
  byProductRow(productRowId: string): Promise<Enrichment | null>;
  /**
   * Creates or replaces the row's enrichment (its store is kept from the first write). `updatedAt`
   * becomes `at`, or 1 ms past the previous one when that is not earlier: it is part of the signals'
   * version stamp, so it moves forward on every write.
   */
  put(storeId: string, productRowId: string, content: EnrichmentInput, at: number): Promise<Enrichment>;
  /** When each of these rows was last enriched; rows without enrichment are absent. */
  enrichedAt(productRowIds: string[]): Promise<Map<string, number>>;
  /** False when the row had no enrichment. */
  remove(productRowId: string): Promise<boolean>;
}

/** A store's categories and content pages, keyed by (store, type, platform id). */
export interface CatalogEntryRecords {
  /**
   * Each entry stored, or, when its (store, type, platform id) is stored already, that row's data,
   * listing and sync time replaced by its (the row keeps its id and creation time): the latest read is the truth.
   */
  upsert(entries: CatalogEntry[]): Promise<void>;
  /** Of the next `limit` entries after platform id `after` (in platform-id order), those the pass that started at `passStartedAt` did not list. */
  unlistedAfter(storeId: string, type: CatalogEntryType, passStartedAt: number, after: string, limit: number): Promise<UnlistedChunk>;
  /** Deletes these entries; how many there were. */
  remove(storeId: string, type: CatalogEntryType, entryIds: string[]): Promise<number>;
  /** The identifiers the entry `ref` names goes by (platform id, then handle), the platform id matched first; `[ref]` when it names none. */
  refsOf(storeId: string, type: CatalogEntryType, ref: string): Promise<string[]>;
  /** The entries any of `refs` names by platform id or handle. */
  namedBy(storeId: string, type: CatalogEntryType, refs: string[]): Promise<NamedRow[]>;
  /** A keyset page in sync order (internal id); `cursor` is the last id of the previous page. */
  list(storeId: string, type: CatalogEntryType, cursor: string | null, limit: number): Promise<KeysetPage<CatalogEntry>>;
}

/**
 * The synced catalogue's products and their variants. Ordering rule of every write: the platform's
 * own modification time wins, and a removed product stays as a tombstone, so retries and reordered
 * deliveries converge on the newest state whatever order they arrive in.
 */
export interface ProductRecords {
  /**
   * The product and its variants written together, or nothing: 'stale' when the stored row is newer
   * (a live row takes data at least as new as it, a tombstone only data strictly newer than its
   * removal). An applied write revives a tombstone and moves `syncedAt` to `at`, or 1 ms past the
   * previous one when that is not earlier (the row's version stamp). Variants are stored in the
   * given order, those beyond the new list dropped.
   */
  upsert(storeId: string, currency: string | null, product: ProductData, description: DescriptionText, at: number): Promise<UpsertOutcome>;
  /**
   * Removal as of `removedAt`, written at `at`: the row becomes a tombstone (a product unknown so far
   * gets one too). 'stale' when the product is already removed, or, unless `confirmed` (the platform
   * says it is gone now), when the stored data is newer than `removedAt`.
   */
  remove(storeId: string, productId: string, removedAt: number, confirmed: boolean, at: number): Promise<RemoveOutcome>;
  /** Marks these products listed by the sync pass that started at `passStartedAt`. */
  markListed(storeId: string, productIds: string[], passStartedAt: number): Promise<void>;
  /** Of the next `limit` products after platform id `after` (in platform-id order), the live ones that pass neither listed nor wrote since it started. */
  unlistedAfter(storeId: string, passStartedAt: number, after: string, limit: number): Promise<UnlistedChunk>;
  /** The live product, or null (unknown or removed). */
  get(storeId: string, productId: string): Promise<ProductRecord | null>;
  /** The identifiers the live product `ref` names goes by (platform id, then handle), the platform id matched first; `[ref]` when it names none. */
  refsOf(storeId: string, ref: string): Promise<string[]>;
  /** The live products any of `refs` names by platform id or handle. */
  namedBy(storeId: string, refs: string[]): Promise<NamedRow[]>;
  /** A keyset page of live products in sync order (internal id); `cursor` is the last id of the previous page. */
  list(storeId: string, cursor: string | null, limit: number): Promise<KeysetPage<ProductRecord>>;
  /** The variants of these rows in the platform's order; every row asked for has an entry. */
  variantsOf(productRowIds: string[]): Promise<Map<string, ProductVariant[]>>;
}
