// The contract of the signals' records (src/storage/signals.ts), held on every engine under test:
// which catalogue rows a signal URL finds and the version stamps that move with every write behind
// them (the variants and approved FAQs a signal shows are the content records', held by
// content-records.test.ts), a store's discovery listing in byte order, and the caches in front of them
// (src/signals/service.ts, discovery.ts) over each engine's storage: a hit answers without a
// promise, and no product is served stale after a write, whether the write committed before the
// request, while the cache's read was answered, or through another instance.
import { describe, expect, test } from 'bun:test';
import type { MaybePromise } from '../../src/lib/maybe-promise.ts';
import { createDiscoveryService } from '../../src/signals/discovery.ts';
import { createSignalService } from '../../src/signals/service.ts';
import type { HotReads, Storage } from '../../src/storage/index.ts';
import type { DiscoveryRecords, SignalRecords } from '../../src/storage/signals.ts';
import type { FaqEntry } from '../../src/faqs/store.ts';
import { product, store, T0 } from '../helpers/catalog-data.ts';
import { closedAfterEachTest, ENGINES } from '../helpers/storage.ts';

const { open: openEngine, storageOf } = closedAfterEachTest();

const ENRICHMENT = { summary: 'Sturdy.', highlights: ['Two-year warranty'], attributes: { Material: 'Canvas' } };

function faq(id: string, storeId: string, entityRef: string, overrides: Partial<FaqEntry> = {}): FaqEntry {
  return { id, storeId, entityType: 'product', entityRef, question: `Q ${id}?`, answer: `A ${id}.`, position: 0, status: 'approved', createdAt: T0, updatedAt: T0, ...overrides };
}

/** A store `id` with product `productId` synced and enriched; the product's catalogue row id. */
async function enrichedProduct(storage: Storage, storeId: string, productId: string, at = T0): Promise<string> {
  expect(await storage.products.upsert(storeId, 'EUR', product(productId, at), { known: null }, at)).toBe('applied');
  const row = (await storage.products.get(storeId, productId))!;
  await storage.enrichments.put(storeId, row.id, ENRICHMENT, at);
  return row.id;
}

/** A cache's answer once it comes at once: on PostgreSQL, the notifications of the writes before it may still empty the cache once or twice. */
async function settledHit<T>(ask: () => MaybePromise<T>): Promise<T> {
  let answer = ask();
  for (let tries = 0; answer instanceof Promise && tries < 50; tries++) {
    await answer;
    await Bun.sleep(20);
    answer = ask();
  }
  expect(answer).not.toBeInstanceOf(Promise);
  return answer as T;
}

describe.each(ENGINES)('signal records ($name)', (engine) => {
  async function open() {
    const opened = await openEngine(engine);
    return { opened, storage: await storageOf(opened) };
  }

  test('candidates: the enriched, live rows of the product id in the stores of the platform, with their stores, or of one store', async () => {
    const { storage } = await open();
    await storage.stores.add(store('s1', { settings: { brand: 'Acme' } as never }));
    await storage.stores.add(store('s2', { status: 'inactive', signalsWithdrawnAt: T0 + 5, platformRef: 'https://s2.example' }));
    await storage.stores.add(store('b1', { platform: 'platform-b', platformRef: 'b1' }));
    const rowId = await enrichedProduct(storage, 's1', 'p1');
    await enrichedProduct(storage, 's2', 'p1');
    await enrichedProduct(storage, 'b1', 'p1');
    await storage.products.upsert('s1', 'EUR', product('unenriched', T0), { known: null }, T0);
    await enrichedProduct(storage, 's1', 'removed');
    await storage.products.remove('s1', 'removed', T0 + 1, true, T0 + 1);

    const found = await storage.hot.signals.candidates('platform-c', 'p1', null);
    expect(found.map((c) => [c.storeId, c.storeStatus, c.withdrawnAt]).sort()).toEqual([
      ['s1', 'active', null],
      ['s2', 'inactive', T0 + 5],
    ]);
    const one = await storage.hot.signals.candidates('platform-c', 'p1', 's1');
    expect(one).toHaveLength(1);
    expect(one[0]).toMatchObject({
      rowId,
      productId: 'p1',
      handle: 'handle-p1',
      title: 'Product p1',
      images: ['https://cdn.example/a.jpg'],
      options: ['Size'],
      storeDomain: 's1.example',
      storeCurrency: 'EUR',
      storeSettings: { brand: 'Acme' },
      summary: 'Sturdy.',
      highlights: ['Two-year warranty'],
      attributes: { Material: 'Canvas' },
      enrichedAt: T0,
      faqChangedAt: null,
      faqStamp: 0,
    });
    expect(typeof one[0]!.syncedAt).toBe('number');
    expect(await storage.hot.signals.candidates('platform-c', 'unenriched', null)).toEqual([]);
    expect(await storage.hot.signals.candidates('platform-c', 'removed', null)).toEqual([]);
    expect(await storage.hot.signals.candidates('platform-c', 'p1', 'b1')).toEqual([]);
    expect(await storage.hot.signals.candidates('platform-a', 'p1', null)).toEqual([]);
  });

  test("a candidate's version moves with every write behind it: the product, its enrichment, its FAQs (by id or handle), its store", async () => {
    const { storage } = await open();
    await storage.stores.add(store('s1'));
    const rowId = await enrichedProduct(storage, 's1', 'p1');
    const version = async () => {
      const [c] = await storage.hot.signals.candidates('platform-c', 'p1', 's1');
      return `${c!.syncedAt}:${c!.enrichedAt}:${c!.faqStamp}:${c!.storeUpdatedAt}`;
    };
    const seen = [await version()];
    const moved = async () => {
      const now = await version();
      expect(seen).not.toContain(now);
      seen.push(now);
    };
    await storage.products.upsert('s1', 'EUR', product('p1', T0 + 10, { title: 'New' }), { known: null }, T0);
    await moved();
    await storage.enrichments.put('s1', rowId, { ...ENRICHMENT, summary: 'Sturdier.' }, T0);
    await moved();
    await storage.faqs.create(faq('f1', 's1', 'p1'));
    await moved();
    await storage.faqs.create(faq('f2', 's1', 'handle-p1'));
    await moved();
    const [c] = await storage.hot.signals.candidates('platform-c', 'p1', 's1');
    expect(c!.faqChangedAt).toBeGreaterThanOrEqual(T0);
    await storage.stores.saveSettings('s1', { brand: 'Other' } as never, T0);
    await moved();
  });

  test("discovery: the store, its listing in byte order, a stamp that moves with every write behind the listing, the served stores oldest first", async () => {
    const { opened, storage } = await open();
    // A database whose collation is a language's (the test cluster's is C): the listing is in byte order all the same.
    if (opened.kind === 'postgres' && (await opened.client.sql`SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu'`).length > 0) {
      await opened.client.sql`ALTER TABLE products ALTER COLUMN product_id TYPE text COLLATE "und-x-icu"`;
    }
    await storage.stores.add(store('s1', { createdAt: T0 + 1 }));
    await storage.stores.add(store('s0', { createdAt: T0, platformRef: 'https://s0.example' }));
    await storage.stores.add(store('gone', { createdAt: T0 - 1, platformRef: 'https://gone.example', status: 'inactive', signalsWithdrawnAt: T0 }));
    expect(await storage.hot.discovery.store('s1')).toEqual({ id: 's1', platform: 'platform-c', domain: 's1.example', status: 'active', withdrawnAt: null });
    expect(await storage.hot.discovery.store('gone')).toMatchObject({ status: 'inactive', withdrawnAt: T0 });
    expect(await storage.hot.discovery.store('unknown')).toBeNull();
    expect(await storage.hot.discovery.servedStores()).toEqual([
      { id: 's0', platform: 'platform-c' },
      { id: 's1', platform: 'platform-c' },
    ]);

    const stamps = [await storage.hot.discovery.storeStamp('s1')];
    const moved = async () => {
      const now = await storage.hot.discovery.storeStamp('s1');
      expect(stamps).not.toContain(now);
      stamps.push(now);
    };
    // Byte order: digits, then capitals, then small letters (a collation would put them otherwise).
    for (const id of ['b', 'B', '10', '9', 'a']) {
      await enrichedProduct(storage, 's1', id);
      await moved();
    }
    await storage.products.upsert('s1', 'EUR', product('unenriched', T0), { known: null }, T0);
    await moved();
    await storage.enrichments.put('s1', (await storage.products.get('s1', '9'))!.id, { ...ENRICHMENT, summary: 'Resummarised.' }, T0);
    await moved();
    expect((await storage.hot.discovery.listed('s1')).map((p) => p.productId)).toEqual(['10', '9', 'B', 'a', 'b']);
    const [first] = await storage.hot.discovery.listed('s1');
    expect(first).toEqual({ productId: '10', title: 'Product 10', summary: 'Sturdy.', syncedAt: first!.syncedAt, enrichedAt: T0, faqChangedAt: null });
    await storage.faqs.create(faq('f1', 's1', 'handle-10'));
    await moved();
    expect((await storage.hot.discovery.listed('s1'))[0]!.faqChangedAt).toBe(T0);
    await storage.products.remove('s1', 'b', T0 + 1, true, T0 + 1);
    await moved();
    expect((await storage.hot.discovery.listed('s1')).map((p) => p.productId)).toEqual(['10', '9', 'B', 'a']);
    await storage.stores.saveSettings('s1', {}, T0);
    await moved();
    expect(await storage.hot.discovery.storeStamp('s0')).toBe(await storage.hot.discovery.storeStamp('s0'));
  });
});

describe.each(ENGINES)('the signal caches over the storage ($name)', (engine) => {
  /**
   * The engine with store s1 and its enriched product p1. `quiet`: on PostgreSQL the tables behind
   * the signals notify no one, so the change feed moves with this storage's own writes alone (their
   * announcement after the commit), as it does when their notifications have not arrived yet.
   */
  async function seeded({ quiet = false } = {}) {
    const opened = await openEngine(engine);
    if (quiet && opened.kind === 'postgres') {
      for (const table of ['stores', 'products', 'product_variants', 'product_enrichments', 'faq_entries', 'faq_entity_changes']) await opened.client.sql.unsafe(`DROP TRIGGER ${table}_changes ON ${table}`);
    }
    const storage = await storageOf(opened);
    await storage.stores.add(store('s1'));
    await enrichedProduct(storage, 's1', 'p1');
    return { opened, storage };
  }
  const signalsOver = (storage: Storage, signals: HotReads['signals'] = storage.hot.signals) =>
    createSignalService({ reads: { ...storage.hot, signals }, changes: storage.changes, baseUrl: 'https://svc.example', cacheBytes: 1_000_000 });
  const discoveryOver = (storage: Storage, records: HotReads['discovery'] = storage.hot.discovery) => createDiscoveryService({ records, changes: storage.changes, baseUrl: 'https://svc.example' });
  const text = async (rendered: MaybePromise<{ body: Blob }>) => (await rendered).body.text();
  const update = (storage: Storage, title: string, at: number) => storage.products.upsert('s1', 'EUR', product('p1', at, { title }), { known: null }, at);

  test('a cached signal answers without a promise; on SQLite every answer does', async () => {
    const { storage } = await seeded();
    const signals = signalsOver(storage);
    const first = signals.render('platform-c', 'p1', 'md');
    if (storage.engine === 'sqlite') expect(first).not.toBeInstanceOf(Promise);
    expect(await text(first)).toContain('Product p1');
    expect(await text(await settledHit(() => signals.render('platform-c', 'p1', 'md')))).toContain('Product p1');
    const discovery = discoveryOver(storage);
    expect(await text(await settledHit(() => discovery.render('platform-c', 's1', { kind: 'llms' })))).toContain('Product p1');
    expect(await text(await settledHit(() => discovery.robots()))).toContain('/stores/s1/sitemap.xml');
  });

  test('the stale-product case: a product written through the storage is served new by the next request, never the cached one', async () => {
    const { storage } = await seeded({ quiet: true });
    const signals = signalsOver(storage);
    expect(await text(signals.render('platform-c', 'p1', 'md'))).toContain('Product p1');
    expect(signals.render('platform-c', 'p1', 'md')).not.toBeInstanceOf(Promise);
    await update(storage, 'Renamed product', T0 + 10);
    expect(await text(signals.render('platform-c', 'p1', 'md'))).toContain('Renamed product');
    const discovery = discoveryOver(storage);
    expect(await text(discovery.render('platform-c', 's1', { kind: 'llms' }))).toContain('Renamed product');
    expect(discovery.render('platform-c', 's1', { kind: 'llms' })).not.toBeInstanceOf(Promise);
    await update(storage, 'Renamed again', T0 + 20);
    expect(await text(discovery.render('platform-c', 's1', { kind: 'llms' }))).toContain('Renamed again');
  });

  /** A write that moves the change stamp without changing anything the signals of s1 show. */
  const unrelatedWrite = (storage: Storage) => storage.stores.add(store('elsewhere', { platformRef: 'https://elsewhere.example' }));

  test('a product written while the cache was reading it is served new by the next request (a read is kept under the stamp it was asked at)', async () => {
    const { storage } = await seeded({ quiet: true });
    let writeDuringRead = false;
    let at = T0;
    const slow: SignalRecords = {
      candidates: async (...args) => {
        const rows = await storage.hot.signals.candidates(...args);
        if (writeDuringRead) {
          writeDuringRead = false;
          await update(storage, 'Written meanwhile', (at += 10));
        }
        return rows;
      },
    };
    const signals = signalsOver(storage, slow);
    // A first read, and one that finds the cached entry still current.
    for (const entry of ['new', 'validated again']) {
      if (entry === 'validated again') await unrelatedWrite(storage);
      writeDuringRead = true;
      expect(await text(signals.render('platform-c', 'p1', 'md'))).toContain('Product p1'); // what the read saw, before the write
      expect(await text(signals.render('platform-c', 'p1', 'md'))).toContain('Written meanwhile');
      await update(storage, 'Product p1', (at += 10));
      expect(await text(signals.render('platform-c', 'p1', 'md'))).toContain('Product p1');
    }
  });

  test("a store's listing written while the cache was reading its stamp is listed by the next request (a read is kept under the stamp it was asked at)", async () => {
    const { storage } = await seeded({ quiet: true });
    let writeDuringRead = false;
    const slow: DiscoveryRecords = {
      store: async (id) => storage.hot.discovery.store(id),
      storeStamp: async (id) => {
        const stamp = await storage.hot.discovery.storeStamp(id);
        if (writeDuringRead) {
          writeDuringRead = false;
          await update(storage, 'Written meanwhile', T0 + 10);
        }
        return stamp;
      },
      listed: async (id) => storage.hot.discovery.listed(id),
      servedStores: async () => storage.hot.discovery.servedStores(),
    };
    const discovery = discoveryOver(storage, slow);
    expect(await text(discovery.render('platform-c', 's1', { kind: 'llms' }))).toContain('Product p1');
    await unrelatedWrite(storage);
    writeDuringRead = true;
    // The store's stamp is unchanged when read: the listing cached before is answered.
    expect(await text(discovery.render('platform-c', 's1', { kind: 'llms' }))).toContain('Product p1');
    expect(await text(discovery.render('platform-c', 's1', { kind: 'llms' }))).toContain('Written meanwhile');
  });

  test('a product written through another instance on the same database is served new within a second', async () => {
    const { opened, storage } = await seeded();
    const there = await storageOf(opened);
    const signals = signalsOver(storage);
    expect(await text(await settledHit(() => signals.render('platform-c', 'p1', 'md')))).toContain('Product p1');
    await update(there, 'Renamed elsewhere', T0 + 10);
    let served = '';
    for (let waited = 0; waited <= 1000 && !served.includes('Renamed elsewhere'); waited += 20) {
      served = await text(signals.render('platform-c', 'p1', 'md'));
      if (!served.includes('Renamed elsewhere')) await Bun.sleep(20);
    }
    expect(served).toContain('Renamed elsewhere');
  });
});
