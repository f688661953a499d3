import type { CatalogEntryType, StoreRow, SyncKind } from '../db/schema/index.ts';
import { clientFor, type PlatformSettings } from '../platforms/clients.ts';
import { platformAEntry, platformAProduct } from '../platforms/platform-a.ts';
import { platformBEntry, platformBProduct } from '../platforms/platform-b.ts';
import { platformCEntry, platformCProduct, type PlatformCListed } from '../platforms/platform-c.ts';
import type { CatalogPage, EntryData, ProductData } from '../platforms/types.ts';
import type { StoreCredentials } from '../stores/credentials.ts';

/** A store's list of one kind on its platform, page by page, and how one listed item becomes catalogue data. */
export interface SyncSource<T> {
  page(cursor: string | null): Promise<CatalogPage<unknown>>;
  /** Throws an ApiError for an item without the fields it needs (the item is skipped). */
  map(item: unknown, readAt: number): T;
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

/** Null when the credentials give svc no API access (svc's platform-A app). */
export function productSource(store: StoreRow, credentials: StoreCredentials, settings: PlatformSettings): SyncSource<ProductData> | null {
  const api = clientFor(store, credentials, settings);
  if (!api) return null;
  switch (api.platform) {
    case 'platform-a':
      return { page: (cursor) => api.client.listProducts(cursor), map: (item, readAt) => platformAProduct(item, store.platformRef, readAt) };
    case 'platform-b':
      return {
        page: (cursor) => api.client.listProducts(cursor),
        map: (item, readAt) => platformBProduct(item, store.domain, readAt),
        confirmGone: async (productId) => (await api.client.fetchProduct(productId)) === null,
      };
    case 'platform-c':
      return {
        page: (cursor) => api.client.listProducts(cursor),
        map: (item, readAt) => platformCProduct((item as PlatformCListed).product, (item as PlatformCListed).variations, readAt),
        confirmGone: async (productId) => (await api.client.fetchProduct(productId)) === null,
      };
  }
}

/** The store's categories (platform A: collections) or content pages; null without API access. */
export function entrySource(type: CatalogEntryType, store: StoreRow, credentials: StoreCredentials, settings: PlatformSettings): SyncSource<EntryData> | null {
  const api = clientFor(store, credentials, settings);
  if (!api) return null;
  switch (api.platform) {
    case 'platform-a':
      return { page: (cursor) => api.client.listEntries(type === 'category' ? 'collections' : 'pages', cursor), map: (item) => platformAEntry(item, store.platformRef, type) };
    case 'platform-b':
      return { page: (cursor) => api.client.listEntries(type, cursor), map: (item) => platformBEntry(item, store.domain, type), confirmGone: (id) => api.client.entryGone(type, id) };
    case 'platform-c':
      return { page: (cursor) => api.client.listEntries(type, cursor), map: (item) => platformCEntry(item, credentials.kind === 'rest-keys' ? credentials.siteUrl : '', type), confirmGone: (id) => api.client.entryGone(type, id) };
  }
}
