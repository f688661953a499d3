import type { Platform } from '../stores/types.ts';
import { ApiError } from '../lib/errors.ts';
import { andThen, type MaybePromise } from '../lib/maybe-promise.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import type { DiscoveryRecords } from '../storage/signals.ts';
import type { Immediate } from '../storage/synchronous.ts';
import { markdownText, markdownUrl } from './markdown.ts';
import { signalLinks, storeBase, type SignalLinks } from './render.ts';
import { renderedSignal, type RenderedSignal } from './service.ts';

/** Products per sitemap file: four URLs each stays under the protocol's 50,000 URLs (and far under 50 MB). */
export const SITEMAP_PRODUCTS_PER_FILE = 10_000;

/** A store as its discovery files show it. */
export interface DiscoveryStore {
  id: string;
  platform: Platform;
  domain: string;
  status: 'active' | 'inactive';
  withdrawnAt: number | null;
}

/** An enriched, live product as the discovery files list it. */
export interface ListedProduct {
  productId: string;
  title: string;
  summary: string;
  syncedAt: number;
  enrichedAt: number;
  faqChangedAt: number | null;
}

interface StoreCache {
  /** The store's platform: a hit answers only under that platform's path. */
  platform: Platform;
  /** The change stamp the read that last validated the cache was asked at. */
  stamp: number;
  /** Changes whenever anything a discovery file shows may have changed (DiscoveryRecords.storeStamp). */
  storeStamp: string;
  products: ListedProduct[] | null;
  documents: Map<string, RenderedSignal>;
}

const lastModifiedOf = (p: ListedProduct) => Math.max(p.syncedAt, p.enrichedAt, p.faqChangedAt ?? 0);
/** W3C datetime, seconds precision, as the sitemap protocol shows it. */
const w3cDate = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const xml = (text: string) => text.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);

const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

function urlset(entries: { loc: string; lastmod: number }[]): string {
  const urls = entries.map((e) => `<url><loc>${xml(e.loc)}</loc><lastmod>${w3cDate(e.lastmod)}</lastmod></url>`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="${SITEMAP_NS}">\n${urls.join('\n')}${urls.length ? '\n' : ''}</urlset>\n`;
}

function sitemapIndex(entries: { loc: string; lastmod: number }[]): string {
  const maps = entries.map((e) => `<sitemap><loc>${xml(e.loc)}</loc><lastmod>${w3cDate(e.lastmod)}</lastmod></sitemap>`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="${SITEMAP_NS}">\n${maps.join('\n')}\n</sitemapindex>\n`;
}

/** The four signal URLs of each product, each with the product's Last-Modified. */
function productUrls(baseUrl: string, store: DiscoveryStore, products: ListedProduct[]): { loc: string; lastmod: number }[] {
  return products.flatMap((p) => {
    const links: SignalLinks = signalLinks(baseUrl, store.platform, store.id, p.productId);
    const lastmod = lastModifiedOf(p);
    return [links.jsonld, links.llm, links.md, links.self].map((loc) => ({ loc, lastmod }));
  });
}

/** llms.txt: H1 the store, a `>` summary, one `- [title](.md): summary` line per product, the sitemap as optional. */
function llmsTxt(baseUrl: string, store: DiscoveryStore, products: ListedProduct[]): string {
  const links = (p: ListedProduct) => signalLinks(baseUrl, store.platform, store.id, p.productId);
  const lines = [
    `# ${markdownText(store.domain)}`,
    '',
    `> Product information of ${markdownText(store.domain)}, published by svc: one Markdown page per product with its variants, prices, availability and answers to common questions.`,
    '',
    '## Products',
    '',
    ...products.map((p) => `- [${markdownText(p.title) || markdownText(p.productId)}](${markdownUrl(links(p).md)}): ${markdownText(p.summary)}`),
    '',
    '## Optional',
    '',
    `- [Sitemap](${markdownUrl(`${storeBase(baseUrl, store.platform, store.id)}/sitemap.xml`)}): every signal URL of the store (JSON-LD, LLM JSON, Markdown, index)`,
    '',
  ];
  return lines.join('\n');
}

/** Discovery files of a store: `sitemap.xml` (or an index of `sitemap-<n>.xml`), `llms.txt`. */
export type DiscoveryFile = { kind: 'sitemap'; page: number | null } | { kind: 'llms' };

export function parseDiscoveryFile(file: string): DiscoveryFile | null {
  if (file === 'sitemap.xml') return { kind: 'sitemap', page: null };
  if (file === 'llms.txt') return { kind: 'llms' };
  const page = /^sitemap-([1-9]\d{0,5})\.xml$/.exec(file);
  return page ? { kind: 'sitemap', page: Number(page[1]) } : null;
}

export const DISCOVERY_CONTENT_TYPES = { sitemap: 'application/xml; charset=utf-8', llms: 'text/plain; charset=utf-8', robots: 'text/plain; charset=utf-8' } as const;

/**
 * The store-level discovery files, cached per store like the signals: while the storage's change
 * stamp stands nothing is read (a hit answers at once; on SQLite every answer does); when it moved,
 * a cheap per-store stamp decides whether the product list must be read again.
 */
export function createDiscoveryService(deps: { records: Immediate<DiscoveryRecords>; changes: ChangeFeed; baseUrl: string }) {
  const { records } = deps;
  const changeStamp = deps.changes.anyChange();
  const caches = new Map<string, StoreCache>();
  let robots: { stamp: number; rendered: RenderedSignal } | null = null;
  const CACHE_LIMIT = 1000;

  function served(platform: Platform, storeId: string, store: DiscoveryStore | null): DiscoveryStore {
    if (!store || store.platform !== platform) throw new ApiError(404, 'not_found', `no ${platform} store ${JSON.stringify(storeId)}`);
    if (store.withdrawnAt !== null) throw new ApiError(410, 'signals_withdrawn', 'the store uninstalled svc or was disconnected; its signals are withdrawn');
    if (store.status !== 'active') throw new ApiError(404, 'not_found', `store ${JSON.stringify(storeId)} is inactive`);
    return store;
  }

  /** The store's cache, validated by reads asked at `stamp` (kept under that stamp, never a later one: a write while storage answers moves the stamp past it). */
  function cacheOf(store: DiscoveryStore, stamp: number): MaybePromise<StoreCache> {
    const storeId = store.id;
    const cache = caches.get(storeId);
    if (cache?.stamp === stamp) return cache;
    return andThen(records.storeStamp(storeId), (storeStamp) => {
      const current = caches.get(storeId);
      if (current && current.storeStamp === storeStamp) {
        current.stamp = stamp;
        return current;
      }
      const fresh: StoreCache = { platform: store.platform, stamp, storeStamp, products: null, documents: new Map() };
      caches.delete(storeId);
      if (caches.size >= CACHE_LIMIT) caches.delete(caches.keys().next().value!);
      caches.set(storeId, fresh);
      return fresh;
    });
  }

  function build(store: DiscoveryStore, file: DiscoveryFile, products: ListedProduct[]): string {
    if (file.kind === 'llms') return llmsTxt(deps.baseUrl, store, products);
    const pages = Math.max(1, Math.ceil(products.length / SITEMAP_PRODUCTS_PER_FILE));
    const slice = (page: number) => products.slice((page - 1) * SITEMAP_PRODUCTS_PER_FILE, page * SITEMAP_PRODUCTS_PER_FILE);
    if (file.page === null && pages === 1) return urlset(productUrls(deps.baseUrl, store, products));
    if (file.page === null) {
      const base = storeBase(deps.baseUrl, store.platform, store.id);
      return sitemapIndex(Array.from({ length: pages }, (_, i) => ({ loc: `${base}/sitemap-${i + 1}.xml`, lastmod: Math.max(...slice(i + 1).map(lastModifiedOf)) })));
    }
    if (file.page > pages || pages === 1) throw new ApiError(404, 'not_found', `the store's sitemap has ${pages === 1 ? 'a single file, sitemap.xml' : `${pages} files`}`);
    return urlset(productUrls(deps.baseUrl, store, slice(file.page)));
  }

  return {
    /** A store's sitemap.xml (or one of its pages) or llms.txt: 404 unknown or inactive store, 410 withdrawn. */
    render(platform: Platform, storeId: string, file: DiscoveryFile): MaybePromise<RenderedSignal> {
      const stamp = changeStamp();
      const key = file.kind === 'llms' ? 'llms' : `sitemap-${file.page ?? 0}`;
      const cached = caches.get(storeId);
      if (cached?.stamp === stamp && cached.platform === platform) {
        const hit = cached.documents.get(key);
        if (hit) return hit;
      }
      return andThen(records.store(storeId), (found) => {
        const store = served(platform, storeId, found);
        return andThen(cacheOf(store, stamp), (cache) => {
          const done = cache.documents.get(key);
          if (done) return done;
          return andThen(cache.products ?? records.listed(storeId), (products) => {
            cache.products = products;
            const body = build(store, file, products);
            const lastModified = products.reduce((latest, p) => Math.max(latest, lastModifiedOf(p)), 0);
            const rendered = renderedSignal(body, lastModified);
            cache.documents.set(key, rendered);
            return rendered;
          });
        });
      });
    },

    /** robots.txt: everything may be crawled; the sitemap of every store whose signals are served. */
    robots(): MaybePromise<RenderedSignal> {
      const stamp = changeStamp();
      if (robots?.stamp === stamp) return robots.rendered;
      return andThen(records.servedStores(), (stores) => {
        const sitemaps = stores.map((s) => `Sitemap: ${storeBase(deps.baseUrl, s.platform, s.id)}/sitemap.xml`);
        const body = ['User-agent: *', 'Disallow:', '', ...sitemaps, ''].join('\n');
        robots = { stamp, rendered: renderedSignal(body, 0) };
        return robots.rendered;
      });
    },
  };
}

export type DiscoveryService = ReturnType<typeof createDiscoveryService>;
