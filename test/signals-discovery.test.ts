import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { Window } from 'happy-dom';
import { fixedClock } from '../src/lib/clock.ts';
import { SITEMAP_PRODUCTS_PER_FILE } from '../src/signals/discovery.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { enrich, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';

const BASE = 'https://svc.example';
const T0 = Date.parse('2026-02-01T12:00:00Z');
const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

let t: TestApp;
let clock: ReturnType<typeof fixedClock>;
beforeEach(async () => {
  clock = fixedClock(T0);
  t = await makeTestApp({ clock, env: { SVC_BASE_URL: BASE } });
});
afterEach(() => t.close());

const get = (path: string, headers: Record<string, string> = {}) => t.request(path.replace(BASE, ''), { headers });
const storePath = (platform: string, storeId: string) => `/api/v1/${platform}/stores/${storeId}`;

async function enrichedIn(storeId: string, platform: 'platform-a' | 'platform-b' | 'platform-c', id: number, ref: string, title?: string) {
  const data = realisticProduct(platform, id, ref);
  await syncProduct(t, storeId, title ? { ...data, title } : data);
  expect((await enrich(t, storeId, String(id))).status).toBe(200);
}

/**
 * The sitemap protocol's shape (sitemaps.org schema 0.9): a `urlset` (or `sitemapindex`) in the
 * protocol's namespace whose children are `url` (`sitemap`) elements holding exactly one absolute
 * `loc` of at most 2,048 characters and an optional W3C-datetime `lastmod`, at most 50,000 of them.
 */
function parseSitemap(xml: string, root: 'urlset' | 'sitemapindex' = 'urlset'): { loc: string; lastmod: string }[] {
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true);
  const doc = new (new Window().DOMParser)().parseFromString(xml, 'application/xml');
  expect(doc.querySelector('parsererror')).toBeNull();
  const top = doc.documentElement;
  expect(top.tagName).toBe(root);
  expect(top.namespaceURI).toBe(SITEMAP_NS);
  const entries = [...top.children].map((entry) => {
    expect(entry.tagName).toBe(root === 'urlset' ? 'url' : 'sitemap');
    expect([...entry.children].map((c) => c.tagName)).toEqual(['loc', 'lastmod']);
    const loc = entry.children[0]!.textContent!;
    const lastmod = entry.children[1]!.textContent!;
    expect(loc.length).toBeLessThanOrEqual(2048);
    expect(new URL(loc).href).toBe(loc);
    expect(lastmod).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    return { loc, lastmod };
  });
  expect(entries.length).toBeLessThanOrEqual(50_000);
  return entries;
}

describe('store-scoped signal URLs', () => {
  test('the store-scoped URL serves the right store where the product-id URL is ambiguous', async () => {
    const one = await seedStore(t, 'platform-b', 'hash-one');
    const two = await seedStore(t, 'platform-b', 'hash-two');
    await enrichedIn(one, 'platform-b', 500, 'hash-one', 'First store shoe');
    await enrichedIn(two, 'platform-b', 500, 'hash-two', 'Second store shoe');
    const ambiguous = await get('/api/v1/platform-b/products/500.jsonld');
    expect(ambiguous.status).toBe(404);
    expect((await ambiguous.json()).detail).toContain('/api/v1/{platform}/stores/{storeId}/products/{id}');
    for (const [storeId, name] of [[one, 'First store shoe'], [two, 'Second store shoe']] as const) {
      for (const ext of ['jsonld', 'llm', 'md', 'meta']) {
        const res = await get(`${storePath('platform-b', storeId)}/products/500.${ext}`);
        expect(res.status).toBe(200);
        expect(await res.text()).toContain(name);
      }
    }
  });

  test('both URLs of an unambiguous product serve the same bytes, and the product-id URL keeps working', async () => {
    const storeId = await seedStore(t, 'platform-a', 'acme.myplatform-a.com');
    await enrichedIn(storeId, 'platform-a', 101, 'acme.myplatform-a.com');
    for (const ext of ['jsonld', 'llm', 'md', 'meta']) {
      const byId = await get(`/api/v1/platform-a/products/101.${ext}`);
      const scoped = await get(`${storePath('platform-a', storeId)}/products/101.${ext}`);
      expect(byId.status).toBe(200);
      expect(scoped.headers.get('etag')).toBe(byId.headers.get('etag'));
      expect(await scoped.text()).toBe(await byId.text());
    }
  });

  test('404 for another platform\'s path, an unknown store, a product of another store or not enriched; 410 once withdrawn', async () => {
    const storeId = await seedStore(t, 'platform-a', 'acme.myplatform-a.com');
    const other = await seedStore(t, 'platform-a', 'other.myplatform-a.com');
    await enrichedIn(storeId, 'platform-a', 101, 'acme.myplatform-a.com');
    await syncProduct(t, storeId, realisticProduct('platform-a', 102, 'acme.myplatform-a.com'));
    for (const path of [`${storePath('platform-b', storeId)}/products/101.jsonld`, `${storePath('platform-a', 'nope')}/products/101.jsonld`, `${storePath('platform-a', other)}/products/101.jsonld`, `${storePath('platform-a', storeId)}/products/102.jsonld`, `${storePath('platform-a', storeId)}/products/101.html`]) {
      expect((await get(path)).status).toBe(404);
    }
    await t.webhooks.stores.deactivate(storeId);
    expect((await get(`${storePath('platform-a', storeId)}/products/101.md`)).status).toBe(410);
    expect((await get(`${storePath('platform-a', storeId)}/sitemap.xml`)).status).toBe(410);
    expect((await get(`${storePath('platform-a', storeId)}/llms.txt`)).status).toBe(410);
  });
});

describe('sitemap.xml', () => {
  test('lists exactly the live, enriched products of that store (removed, unenriched and other stores\' absent), each with its four signal URLs and lastmod', async () => {
    const storeId = await seedStore(t, 'platform-a', 'acme.myplatform-a.com');
    const other = await seedStore(t, 'platform-a', 'other.myplatform-a.com');
    await enrichedIn(storeId, 'platform-a', 101, 'acme.myplatform-a.com');
    await enrichedIn(storeId, 'platform-a', 102, 'acme.myplatform-a.com');
    await enrichedIn(storeId, 'platform-a', 103, 'acme.myplatform-a.com');
    await syncProduct(t, storeId, realisticProduct('platform-a', 104, 'acme.myplatform-a.com'));
    await enrichedIn(other, 'platform-a', 105, 'other.myplatform-a.com');
    clock.advance(60_000);
    await t.webhooks.catalog.remove(storeId, '103', clock.now());
    const res = await get(`${storePath('platform-a', storeId)}/sitemap.xml`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const entries = parseSitemap(await res.text());
    const base = `${BASE}${storePath('platform-a', storeId)}/products`;
    expect(entries.map((e) => e.loc)).toEqual(['101', '102'].flatMap((id) => ['jsonld', 'llm', 'md', 'meta'].map((ext) => `${base}/${id}.${ext}`)));
    for (const entry of entries) {
      const signal = await get(entry.loc);
      expect(signal.status).toBe(200);
      expect(Date.parse(entry.lastmod)).toBe(Date.parse(signal.headers.get('last-modified')!));
    }
  });

  test('a withdrawn store\'s products are absent: its sitemap is 410 and robots.txt no longer names it', async () => {
    const storeId = await seedStore(t, 'platform-c', 'https://shop.example');
    const kept = await seedStore(t, 'platform-b', 'abc123');
    await enrichedIn(storeId, 'platform-c', 303, 'https://shop.example');
    const robots = async () => (await get('/robots.txt')).text();
    expect(await robots()).toBe(`User-agent: *\nDisallow:\n\nSitemap: ${BASE}${storePath('platform-c', storeId)}/sitemap.xml\nSitemap: ${BASE}${storePath('platform-b', kept)}/sitemap.xml\n`);
    await t.webhooks.stores.deactivate(storeId);
    expect((await get(`${storePath('platform-c', storeId)}/sitemap.xml`)).status).toBe(410);
    expect(await robots()).not.toContain(storeId);
  });

  test('cached and ETag\'d like the signals: 304 on If-None-Match, a new enrichment changes it at once', async () => {
    const storeId = await seedStore(t, 'platform-a', 'acme.myplatform-a.com');
    await enrichedIn(storeId, 'platform-a', 101, 'acme.myplatform-a.com');
    for (const file of ['sitemap.xml', 'llms.txt']) {
      const first = await get(`${storePath('platform-a', storeId)}/${file}`);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect(first.headers.get('cache-control')).toBe('public, max-age=300');
      expect(first.headers.get('last-modified')).toBe(new Date(T0).toUTCString());
      const again = await get(`${storePath('platform-a', storeId)}/${file}`, { 'If-None-Match': etag });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
    }
    const before = (await get(`${storePath('platform-a', storeId)}/sitemap.xml`)).headers.get('etag');
    // An unrelated write (a scan, another store) moves the database stamp but not the sitemap.
    await seedStore(t, 'platform-b', 'unrelated');
    expect((await get(`${storePath('platform-a', storeId)}/sitemap.xml`)).headers.get('etag')).toBe(before);
    clock.advance(1000);
    await enrichedIn(storeId, 'platform-a', 102, 'acme.myplatform-a.com');
    const after = await get(`${storePath('platform-a', storeId)}/sitemap.xml`, { 'If-None-Match': before! });
    expect(after.status).toBe(200);
    expect(await after.text()).toContain('/products/102.md</loc>');
    expect(await (await get(`${storePath('platform-a', storeId)}/llms.txt`)).text()).toContain('/products/102.md>)');
  });

  test(`more than ${SITEMAP_PRODUCTS_PER_FILE} products: sitemap.xml is an index of sitemap-<n>.xml files that list them all`, async () => {
    const storeId = await seedStore(t, 'platform-a', 'acme.myplatform-a.com');
    const count = SITEMAP_PRODUCTS_PER_FILE + 3;
    // The products and their enrichments in two statements, on either engine (a recursive CTE counts the rows).
    const numbers = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})`;
    await t.query(
      `${numbers} INSERT INTO products (id, store_id, product_id, title, images, options, platform_updated_at, synced_at, created_at) SELECT 'row-' || i, ?, CAST(100000 + i AS TEXT), 'P', '[]', '[]', 0, ${T0}, ${T0} FROM n`,
      storeId,
    );
    await t.query(`INSERT INTO product_enrichments (product_row_id, store_id, summary, highlights, attributes, created_at, updated_at) SELECT id, store_id, 'S', '[]', '{}', ${T0}, ${T0} FROM products WHERE store_id = ?`, storeId);
    await t.changesHeard();
    const base = `${BASE}${storePath('platform-a', storeId)}`;
    const index = parseSitemap(await (await get(`${storePath('platform-a', storeId)}/sitemap.xml`)).text(), 'sitemapindex');
    expect(index.map((e) => e.loc)).toEqual([`${base}/sitemap-1.xml`, `${base}/sitemap-2.xml`]);
    const first = parseSitemap(await (await get(index[0]!.loc)).text());
    const second = parseSitemap(await (await get(index[1]!.loc)).text());
    expect(first).toHaveLength(SITEMAP_PRODUCTS_PER_FILE * 4);
    expect(second).toHaveLength(3 * 4);
    expect(new Set([...first, ...second].map((e) => e.loc)).size).toBe(count * 4);
    expect((await get(`${storePath('platform-a', storeId)}/sitemap-3.xml`)).status).toBe(404);
  });
});

describe('llms.txt', () => {
  test('an H1, a summary and one link per product to its Markdown; every link resolves', async () => {
    const storeId = await seedStore(t, 'platform-a', 'acme.myplatform-a.com');
    await enrichedIn(storeId, 'platform-a', 101, 'acme.myplatform-a.com');
    await enrichedIn(storeId, 'platform-a', 102, 'acme.myplatform-a.com', 'Tote [Limited](https://evil.test)');
    const res = await get(`${storePath('platform-a', storeId)}/llms.txt`);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const text = await res.text();
    const lines = text.split('\n');
    expect(lines[0]).toBe('# acme.myplatform-a.com');
    expect(lines[2]!.startsWith('> ')).toBe(true);
    expect(lines.filter((l) => l.startsWith('## '))).toEqual(['## Products', '## Optional']);
    // Link text may hold escaped brackets; only an unescaped `](<` ends it.
    const links = [...text.matchAll(/(?<!\\)\[((?:\\.|[^\]\\])*)\]\(<([^>]*)>\)/g)].map((m) => m[2]!);
    const base = `${BASE}${storePath('platform-a', storeId)}`;
    expect(links).toEqual([`${base}/products/101.md`, `${base}/products/102.md`, `${base}/sitemap.xml`]);
    expect(text).toContain('- [Tote \\[Limited\\]\\(https:\\/\\/evil.test\\)]');
    for (const link of links) {
      const target = await get(link);
      expect(target.status).toBe(200);
      if (link.endsWith('.md')) expect(target.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    }
  });

  test('404 for an unknown discovery file or a store on another platform\'s path', async () => {
    const storeId = await seedStore(t, 'platform-a', 'acme.myplatform-a.com');
    for (const path of [`${storePath('platform-a', storeId)}/llms-full.txt`, `${storePath('platform-a', storeId)}/sitemap-0.xml`, `${storePath('platform-b', storeId)}/llms.txt`]) {
      expect((await get(path)).status).toBe(404);
    }
    expect((await get(`${storePath('platform-a', storeId)}/llms.txt`)).status).toBe(200);
  });

  test('another platform\'s path stays 404 once the store\'s own files are cached', async () => {
    const storeId = await seedStore(t, 'platform-a', 'acme.myplatform-a.com');
    await enrichedIn(storeId, 'platform-a', 101, 'acme.myplatform-a.com');
    for (const file of ['sitemap.xml', 'llms.txt']) {
      expect((await get(`${storePath('platform-a', storeId)}/${file}`)).status).toBe(200);
      for (const other of ['platform-b', 'platform-c']) {
        const res = await get(`${storePath(other, storeId)}/${file}`);
        expect(res.status).toBe(404);
        expect((await res.json()).error).toBe('not_found');
      }
    }
  });
});
