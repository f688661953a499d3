import type { Catalog } from '../catalog/products.ts';
import type { JobRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { platformBClient, platformBProduct } from '../platforms/platform-b.ts';
import type { StoreRegistry } from '../stores/registry.ts';

interface SyncDeps {
  stores: StoreRegistry;
  catalog: Catalog;
  clock: Clock;
  platformBApiBase: string;
  apiTimeoutMs?: number | undefined;
}

/**
 * Job handler: fetch one product from platform B's catalog API and apply it (404 = removed). A
 * throw (network, timeout, 5xx, bad credentials) makes the queue retry with backoff.
 */
export function platformBFetchJob({ stores, catalog, clock, platformBApiBase, apiTimeoutMs }: SyncDeps) {
  return async (job: JobRow): Promise<void> => {
    const store = stores.get(job.storeId);
    // Deliveries for an uninstalled store are ignored; so is work they queued before it went inactive.
    if (!store || store.status !== 'active') return;
    const credentials = stores.credentialsOf(store);
    if (credentials.kind !== 'api-token') return;
    const productId = String(job.payload.productId);
    const client = platformBClient({ apiBase: platformBApiBase, storeHash: credentials.storeHash, accessToken: credentials.accessToken, timeoutMs: apiTimeoutMs });
    const data = await client.fetchProduct(productId);
    if (data === null) catalog.remove(store.id, productId, clock.now(), true);
    else catalog.upsert(store.id, store.currency, platformBProduct(data, store.domain, clock.now()));
  };
}
