import { afterEach, describe, expect, test } from 'bun:test';
import { startFakePlatformB, type FakePlatformB } from './fakes/platform-b.ts';
import { startFakePlatformC, type FakePlatformC } from './fakes/platform-c.ts';
import { platformBProduct, platformCProduct, platformCVariableProduct } from './fakes/payloads.ts';
import { bearer, makeTestApp, tempDir, type TestApp } from './helpers/app.ts';
import { testSqliteOnly } from './helpers/engine.ts';
import { foreignWriteInProgress } from './helpers/foreign-writer.ts';
import { createStore, getProduct, rows } from './helpers/stores.ts';
import { listAllProducts, runSync, runSyncAcrossClockStep } from './helpers/sync.ts';

let t: TestApp;
let stop: (() => void) | null = null;
afterEach(async () => {
  await t?.close();
  stop?.();
});

describe('platform B catalogue sync (v3 catalog API, page by page)', () => {
  let fake: FakePlatformB;
  const HASH = 'bsync1';

  async function setup(count: number, options: { retryMs?: number; dataDir?: string } = {}) {
    fake = startFakePlatformB({ storeHash: HASH, accessToken: 'tok-b', currency: 'GBP' });
    stop = fake.stop;
    for (let i = 0; i < count; i++) fake.products.set(5001 + i, platformBProduct(5001 + i, { name: `Runner ${5001 + i}` }));
    t = await makeTestApp({ listen: true, dataDir: options.dataDir, env: { SVC_PLATFORM_B_API_BASE: fake.url }, webhooks: { queue: { baseDelayMs: options.retryMs ?? 20 } } });
  }
  const connect = async () => (await createStore(t, { platform: 'platform-b', domain: 'shoes.example.com', credentials: { storeHash: HASH, accessToken: 'tok-b' } })).store.id as string;

  test('connecting a store imports every product across pages', async () => {
    await setup(210);
    const storeId = await connect();
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'connect', kinds: { products: { pages: 5, items: 210 } } });
    expect(fake.calls.productPages).toEqual([1, 2, 3, 4, 5]);
    expect((await listAllProducts(t, storeId)).length).toBe(210);
    expect((await getProduct(t, storeId, 5001)).body).toMatchObject({ title: 'Runner 5001', price: '120', currency: 'GBP', url: 'https://shoes.example.com/trail-runner-2/' });
  });

  test('throttling: when the quota headers say the window is spent, the next page waits for its reset (no 429)', async () => {
    await setup(150);
    Object.assign(fake.rateLimit, { quota: 1, windowMs: 60 });
    const storeId = await connect();
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { products: { items: 150 } } });
    expect(fake.calls.productPages).toHaveLength(3);
    expect(fake.calls.overQuota).toBe(0);
  });

  test('a 429 (the quota spent by another client) is asked again after the reset, not counted as a failure', async () => {
    await setup(60);
    const storeId = await connect();
    Object.assign(fake.rateLimit, { quota: 5, windowMs: 300, used: 5, windowStart: performance.now() });
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', error: null, kinds: { products: { items: 60 } } });
    expect(fake.calls.overQuota).toBeGreaterThan(0);
    expect((await rows(t, 'jobs')).filter((job) => job.kind === 'catalog-sync.products')).toEqual([expect.objectContaining({ status: 'done', last_error: null })]);
  });

  test('restart mid-import: the pass resumes at the saved page, no page is read twice', async () => {
    const dir = tempDir();
    try {
      await setup(200, { retryMs: 3_600_000, dataDir: dir.dir });
      fake.pageHooks.beforeProductsPage = (page) => (page === 3 ? Response.json({ status: 500, title: 'Internal error' }, { status: 500 }) : undefined);
      const storeId = await connect();
      await t.webhooks.runner.runDueJobs();
      expect(fake.calls.productPages).toEqual([1, 2]);
      await t.close();
      fake.pageHooks.beforeProductsPage = null;
      t = await makeTestApp({ dataDir: dir.dir, clock: { now: () => Date.now() + 2 * 3_600_000 }, env: { SVC_PLATFORM_B_API_BASE: fake.url } });
      expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { products: { pages: 4, items: 200 } } });
      expect(fake.calls.productPages).toEqual([1, 2, 3, 4]);
      expect((await rows(t, 'products'))).toHaveLength(200);
    } finally {
      dir.remove();
    }
  });

  testSqliteOnly('the lock is SQLite\'s one write lock of the file (PostgreSQL locks rows)', 'a page applied while another connection (CLI, checkpointer) writes waits for it and is committed, never failed as locked', async () => {
    await setup(100);
    const storeId = await connect();
    let foreign: Promise<void> | null = null;
    // Held from before the page is answered until after it arrives: the page's transaction reads (is the pass current?) before it writes.
    fake.pageHooks.beforeProductsPage = async (page) => {
      if (page === 2) foreign = (await foreignWriteInProgress(t.config.databaseFile)).committed;
    };
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', error: null, kinds: { products: { items: 100 } } });
    await foreign;
    expect(foreign).not.toBeNull();
    expect((await rows(t, 'jobs')).filter((job) => job.kind === 'catalog-sync.products')).toEqual([expect.objectContaining({ status: 'done', last_error: null })]);
  });

  test('a product deleted by webhook during the import does not come back', async () => {
    await setup(100);
    const storeId = await connect();
    fake.pageHooks.beforeProductsPage = async (page) => {
      if (page !== 2) return;
      fake.products.delete(5060);
      await fake.deliver('store/product/deleted', 5060);
    };
    await runSync(t, storeId);
    expect((await getProduct(t, storeId, 5060)).status).toBe(404);
    expect((await listAllProducts(t, storeId)).length).toBe(99);
  });
});

describe('platform C catalogue sync (wc/v3/products, X-WP-TotalPages)', () => {
  let fake: FakePlatformC;

  async function setup(count: number, options: { retryMs?: number; dataDir?: string } = {}) {
    fake = startFakePlatformC({ consumerKey: 'ck_s', consumerSecret: 'cs_s', currency: 'SEK' });
    stop = fake.stop;
    for (let i = 0; i < count; i++) fake.products.set(7001 + i, { ...platformCProduct(7001 + i, fake.siteUrl, { name: `Set ${7001 + i}` }), slug: `set-${7001 + i}` });
    t = await makeTestApp({ listen: true, dataDir: options.dataDir, webhooks: { queue: { baseDelayMs: options.retryMs ?? 20 } } });
  }
  const connect = async () => (await createStore(t, { platform: 'platform-c', domain: 'coffee.example.com', credentials: { siteUrl: fake.siteUrl, consumerKey: 'ck_s', consumerSecret: 'cs_s' } })).store.id as string;

  test('connecting a store imports every product across pages, variable products with their variations', async () => {
    await setup(249);
    const { product, variations } = platformCVariableProduct(9000, fake.siteUrl);
    fake.products.set(9000, product);
    fake.variations.set(9000, variations);
    const storeId = await connect();
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { products: { pages: 3, items: 250 } } });
    expect(fake.calls.productPages).toEqual([1, 2, 3]);
    expect((await listAllProducts(t, storeId)).length).toBe(250);
    expect((await getProduct(t, storeId, 7001)).body).toMatchObject({ title: 'Set 7001', price: '64.00', currency: 'SEK' });
    expect((await getProduct(t, storeId, 9000)).body.variants.map((v: any) => v.variantId)).toEqual(['90001', '90002']);
  });

  test('a 429 with Retry-After: the page is asked again once it has passed, then the import completes', async () => {
    await setup(120);
    fake.throttle.next = 1;
    const storeId = await connect();
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', error: null, kinds: { products: { items: 120 } } });
    expect(fake.throttle.ignoredRetryAfter).toBe(0);
    expect(fake.calls.productPages).toEqual([1, 2]);
  });

  test('a 429 with Retry-After is timed on a monotonic clock: a wall-clock step forward does not end it early', async () => {
    await setup(120);
    fake.throttle.next = 1;
    const storeId = await connect();
    const sync = await runSyncAcrossClockStep(t, storeId, () => fake.throttle.refusedAt > 0);
    expect(sync).toMatchObject({ state: 'idle', error: null, kinds: { products: { items: 120 } } });
    expect(fake.throttle.ignoredRetryAfter).toBe(0);
    expect(fake.calls.productPages).toEqual([1, 2]);
  });

  test('restart mid-import: the pass resumes at the saved page, no page is read twice', async () => {
    const dir = tempDir();
    try {
      await setup(250, { retryMs: 3_600_000, dataDir: dir.dir });
      fake.pageHooks.beforeProductsPage = (page) => (page === 2 ? Response.json({ code: 'internal_server_error' }, { status: 503 }) : undefined);
      const storeId = await connect();
      await t.webhooks.runner.runDueJobs();
      expect(fake.calls.productPages).toEqual([1]);
      await t.close();
      fake.pageHooks.beforeProductsPage = null;
      t = await makeTestApp({ dataDir: dir.dir, clock: { now: () => Date.now() + 2 * 3_600_000 } });
      expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { products: { pages: 3, items: 250 } } });
      expect(fake.calls.productPages).toEqual([1, 2, 3]);
      expect((await rows(t, 'products'))).toHaveLength(250);
    } finally {
      dir.remove();
    }
  });

  test('a webhook update during the import wins over the older page; a webhook delete is not undone', async () => {
    await setup(250);
    const storeId = await connect();
    fake.pageHooks.beforeProductsPage = async (page) => {
      if (page !== 2) return;
      const renamed = { ...platformCProduct(7150, fake.siteUrl, { name: 'Renamed Set', modifiedGmt: '2026-01-12T12:00:00' }), slug: 'renamed' };
      fake.products.set(7150, renamed);
      await fake.deliver('product.updated', renamed);
      fake.products.delete(7160);
      await fake.deliver('product.deleted', { id: 7160 });
    };
    await runSync(t, storeId);
    expect((await getProduct(t, storeId, 7150)).body).toMatchObject({ title: 'Renamed Set', handle: 'renamed' });
    expect((await getProduct(t, storeId, 7160)).status).toBe(404);
  });

  test('reconciliation: a vanished product is removed once the platform answers 404 for it; one shifted across pages during the pass stays', async () => {
    await setup(250);
    const storeId = await connect();
    await runSync(t, storeId);
    fake.products.delete(7250); // deleted on the platform, its delivery lost
    fake.pageHooks.beforeProductsPage = (page) => {
      // Pages 1 and 2 are read: a product on page 1 is deleted, so 7201 moves from page 3 to page 2 and this pass never lists it.
      if (page === 2) fake.products.delete(7050);
    };
    const res = await t.request(`/api/v1/admin/stores/${storeId}/sync`, { method: 'POST', headers: bearer(await t.keyWith('admin')) });
    expect(res.status).toBe(202);
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'manual' });
    expect((await getProduct(t, storeId, 7250)).status).toBe(404);
    expect((await getProduct(t, storeId, 7201)).status).toBe(200);
    // 7050 was listed before it was deleted: this pass keeps it, the next one removes it.
    expect((await getProduct(t, storeId, 7050)).status).toBe(200);
    fake.pageHooks.beforeProductsPage = null;
    await t.request(`/api/v1/admin/stores/${storeId}/sync`, { method: 'POST', headers: bearer(await t.keyWith('admin')) });
    await runSync(t, storeId);
    expect((await getProduct(t, storeId, 7050)).status).toBe(404);
  });

  test('reconciliation: many vanished products are each confirmed and removed, over several runs of the job', async () => {
    await setup(300);
    const storeId = await connect();
    await runSync(t, storeId);
    for (let id = 7261; id <= 7300; id++) fake.products.delete(id); // the last 40, their deliveries lost
    await t.request(`/api/v1/admin/stores/${storeId}/sync`, { method: 'POST', headers: bearer(await t.keyWith('admin')) });
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'manual', kinds: { products: { items: 260 } } });
    expect((await listAllProducts(t, storeId)).length).toBe(260);
    expect(t.logLines().filter((line) => line.msg === 'catalog sync completed' && line.kind === 'products').map((line) => line.removed)).toEqual([0, 40]);
  });

  test('restart mid-sweep: the sweep after the last page goes on from its saved position; no page is read again', async () => {
    const dir = tempDir();
    try {
      await setup(250, { dataDir: dir.dir });
      const storeId = await connect();
      await runSync(t, storeId);
      fake.products.delete(7010);
      fake.products.delete(7240); // both deleted on the platform, their deliveries lost
      // The process stops while it confirms 7240, after the confirmation of 7010 was applied (the stop
      // aborts the call in flight: 7240's confirmation is not applied).
      fake.pageHooks.beforeProductFetch = (id) => (id === 7240 ? void t.webhooks.runner.stop() : undefined);
      await t.request(`/api/v1/admin/stores/${storeId}/sync`, { method: 'POST', headers: bearer(await t.keyWith('admin')) });
      await t.webhooks.runner.runDueJobs();
      expect(fake.calls.productPages).toEqual([1, 2, 3, 1, 2, 3]);
      expect((await t.webhooks.sync.view(storeId)).kinds.products.state).toBe('running');
      expect((await getProduct(t, storeId, 7010)).status).toBe(404);
      expect((await getProduct(t, storeId, 7240)).status).toBe(200);
      await t.close();
      fake.pageHooks.beforeProductFetch = null;
      t = await makeTestApp({ dataDir: dir.dir, clock: { now: () => Date.now() + 2 * 3_600_000 } }); // the stopped runner's leases are over
      expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'manual', kinds: { products: { pages: 3, items: 248 } } });
      expect(fake.calls.productPages).toEqual([1, 2, 3, 1, 2, 3]);
      expect((await getProduct(t, storeId, 7240)).status).toBe(404);
      expect((await listAllProducts(t, storeId)).length).toBe(248);
      expect(t.logLines().filter((line) => line.msg === 'catalog sync completed' && line.kind === 'products').map((line) => line.removed)).toEqual([2]);
    } finally {
      dir.remove();
    }
  });
});
