import type { FaqEntityType } from '../faqs/types.ts';
import type { CatalogEntryType, EntryData } from './entry-data.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { withoutNulFields } from '../lib/text.ts';
import { isoOrNull } from '../lib/time.ts';
import type { CatalogEntryRecords, ProductRecords } from '../storage/content.ts';
import type { Immediate } from '../storage/synchronous.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';

/** A category or content page as stored: its platform data, and when sync last listed and wrote it (epoch ms). */
export interface CatalogEntry {
  /** Internal id (sync order), the list's cursor. */
  id: string;
  storeId: string;
  type: CatalogEntryType;
  /** The platform's id, as a string. */
  entryId: string;
  handle: string | null;
  title: string;
  url: string | null;
  /** The platform's own modification time, when it reports one. */
  platformUpdatedAt: number | null;
  /** The start of the latest sync pass that listed this entry. */
  listedAt: number;
  syncedAt: number;
  createdAt: number;
}

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

export const toEntryView = (row: CatalogEntry): EntryView => ({
  id: row.entryId,
  handle: row.handle,
  title: row.title,
  url: row.url,
  updatedAt: isoOrNull(row.platformUpdatedAt),
  syncedAt: new Date(row.syncedAt).toISOString(),
});

/**
 * One page's entries as stored, each marked as listed by the pass that started at `passStartedAt`
 * and written at `at` (new rows get a new internal id; a stored one keeps its own). Their text as
 * svc stores platform text: without NUL characters (lib/text.ts).
 */
export function entryRows(storeId: string, type: CatalogEntryType, entries: EntryData[], passStartedAt: number, at: number): CatalogEntry[] {
  return entries.map((entry) => ({
    id: newId(),
    storeId,
    type,
    ...withoutNulFields({ entryId: entry.entryId, handle: entry.handle, title: entry.title, url: entry.url }),
    platformUpdatedAt: entry.updatedAt,
    listedAt: passStartedAt,
    syncedAt: at,
    createdAt: at,
  }));
}

/**
 * A store's categories and content pages. Only catalogue sync writes them (no platform sends
 * webhooks for them), so the latest page read is the truth: a write replaces the row's data.
 */
export function createCatalogEntries(records: CatalogEntryRecords, clock: Clock) {
  return {
    ...records,
    /** Write one page's entries, each marked as listed by the pass that started at `passStartedAt`. */
    upsert: (storeId: string, type: CatalogEntryType, entries: EntryData[], passStartedAt: number): Promise<void> => records.upsert(entryRows(storeId, type, entries, passStartedAt, clock.now())),
  };
}

export type CatalogEntries = ReturnType<typeof createCatalogEntries>;

/**
 * The identifiers an entity goes by (platform id, then its handle when it has another) when `found`
 * by a reference; just `[ref]` when the reference names nothing. FAQs may be filed under either, and
 * the widget detects either.
 */
export function refsOfFound(found: { id: string; handle: string | null } | null, ref: string): string[] {
  if (!found) return [ref];
  return found.handle !== null && found.handle !== found.id ? [found.id, found.handle] : [found.id];
}

/** Every identifier a storefront entity of any FAQ type goes by (platform id and handle), for FAQ lookups. */
export interface EntityRefs {
  refsOf(storeId: string, type: FaqEntityType, ref: string): MaybePromise<string[]>;
}

/** At once where the engine can (SQLite): the public FAQ read then answers without a promise (a hot GET: test/hot-paths.test.ts). */
export const entityRefs = (catalog: Pick<Immediate<ProductRecords>, 'refsOf'>, entries: Pick<Immediate<CatalogEntryRecords>, 'refsOf'>): EntityRefs => ({
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
export const entityNames = (catalog: Pick<ProductRecords, 'namedBy'>, entries: Pick<CatalogEntryRecords, 'namedBy'>) => async (storeId: string, type: FaqEntityType, refs: string[]): Promise<NamedEntity[]> =>
  nameRefs(refs, await (type === 'product' ? catalog.namedBy(storeId, refs) : entries.namedBy(storeId, type, refs)));
