import type { SyncKind } from './types.ts';
import type { StoreRecord } from '../stores/registry.ts';
import type { CatalogEntryType, EntryData } from '../catalog/entry-data.ts';
import type { ProductData } from '../catalog/product-data.ts';
import { clientFor, type PlatformSettings } from '../platforms/clients.ts';
import { idOf } from '../platforms/http.ts';
import { platformAEntry, platformAEntryId, platformAProduct } from '../platforms/platform-a.ts';
import { platformBEntry, platformBProduct } from '../platforms/platform-b.ts';
import { platformCEntry, platformCProduct, type PlatformCListed } from '../platforms/platform-c.ts';
import type { CatalogPage } from '../platforms/types.ts';
import type { StoreCredentials } from '../stores/credentials.ts';

/** A store's list of one kind on its platform, page by page, and how one listed item becomes catalogue data. */
export interface SyncSource<T> {
  page(cursor: string | null): Promise<CatalogPage<unknown>>;
  /** Throws an ApiError for an item without the fields it needs (the item is skipped). */
  map(item: unknown, readAt: number): T;
  /** The platform id a listed item is kept under (what `map` keys it by), or null: how a pass sees that its pages advance. */
  key(item: unknown): string | null;
  /** The list comes in id order (svc asks for it so), so each page must reach beyond the ids of the page before. */
  ordered: boolean;
  /**
   * Platforms that page by number (B, C): an item deleted during a pass shifts later ones back a
   * page, so one a complete pass did not list may still exist. Such an item is removed only when
   * the platform's own endpoint for it answers 404. Absent (A: cursor pages in id order): every
   * unlisted item is gone.
   */
  confirmGone?(id: string): Promise<boolean>;
}

/** The FAQ entity type of the entries each non-product kind holds. */
export const ENTRY_TYPE_OF: Record<Exclude<SyncKind, 'products'>, CatalogEntryType> = { categories: 'category', pages: 'page' };

/** An item's own `id` (platform B and C lists). */
const idKey = (item: unknown): string | null => idOf((item as { id?: unknown } | null)?.id);

/** Null when the credentials give svc no API access (svc's platform-A app). `signal` stops its calls. */
export function productSource(store: StoreRecord, credentials: StoreCredentials, settings: PlatformSettings, signal: AbortSignal): SyncSource<ProductData> | null {
  const api = clientFor(store, credentials, settings, signal);
  if (!api) return null;
  switch (api.platform) {
    case 'platform-a':
      return { page: (cursor) => api.client.listProducts(cursor), map: (item, readAt) => platformAProduct(item, store.platformRef, readAt), key: idKey, ordered: true };
    case 'platform-b':
      return {
        page: (cursor) => api.client.listProducts(cursor),
        map: (item, readAt) => platformBProduct(item, store.domain, readAt),
        key: idKey,
        ordered: true,
        confirmGone: async (productId) => (await api.client.fetchProduct(productId)) === null,
      };
    case 'platform-c':
      return {
        page: (cursor) => api.client.listProducts(cursor),
        map: (item, readAt) => platformCProduct((item as PlatformCListed).product, (item as PlatformCListed).variations, readAt),
        key: (item) => idKey((item as PlatformCListed).product),
        ordered: true,
        confirmGone: async (productId) => (await api.client.fetchProduct(productId)) === null,
      };
  }
}

/**
 * The store's categories (platform A: collections) or content pages; null without API access.
 * Platform B's category and page lists are not asked in id order (their APIs have no such sort).
 */
export function entrySource(type: CatalogEntryType, store: StoreRecord, credentials: StoreCredentials, settings: PlatformSettings, signal: AbortSignal): SyncSource<EntryData> | null {
  const api = clientFor(store, credentials, settings, signal);
  if (!api) return null;
  switch (api.platform) {
    case 'platform-a':
      return { page: (cursor) => api.client.listEntries(type === 'category' ? 'collections' : 'pages', cursor), map: (item) => platformAEntry(item, store.platformRef, type), key: platformAEntryId, ordered: true };
    case 'platform-b':
      return { page: (cursor) => api.client.listEntries(type, cursor), map: (item) => platformBEntry(item, store.domain, type), key: idKey, ordered: false, confirmGone: (id) => api.client.entryGone(type, id) };
    case 'platform-c':
      return {
        page: (cursor) => api.client.listEntries(type, cursor),
        map: (item) => platformCEntry(item, credentials.kind === 'rest-keys' ? credentials.siteUrl : '', type),
        key: idKey,
        ordered: true,
        confirmGone: (id) => api.client.entryGone(type, id),
      };
  }
}
