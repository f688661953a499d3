import type { Catalog } from '../catalog/products.ts';
import type { Platform } from '../stores/types.ts';
import type { Clock } from '../lib/clock.ts';
import { clientFor, type PlatformSettings } from '../platforms/clients.ts';
import { platformBProduct } from '../platforms/platform-b.ts';
import { hasVariations, platformCGone, platformCProduct } from '../platforms/platform-c.ts';
import type { StoreRegistry } from '../stores/registry.ts';
import type { Job } from './queue.ts';

export const FETCH_PLATFORM_B_PRODUCT = 'platform-b.fetch-product';
export const FETCH_PLATFORM_C_PRODUCT = 'platform-c.fetch-product';

/** The job that completes a `product.fetch` event of a store of this platform. */
export function fetchJobKind(platform: Platform): string {
  if (platform === 'platform-b') return FETCH_PLATFORM_B_PRODUCT;
  if (platform === 'platform-c') return FETCH_PLATFORM_C_PRODUCT;
  throw new Error(`${platform} deliveries carry the whole product; nothing to fetch`);
}

interface FetchDeps {
  stores: StoreRegistry;
  catalog: Catalog;
  clock: Clock;
  settings: PlatformSettings;
}

/**
 * Job handlers: read one product from the platform's API and apply it (404 = removed). A throw
 * (network, timeout, 5xx, bad credentials) makes the queue retry with backoff. Deliveries for an
 * uninstalled store are ignored; so is work they queued before it went inactive.
 */
export function productFetchJobs({ stores, catalog, clock, settings }: FetchDeps) {
  const activeStore = async (job: Job) => {
    const store = await stores.get(job.storeId);
    return store && store.status === 'active' ? store : null;
  };
  return {
    /** Platform B deliveries carry only the product id: the catalog API has the product with its variants. */
    [FETCH_PLATFORM_B_PRODUCT]: async (job: Job, signal: AbortSignal): Promise<void> => {
      const store = await activeStore(job);
      const api = store ? clientFor(store, stores.credentialsOf(store), settings, signal) : null;
      if (!store || api?.platform !== 'platform-b') return;
      const productId = String(job.payload.productId);
      const data = await api.client.fetchProduct(productId);
      if (data === null) await catalog.remove(store.id, productId, clock.now(), true);
      else await catalog.upsert(store.id, store.currency, platformBProduct(data, store.domain, clock.now()));
    },
    /** Platform C deliveries name a variable product's variations only by id: read the product and every variation. */
    [FETCH_PLATFORM_C_PRODUCT]: async (job: Job, signal: AbortSignal): Promise<void> => {
      const store = await activeStore(job);
      const api = store ? clientFor(store, stores.credentialsOf(store), settings, signal) : null;
      if (!store || api?.platform !== 'platform-c') return;
      const productId = String(job.payload.productId);
      const data = await api.client.fetchProduct(productId);
      if (data === null) return void (await catalog.remove(store.id, productId, clock.now(), true));
      // A product in the trash is still served by the API, but no longer sold.
      const trashed = platformCGone(data);
      if (trashed) return void (await catalog.remove(store.id, productId, trashed.at ?? clock.now(), true));
      const variations = hasVariations(data) ? await api.client.fetchVariations(productId) : [];
      await catalog.upsert(store.id, store.currency, platformCProduct(data, variations, clock.now()));
    },
  };
}
