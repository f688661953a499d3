import { afterEach, describe, expect, test } from 'bun:test';
import { bearer, makeTestApp, type TestApp } from './helpers/app.ts';
import { enrich, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';

const SHOP = 'acme.myplatform-a.com';
const PRODUCTS = 24;
const FORMATS = ['jsonld', 'llm', 'md', 'meta'];
let t: TestApp;
afterEach(() => t.close());

/** Products with long descriptions (about 8 KB of text each), enriched so their signals are served. */
async function seedLargeProducts(): Promise<void> {
  const storeId = await seedStore(t, 'platform-a', SHOP);
  for (let id = 1; id <= PRODUCTS; id++) {
    const product = realisticProduct('platform-a', id, SHOP);
    await syncProduct(t, storeId, { ...product, descriptionHtml: `<p>${`Product ${id} is sturdy and well made. `.repeat(200)}</p>` });
    expect((await enrich(t, storeId, String(id))).status).toBe(200);
  }
}

async function cacheGauges(): Promise<{ bytes: number; entries: number }> {
  const text = await (await t.request('/metrics', { headers: bearer(await t.keyWith('metrics:read')) })).text();
  const gauge = (name: string) => Number(text.match(new RegExp(`^${name} (\\d+)$`, 'm'))![1]);
  return { bytes: gauge('svc_signal_cache_bytes'), entries: gauge('svc_signal_cache_entries') };
}

async function renderAll(): Promise<Map<string, string>> {
  const etags = new Map<string, string>();
  for (let id = 1; id <= PRODUCTS; id++) {
    for (const format of FORMATS) {
      const res = await t.request(`/api/v1/platform-a/products/${id}.${format}`);
      expect(res.status).toBe(200);
      etags.set(`${id}.${format}`, res.headers.get('etag')!);
    }
  }
  return etags;
}

describe('the signal render cache is bounded by bytes (SVC_SIGNAL_CACHE_BYTES), not only entries', () => {
  test('large signals never hold more than the byte budget; evicted products render again, the same', async () => {
    t = await makeTestApp({ env: { SVC_SIGNAL_CACHE_BYTES: '131072' } });
    await seedLargeProducts();
    const first = await renderAll();
    const held = await cacheGauges();
    expect(held.bytes).toBeGreaterThan(65_536); // the budget is used...
    expect(held.bytes).toBeLessThanOrEqual(131_072); // ...never exceeded
    expect(held.entries).toBeLessThan(PRODUCTS); // so older products were dropped, though far below the entry cap
    expect(await renderAll()).toEqual(first);
    expect((await cacheGauges()).bytes).toBeLessThanOrEqual(131_072);
  });

  test('with room for everything, every product stays cached', async () => {
    t = await makeTestApp({ env: { SVC_SIGNAL_CACHE_BYTES: String(64 * 1024 * 1024) } });
    await seedLargeProducts();
    await renderAll();
    const held = await cacheGauges();
    expect(held.entries).toBe(PRODUCTS);
    expect(held.bytes).toBeGreaterThan(PRODUCTS * FORMATS.length * 4_000);
  });

  test('the default budget is 32 MiB', async () => {
    t = await makeTestApp();
    expect(t.config.signalCacheBytes).toBe(32 * 1024 * 1024);
  });
});
