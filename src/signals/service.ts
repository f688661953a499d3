import type { Database } from 'bun:sqlite';
import type { Availability } from '../catalog/product-data.ts';
import type { Platform } from '../stores/types.ts';
import type { FaqRecords, ProductRecords } from '../storage/content.ts';
import type { Synchronous } from '../storage/synchronous.ts';
import { ApiError } from '../lib/errors.ts';
import { etagOf } from '../lib/http-cache.ts';
import { htmlToBlocks, stripControlCharacters } from '../lib/html.ts';
import type { StoreSettings } from '../stores/settings.ts';
import { renderSignal, signalLinks, type SignalFormat, type SignalSource } from './render.ts';

/** One enriched, live catalogue row of the requested platform product id, with its store and version stamps. */
interface Candidate {
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
  images: string;
  url: string | null;
  options: string;
  syncedAt: number;
  storeStatus: 'active' | 'inactive';
  withdrawnAt: number | null;
  storeCurrency: string | null;
  storeDomain: string;
  storeSettings: string;
  storeUpdatedAt: number;
  summary: string;
  highlights: string;
  attributes: string;
  enrichedAt: number;
  faqChangedAt: number | null;
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
  /** Database change stamp when the entry was last validated: while unchanged, nothing needs reading. */
  dbStamp: number;
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

// A product's FAQs are filed under its platform id or its handle. `total` of the change stamps is a
// version (any stamp moving moves it); `max` is the Last-Modified contribution.
const FAQ_CHANGES = `FROM faq_entity_changes c WHERE c.store_id = p.store_id AND c.entity_type = 'product' AND c.entity_ref IN (p.product_id, p.handle)`;
const CANDIDATES_SQL = `
SELECT p.id AS rowId, p.store_id AS storeId, p.product_id AS productId, p.handle, p.title, p.description_html AS descriptionHtml,
  p.price, p.currency AS productCurrency, p.availability, p.sku, p.barcode, p.mpn, p.brand, p.images, p.url, p.options, p.synced_at AS syncedAt,
  s.status AS storeStatus, s.signals_withdrawn_at AS withdrawnAt, s.currency AS storeCurrency, s.domain AS storeDomain, s.settings AS storeSettings,
  s.updated_at AS storeUpdatedAt,
  e.summary, e.highlights, e.attributes, e.updated_at AS enrichedAt,
  (SELECT max(c.changed_at) ${FAQ_CHANGES}) AS faqChangedAt,
  (SELECT total(c.changed_at) ${FAQ_CHANGES}) AS faqStamp
FROM stores s
JOIN products p ON p.store_id = s.id AND p.product_id = $productId AND p.removed_at IS NULL
JOIN product_enrichments e ON e.product_row_id = p.id
WHERE s.platform = $platform AND ($storeId IS NULL OR s.id = $storeId)`;

/**
 * Picks the product a signal URL names. Only enriched, live products count. Among them, the one of an
 * active store is served; two active stores of the platform with the same enriched product id are
 * ambiguous (404, never one merchant's data under the other's URL: the store-scoped URL names each
 * without ambiguity); none active but one withdrawn by `app/uninstalled` is 410; otherwise 404.
 */
function choose(candidates: Candidate[], what: string): Candidate {
  const active = candidates.filter((c) => c.storeStatus === 'active' && c.withdrawnAt === null);
  if (active.length === 1) return active[0]!;
  if (active.length > 1) throw new ApiError(404, 'not_found', `${what} is enriched in more than one store; its signal URL is ambiguous (use /api/v1/{platform}/stores/{storeId}/products/{id})`);
  if (candidates.some((c) => c.withdrawnAt !== null)) throw new ApiError(410, 'signals_withdrawn', `the store of ${what} uninstalled svc or was disconnected; its signals are withdrawn`);
  throw new ApiError(404, 'not_found', `no enriched ${what} in an active store`);
}

export interface SignalServiceDeps {
  sqlite: Database;
  /** SQLite's synchronous reads, as `sqlite`'s: the signal GETs answer without a promise (test/hot-paths.test.ts). */
  faqs: Pick<Synchronous<FaqRecords>, 'approved'>;
  /** The variants of catalogue rows. */
  variantsOf: Synchronous<ProductRecords>['variantsOf'];
  baseUrl: string;
  changeStamp: () => number;
  /** Most bytes of rendered bodies kept in the cache. */
  cacheBytes: number;
}

export function createSignalService(deps: SignalServiceDeps) {
  const candidates = deps.sqlite.query<Candidate, { $platform: string; $productId: string; $storeId: string | null }>(CANDIDATES_SQL);
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

  /** Validate (or build) the cache entry of a product against the database. */
  function refresh(platform: Platform, productId: string, storeId: string | null, key: string, dbStamp: number): { entry: CacheEntry; row: Candidate } {
    const what = `${platform} product ${JSON.stringify(productId)}${storeId === null ? '' : ` of store ${JSON.stringify(storeId)}`}`;
    const row = choose(candidates.all({ $platform: platform, $productId: productId, $storeId: storeId }), what);
    const version = `${row.syncedAt}:${row.enrichedAt}:${row.faqStamp}:${row.storeUpdatedAt}`;
    let entry = cache.get(key);
    if (entry && entry.rowId === row.rowId && entry.version === version) {
      entry.dbStamp = dbStamp;
    } else {
      entry = { dbStamp, rowId: row.rowId, version, rendered: {}, bytes: 0 };
      forget(key);
      cache.set(key, entry);
      trim();
    }
    return { entry, row };
  }

  function sourceOf(row: Candidate, platform: Platform): SignalSource {
    const refs = row.handle !== null ? [row.productId, row.handle] : [row.productId];
    // Catalogue text comes from the platform as sent: no control character reaches any format.
    const clean = (text: string | null) => (text === null ? null : stripControlCharacters(text));
    const variants = (deps.variantsOf([row.rowId]).get(row.rowId) ?? []).map((v) => ({
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
      images: JSON.parse(row.images),
      url: row.url,
      options: (JSON.parse(row.options) as string[]).map(stripControlCharacters),
      variants,
      settings: JSON.parse(row.storeSettings) as StoreSettings,
      summary: row.summary,
      highlights: JSON.parse(row.highlights),
      attributes: JSON.parse(row.attributes),
      faqs: deps.faqs.approved(row.storeId, 'product', refs),
      updatedAt: Math.max(row.syncedAt, row.enrichedAt, row.faqChangedAt ?? 0),
    };
  }

  return {
    /**
     * The rendered signal, from the cache while neither the database nor the product's version moved.
     * `storeId` null: the product-id URL (any store of the platform); else the store-scoped URL.
     */
    render(platform: Platform, productId: string, format: SignalFormat, storeId: string | null = null): RenderedSignal {
      const key = `${platform}\n${productId}\n${storeId ?? ''}`;
      const dbStamp = deps.changeStamp();
      const cached = cache.get(key);
      if (cached?.dbStamp === dbStamp && cached.rendered[format]) return cached.rendered[format];
      const { entry, row } = refresh(platform, productId, storeId, key, dbStamp);
      let rendered = entry.rendered[format];
      if (!rendered) {
        const source = sourceOf(row, platform);
        const body = renderSignal(format, source, signalLinks(deps.baseUrl, platform, row.storeId, row.productId));
        rendered = renderedSignal(body, source.updatedAt);
        entry.rendered[format] = rendered;
        const bytes = rendered.body.size;
        entry.bytes += bytes;
        if (cache.get(key) === entry) {
          cachedBytes += bytes;
          trim();
        }
      }
      return rendered;
    },

    /** What the cache holds now (for /metrics). */
    cacheSize: () => ({ entries: cache.size, bytes: cachedBytes }),
  };
}

export type SignalService = ReturnType<typeof createSignalService>;
