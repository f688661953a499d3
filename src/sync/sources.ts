import type { StoreRow } from '../db/schema/index.ts';
import { clientFor, type PlatformSettings } from '../platforms/clients.ts';
import { platformAProduct } from '../platforms/platform-a.ts';
import { platformBProduct } from '../platforms/platform-b.ts';
import { platformCProduct, type PlatformCListed } from '../platforms/platform-c.ts';
import type { CatalogPage, ProductData } from '../platforms/types.ts';
import type { StoreCredentials } from '../stores/credentials.ts';

/** A store's product list on its platform, page by page, and how one listed item becomes catalogue data. */
export interface ProductSource {
  page(cursor: string | null): Promise<CatalogPage<unknown>>;
  /** Throws an ApiError for an item without the fields a product needs (the item is skipped). */
  map(item: unknown, readAt: number): ProductData;
  /**
   * Platforms that page by number (B, C): a product deleted during a pass shifts later ones back a
   * page, so one a complete pass did not list may still exist. Such a product is removed only when
   * the platform's own product endpoint answers 404. Absent (A: cursor pages in id order): every
   * unlisted product is gone.
   */
  confirmGone?(productId: string): Promise<boolean>;
}

/** Null when the credentials give svc no API access (svc's platform-A app). */
export function productSource(store: StoreRow, credentials: StoreCredentials, settings: PlatformSettings): ProductSource | null {
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
