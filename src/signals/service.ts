import type { Platform } from '../stores/types.ts';
import type { HotReads } from '../storage/index.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import { ApiError } from '../lib/errors.ts';
import { etagOf } from '../lib/http-cache.ts';
import { htmlToBlocks, stripControlCharacters } from '../lib/html.ts';
import { andThen, both, type MaybePromise } from '../lib/maybe-promise.ts';
import type { StoreSettings } from '../stores/settings.ts';
import type { Availability, ProductVariant } from '../catalog/product-data.ts';
import type { PublicFaq } from '../faqs/store.ts';
import { renderSignal, signalLinks, type SignalFormat, type SignalSource } from './render.ts';

/** One enriched, live catalogue row of the requested platform product id, with its store and version stamps. */
export interface SignalCandidate {
  rowId: string;
  storeId: string;
  productId: string;
  handle: string | null;
  title: string;
  descriptionHtml: string | null;
  price: string | null;
  productCurrency: string | null;
  availability: Availability | null;
  sku: string | null;
  barcode: string | null;
  mpn: string | null;
  brand: string | null;
  images: string[];
  url: string | null;
  options: string[];
  syncedAt: number;
  storeStatus: 'active' | 'inactive';
  withdrawnAt: number | null;
  storeCurrency: string | null;
  storeDomain: string;
  storeSettings: StoreSettings;
  storeUpdatedAt: number;
  summary: string;
  highlights: string[];
  attributes: Record<string, string>;
  enrichedAt: number;
  /** When the product's FAQs last changed (null: never). */
  faqChangedAt: number | null;
  /** Moves with every change of the product's FAQs (a sum of their change times). */
  faqStamp: number;
}

export interface RenderedSignal {
  /**
   * The body as UTF-8 bytes, encoded once: a string body is encoded again for every response, which
   * for a body with any character beyond Latin-1 (a dash, a curly quote) is a full UTF-16 to UTF-8
   * pass (~11 us for an 8 KB `.meta`, measured).
   */
  body: Blob;
  etag: string;
  lastModified: number;
}

/** A rendered body with its strong validator. */
export function renderedSignal(body: string, lastModified: number): RenderedSignal {
  return { body: new Blob([body]), etag: etagOf(body), lastModified };
}

interface CacheEntry {
  /** The change stamp the read that last validated the entry was asked at: while it stands, nothing needs reading. */
  stamp: number;
  rowId: string;
  /** The product's own version (product, enrichment, FAQ and store change times). */
  version: string;
  rendered: Partial<Record<SignalFormat, RenderedSignal>>;
  /** UTF-8 bytes of the rendered bodies, counted against the cache's byte budget. */
  bytes: number;
}

/**
 * Rendered products kept in memory, keyed by URL kind, platform, product id (and store); only served
 * products get an entry. Bounded twice: by entries, and by the bytes of what they hold
 * (SVC_SIGNAL_CACHE_BYTES), since one product's signals can be large (many variants, long text).
 */
const CACHE_LIMIT = 5000;

/**
 * Picks the product a signal URL names. Only enriched, live products count. Among them, the one of an
 * active store is served; two active stores of the platform with the same enriched product id are
 * ambiguous (404, never one merchant's data under the other's URL: the store-scoped URL names each
 * without ambiguity); none active but one withdrawn by `app/uninstalled` is 410; otherwise 404.
 */
function choose(candidates: SignalCandidate[], what: string): SignalCandidate {
  const active = candidates.filter((c) => c.storeStatus === 'active' && c.withdrawnAt === null);
  if (active.length === 1) return active[0]!;
  if (active.length > 1) throw new ApiError(404, 'not_found', `${what} is enriched in more than one store; its signal URL is ambiguous (use /api/v1/{platform}/stores/{storeId}/products/{id})`);
  if (candidates.some((c) => c.withdrawnAt !== null)) throw new ApiError(410, 'signals_withdrawn', `the store of ${what} uninstalled svc or was disconnected; its signals are withdrawn`);
  throw new ApiError(404, 'not_found', `no enriched ${what} in an active store`);
}

export interface SignalServiceDeps {
  /** The signals' reads (candidates, variants, approved FAQs): SQLite's answer without a promise, so a signal GET does too (test/hot-paths.test.ts); elsewhere only a miss waits. */
  reads: Pick<HotReads, 'signals' | 'products' | 'faqs'>;
  /** The storage's change feed: while its stamp of any change stands, a cached product is served without a read. */
  changes: ChangeFeed;
  baseUrl: string;
  /** Most bytes of rendered bodies kept in the cache. */
  cacheBytes: number;
}

export function createSignalService(deps: SignalServiceDeps) {
  const { reads } = deps;
  const changeStamp = deps.changes.anyChange();
  const cache = new Map<string, CacheEntry>();
  let cachedBytes = 0;

  const forget = (key: string) => {
    const entry = cache.get(key);
    if (entry) cachedBytes -= entry.bytes;
    cache.delete(key);
  };
  /** Drop the oldest entries until the cache is within both bounds (an entry over the whole budget alone is dropped too). */
  const trim = () => {
    for (const key of cache.keys()) {
      if (cache.size <= CACHE_LIMIT && cachedBytes <= deps.cacheBytes) return;
      forget(key);
    }
  };

  /**
   * The cache entry of `row`, validated by a read asked at `stamp`: kept under that stamp (never a
   * later one), so a write that committed while storage answered has moved the stamp past it and
   * the next request reads again.
   */
  function validated(key: string, row: SignalCandidate, stamp: number): CacheEntry {
    const version = `${row.syncedAt}:${row.enrichedAt}:${row.faqStamp}:${row.storeUpdatedAt}`;
    let entry = cache.get(key);
    if (entry && entry.rowId === row.rowId && entry.version === version) {
      entry.stamp = stamp;
    } else {
      entry = { stamp, rowId: row.rowId, version, rendered: {}, bytes: 0 };
      forget(key);
      cache.set(key, entry);
      trim();
    }
    return entry;
  }

  /** The rendered `format` of `row`, kept in `entry` while it is still the key's entry. */
  function rendered(entry: CacheEntry, key: string, row: SignalCandidate, platform: Platform, format: SignalFormat): MaybePromise<RenderedSignal> {
    const done = entry.rendered[format];
    if (done) return done;
    return andThen(sourceOf(row, platform), (source) => {
      const body = renderSignal(format, source, signalLinks(deps.baseUrl, platform, row.storeId, row.productId));
      const made = renderedSignal(body, source.updatedAt);
      entry.rendered[format] = made;
      const bytes = made.body.size;
      entry.bytes += bytes;
      if (cache.get(key) === entry) {
        cachedBytes += bytes;
        trim();
      }
      return made;
    });
  }

  function sourceOf(row: SignalCandidate, platform: Platform): MaybePromise<SignalSource> {
    const refs = row.handle !== null ? [row.productId, row.handle] : [row.productId];
    return andThen(both(reads.products.variantsOf([row.rowId]), reads.faqs.approved(row.storeId, 'product', refs)), ([variants, faqs]) => sourceFrom(row, platform, variants.get(row.rowId) ?? [], faqs));
  }

  function sourceFrom(row: SignalCandidate, platform: Platform, stored: ProductVariant[], faqs: PublicFaq[]): SignalSource {
    // Catalogue text comes from the platform as sent: no control character reaches any format.
    const clean = (text: string | null) => (text === null ? null : stripControlCharacters(text));
    const variants = stored.map((v) => ({
      ...v,
      title: clean(v.title),
      sku: clean(v.sku),
      barcode: clean(v.barcode),
      mpn: clean(v.mpn),
      options: Object.fromEntries(Object.entries(v.options).map(([name, value]) => [stripControlCharacters(name), stripControlCharacters(value)])),
    }));
    return {
      platform,
      productId: row.productId,
      storeId: row.storeId,
      storeDomain: row.storeDomain,
      title: stripControlCharacters(row.title),
      description: row.descriptionHtml === null ? [] : htmlToBlocks(row.descriptionHtml),
      price: row.price,
      currency: row.storeCurrency ?? row.productCurrency,
      availability: row.availability,
      sku: clean(row.sku),
      barcode: clean(row.barcode),
      mpn: clean(row.mpn),
      brand: clean(row.brand),
      images: row.images,
      url: row.url,
      options: row.options.map(stripControlCharacters),
      variants,
      settings: row.storeSettings,
      summary: row.summary,
      highlights: row.highlights,
      attributes: row.attributes,
      faqs,
      updatedAt: Math.max(row.syncedAt, row.enrichedAt, row.faqChangedAt ?? 0),
    };
  }

  return {
    /**
     * The rendered signal, from the cache while neither the storage's change stamp nor the product's
     * version moved: at once on a hit (and always on SQLite), a promise only when storage must answer.
     * `storeId` null: the product-id URL (any store of the platform); else the store-scoped URL.
     */
    render(platform: Platform, productId: string, format: SignalFormat, storeId: string | null = null): MaybePromise<RenderedSignal> {
      const key = `${platform}\n${productId}\n${storeId ?? ''}`;
      const stamp = changeStamp();
      const cached = cache.get(key);
      if (cached?.stamp === stamp && cached.rendered[format]) return cached.rendered[format];
      const what = `${platform} product ${JSON.stringify(productId)}${storeId === null ? '' : ` of store ${JSON.stringify(storeId)}`}`;
      return andThen(reads.signals.candidates(platform, productId, storeId), (candidates) => {
        const row = choose(candidates, what);
        return rendered(validated(key, row, stamp), key, row, platform, format);
      });
    },

    /** What the cache holds now (for /metrics). */
    cacheSize: () => ({ entries: cache.size, bytes: cachedBytes }),
  };
}

export type SignalService = ReturnType<typeof createSignalService>;
