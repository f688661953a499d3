// What the public signals (src/signals/) read beyond the catalogue's variants and the approved FAQs
// (HotReads, src/storage/index.ts): one implementation per engine
// (src/storage/sqlite/signals.ts, src/storage/postgres/signals.ts), held to the same contract by
// test/storage/signals-records.test.ts. Reads only: the caches in front of them watch the change
// feed. All times are epoch milliseconds.
import type { DiscoveryStore, ListedProduct } from '../signals/discovery.ts';
import type { SignalCandidate } from '../signals/service.ts';
import type { Platform } from '../stores/types.ts';

/** What a product's signals are rendered from. */
export interface SignalRecords {
  /**
   * The enriched, live catalogue rows of the platform product id `productId` in the stores of
   * `platform` (only in store `storeId`, when given), each with its store and the stamps of its
   * version: any write to the product, its enrichment, its FAQs or its store moves one of them.
   */
  candidates(platform: Platform, productId: string, storeId: string | null): Promise<SignalCandidate[]>;
}

/** What a store's discovery files (sitemap, llms.txt) and robots.txt are rendered from. */
export interface DiscoveryRecords {
  store(storeId: string): Promise<DiscoveryStore | null>;
  /** A stamp that moves with any write that can change what the store's discovery files list or their times (products, enrichment, product FAQs, the store itself). */
  storeStamp(storeId: string): Promise<string>;
  /** The store's enriched, live products, by platform id (in binary order). */
  listed(storeId: string): Promise<ListedProduct[]>;
  /** The stores whose signals are served (active, not withdrawn), oldest first. */
  servedStores(): Promise<Pick<DiscoveryStore, 'id' | 'platform'>[]>;
}
