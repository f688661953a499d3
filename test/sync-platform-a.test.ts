import { afterEach, describe, expect, test } from 'bun:test';
import { startFakePlatformA, type FakePlatformA } from './fakes/platform-a.ts';
import { platformAProduct, platformASimpleProduct } from './fakes/payloads.ts';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { createStore, getProduct, rows } from './helpers/stores.ts';
import { getStore, listAllProducts, runSync, runSyncAcrossClockStep } from './helpers/sync.ts';
import { testSqliteOnly } from './helpers/engine.ts';

const SHOP = 'sync.myplatform-a.com';
const CREDENTIALS = { clientSecret: 'sync-client-secret', accessToken: 'tok-sync' };

let fake: FakePlatformA;
let t: TestApp;

/** `count` products with ids from 2001: every third one without options (one Default Title variant). */
function catalogue(count: number, updatedAt = '2026-01-10T10:00:00-05:00') {
  return Array.from({ length: count }, (_, i) => {
    const id = 2001 + i;
    const product = i % 3 === 2 ? platformASimpleProduct(id, { updatedAt }) : platformAProduct(id, { updatedAt, title: `Tote ${id}` });
    return { ...product, handle: `${product.handle}-${id}` };
  });
}

async function setup(products: any[], options: { bucket?: { maximumAvailable: number; restoreRate: number }; retryMs?: number; dataDir?: string } = {}) {
  fake = startFakePlatformA([{ domain: SHOP, ...CREDENTIALS, currency: 'EUR', products }]);
  // A small, fast bucket: a page costs 92 points of 100, so every page waits for the refill.
  Object.assign(fake.bucket, options.bucket ?? { maximumAvailable: 100, restoreRate: 4000 });
  t = await makeTestApp({ listen: true, dataDir: options.dataDir, env: { SVC_PLATFORM_A_API_BASE: fake.url }, webhooks: { queue: { baseDelayMs: options.retryMs ?? 20 } } });
}

async function connect(): Promise<string> {
  const created = await createStore(t, { platform: 'platform-a', domain: SHOP, credentials: CREDENTIALS });
  expect(created.status).toBe(201);
  return created.store.id;
}

afterEach(async () => {
  await t?.close();
  fake?.stop();
});

describe('platform A catalogue sync', () => {
  test('connecting a store imports every product across pages through the GraphQL Admin API', async () => {
    await setup(catalogue(305));
    const storeId = await connect();
    const sync = await runSync(t, storeId);
    expect(sync).toMatchObject({ state: 'idle', trigger: 'connect', error: null, kinds: { products: { state: 'idle', pages: 31, items: 305 } } });
    expect(sync.lastCompletedAt).not.toBeNull();
    const all = await listAllProducts(t, storeId);
    expect(all).toHaveLength(305);
    expect(new Set(all.map((p) => p.productId)).size).toBe(305);
    // Mapped exactly as a products/create delivery of the same product would be.
    const { body } = await getProduct(t, storeId, 2001);
    expect(body).toMatchObject({ title: 'Tote 2001', handle: 'waxed-canvas-tote-2001', price: '89.00', priceMax: '99.00', currency: 'EUR', availability: 'in_stock', options: ['Color'], brand: 'Northwind Goods', updatedAt: '2026-01-10T15:00:00.000Z' });
    expect(body.variants.map((v: any) => [v.variantId, v.options, v.availability, v.compareAtPrice, v.image])).toEqual([
      ['20010', { Color: 'Olive' }, 'in_stock', '99.00', 'https://cdn.platform-a.example/files/tote-2001-0.jpg?v=1736521200'],
      ['20011', { Color: 'Navy' }, 'out_of_stock', '99.00', 'https://cdn.platform-a.example/files/tote-2001-1.jpg?v=1736521200'],
      ['20012', { Color: 'Sand' }, 'in_stock', null, 'https://cdn.platform-a.example/files/tote-2001-2.jpg?v=1736521200'],
    ]);
    expect((await getProduct(t, storeId, 2003)).body).toMatchObject({ sku: 'CARD-2003', options: [], variants: [expect.objectContaining({ title: null, options: {} })] });
  });

  test('the sync state shows on GET /api/v1/admin/stores/:id: running with counts, then idle with the completion time; one log line per finished phase', async () => {
    await setup(catalogue(40));
    const storeId = await connect();
    const running = (await getStore(t, storeId)).sync;
    expect(running).toMatchObject({ state: 'running', trigger: 'connect', lastCompletedAt: null, kinds: { products: { state: 'running', pages: 0, items: 0 } } });
    await runSync(t, storeId);
    const store = await getStore(t, storeId);
    expect(store.sync).toMatchObject({ state: 'idle', kinds: { products: { pages: 4, items: 40 } } });
    expect(Date.parse(store.sync.lastCompletedAt)).toBeGreaterThan(Date.parse(store.sync.startedAt) - 1);
    const lines = t.logLines().filter((line) => String(line.msg).startsWith('catalog sync'));
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ level: 'info', msg: 'catalog sync completed', store: storeId, kind: 'products', trigger: 'connect', pages: 4, items: 40 }),
        expect.objectContaining({ level: 'info', msg: 'catalog sync completed', store: storeId, kind: 'categories', trigger: 'connect', pages: 1, items: 0 }),
        expect.objectContaining({ level: 'info', msg: 'catalog sync completed', store: storeId, kind: 'pages', trigger: 'connect', pages: 1, items: 0 }),
      ]),
    );
    expect(lines).toHaveLength(3);
  });

  test('throttling: the import waits for the cost bucket to refill instead of being refused (no request while the bucket is empty)', async () => {
    await setup(catalogue(150));
    const storeId = await connect();
    await runSync(t, storeId);
    expect(fake.stats.productPages).toHaveLength(15);
    // The bucket really ran dry (a page costs 92 of its 100 points) ...
    expect(fake.stats.lowestAvailable).toBeLessThan(10);
    // ... and not one query arrived before it had refilled enough to pay for it.
    expect(fake.stats.requestsWhileEmpty).toBe(0);
    expect((await listAllProducts(t, storeId)).length).toBe(150);
  });

  test('throttling: the refill is timed on a monotonic clock, so a wall-clock step forward sends no query before the bucket can pay', async () => {
    // A page costs 92 of 100 points and takes ~0.2 s to refill: far longer than a turn of the queue.
    await setup(catalogue(30), { bucket: { maximumAvailable: 100, restoreRate: 400 } });
    const storeId = await connect();
    const sync = await runSyncAcrossClockStep(t, storeId, () => fake.stats.productPages.length > 0);
    expect(sync).toMatchObject({ state: 'idle', error: null, kinds: { products: { items: 30 } } });
    expect(fake.stats.productPages).toHaveLength(3);
    expect(fake.stats.requestsWhileEmpty).toBe(0);
  });

  test('a query refused as throttled is asked again after the refill, not counted as a failure', async () => {
    await setup(catalogue(30));
    const storeId = await connect();
    // Drain the bucket behind svc's back (another app of the shop spending its points).
    fake.bucket.restoreRate = 400;
    await fetch(`${fake.url}/admin/api/2025-01/graphql.json`, { method: 'POST', headers: { 'x-platform-a-access-token': CREDENTIALS.accessToken }, body: JSON.stringify({ query: 'query { products(first: 10) { nodes { id } } }', variables: { first: 10 } }) });
    const sync = await runSync(t, storeId);
    expect(fake.stats.requestsWhileEmpty).toBeGreaterThan(0);
    expect(sync).toMatchObject({ state: 'idle', error: null, kinds: { products: { items: 30 } } });
    expect((await rows(t, 'jobs')).filter((job) => job.kind === 'catalog-sync.products')).toEqual([expect.objectContaining({ status: 'done', last_error: null })]);
  });

  test('a page that fails is retried with backoff; the pages before it are not read again', async () => {
    await setup(catalogue(60), { bucket: { maximumAvailable: 100_000, restoreRate: 100_000 }, retryMs: 200 });
    let failures = 1;
    fake.hooks.beforeProductsPage = ({ offset }) => (offset === 30 && failures-- > 0 ? Response.json({ errors: 'Internal Server Error' }, { status: 500 }) : undefined);
    const storeId = await connect();
    await t.webhooks.runner.runDueJobs();
    // Stopped at the failing page: still running, the error shown while it is retried.
    expect(await t.webhooks.sync.view(storeId)).toMatchObject({ state: 'running', kinds: { products: { pages: 3, items: 30 } } });
    expect((await t.webhooks.sync.view(storeId)).error).toContain('answered 500');
    const sync = await runSync(t, storeId);
    expect(sync).toMatchObject({ state: 'idle', error: null, kinds: { products: { pages: 6, items: 60 } } });
    expect(fake.stats.productPages).toHaveLength(6);
    expect(new Set(fake.stats.productPages).size).toBe(6);
  });

  test('a page that keeps failing ends the pass as failed with the reason', async () => {
    await setup(catalogue(30), { bucket: { maximumAvailable: 100_000, restoreRate: 100_000 }, retryMs: 1 });
    fake.hooks.beforeProductsPage = ({ offset }) => (offset === 10 ? Response.json({ errors: 'Internal Server Error' }, { status: 503 }) : undefined);
    const storeId = await connect();
    const sync = await runSync(t, storeId, 30_000);
    expect(sync).toMatchObject({ state: 'failed', lastCompletedAt: null, kinds: { products: { state: 'failed', pages: 1, items: 10 } } });
    expect(sync.error).toContain('answered 503');
    // What the pages before it brought stays.
    expect((await listAllProducts(t, storeId)).length).toBe(10);
    expect(t.logLines().filter((line) => line.msg === 'catalog sync failed')).toEqual([expect.objectContaining({ level: 'warn', kind: 'products', error: expect.stringContaining('503') })]);
  });

  test('restart mid-import: the pass resumes at the saved cursor, no page is read or applied twice', async () => {
    const dir = (await import('./helpers/app.ts')).tempDir();
    try {
      await setup(catalogue(100), { bucket: { maximumAvailable: 100_000, restoreRate: 100_000 }, retryMs: 3_600_000, dataDir: dir.dir });
      fake.hooks.beforeProductsPage = ({ offset }) => (offset === 50 ? Response.json({ errors: 'Bad Gateway' }, { status: 502 }) : undefined);
      const storeId = await connect();
      await t.webhooks.runner.runDueJobs(); // five pages, then the failure: the retry is an hour away
      expect(fake.stats.productPages).toHaveLength(5);
      await t.close();

      // The process restarts later; the platform has recovered.
      fake.hooks.beforeProductsPage = null;
      t = await makeTestApp({ dataDir: dir.dir, clock: { now: () => Date.now() + 2 * 3_600_000 }, env: { SVC_PLATFORM_A_API_BASE: fake.url } });
      const sync = await runSync(t, storeId);
      expect(sync).toMatchObject({ state: 'idle', kinds: { products: { pages: 10, items: 100 } } });
      expect(fake.stats.productPages).toHaveLength(10);
      expect(new Set(fake.stats.productPages).size).toBe(10);
      expect((await rows(t, 'products'))).toHaveLength(100);
    } finally {
      dir.remove();
    }
  });

  testSqliteOnly('on PostgreSQL a starting instance never frees the leases of running jobs (another instance may hold them): the pass is taken again when its lease ends', 'a pass left running by a process that died is taken again when the server starts, not after its lease', async () => {
    await setup(catalogue(20), { bucket: { maximumAvailable: 100_000, restoreRate: 100_000 } });
    const storeId = await connect();
    // As a kill -9 mid-page leaves it: claimed, its lease an hour away.
    await t.query("UPDATE jobs SET status = 'running', attempts = 1, lease_until = ? WHERE kind LIKE 'catalog-sync.%'", Date.now() + 3_600_000);
    expect(await t.webhooks.runner.runDueJobs()).toBe(0);
    t.webhooks.runner.start(10);
    try {
      const deadline = Date.now() + 10_000;
      while ((await t.webhooks.sync.view(storeId)).state === 'running' && Date.now() < deadline) await Bun.sleep(10);
    } finally {
      await t.webhooks.runner.stop();
    }
    expect(await t.webhooks.sync.view(storeId)).toMatchObject({ state: 'idle', kinds: { products: { items: 20 } } });
  });

  test('a webhook update that arrives during the import wins over the older page', async () => {
    await setup(catalogue(30), { bucket: { maximumAvailable: 100_000, restoreRate: 100_000 } });
    const storeId = await connect();
    fake.hooks.beforeProductsPage = async ({ offset }) => {
      // The page (product 2015 as it was) is already built; the merchant renames the product now.
      if (offset === 10) await fake.deliver(SHOP, 'products/update', { ...platformAProduct(2015, { title: 'Renamed Tote', updatedAt: '2026-01-12T10:00:00-05:00' }), handle: 'renamed' });
    };
    await runSync(t, storeId);
    expect((await getProduct(t, storeId, 2015)).body).toMatchObject({ title: 'Renamed Tote', handle: 'renamed', updatedAt: '2026-01-12T15:00:00.000Z' });
    expect((await getProduct(t, storeId, 2014)).body.title).toBe('Tote 2014');
  });

  test('a product deleted by webhook during the import does not come back', async () => {
    await setup(catalogue(30), { bucket: { maximumAvailable: 100_000, restoreRate: 100_000 } });
    const storeId = await connect();
    fake.hooks.beforeProductsPage = async ({ offset }) => {
      if (offset !== 10) return;
      fake.productsOf(SHOP).splice(fake.productsOf(SHOP).findIndex((p) => p.id === 2016), 1);
      await fake.deliver(SHOP, 'products/delete', { id: 2016 }, { triggeredAt: new Date().toISOString() });
    };
    await runSync(t, storeId);
    expect((await getProduct(t, storeId, 2016)).status).toBe(404);
    expect((await listAllProducts(t, storeId)).length).toBe(29);
  });

  test('a product with more variants than the first page of them gets all of them', async () => {
    const big = platformAProduct(3001);
    big.variants = Array.from({ length: 60 }, (_, n) => ({ ...big.variants[0]!, id: 30010 + n, title: `Size ${n}`, option1: `Size ${n}`, image_id: null }));
    big.options = [{ ...big.options[0]!, name: 'Size', values: big.variants.map((v) => v.option1!) }];
    // A bucket of 150 points: the variants query (102) waits for the refill after the products page (92).
    await setup([big], { bucket: { maximumAvailable: 150, restoreRate: 4000 } });
    const storeId = await connect();
    await runSync(t, storeId);
    const { body } = await getProduct(t, storeId, 3001);
    expect(body.variants).toHaveLength(60);
    expect(body.variants[59]).toMatchObject({ variantId: '30069', options: { Size: 'Size 59' } });
    expect(fake.stats.requestsWhileEmpty).toBe(0);
  });

  test('PUT .../credentials starts a new import that picks up what changed', async () => {
    await setup(catalogue(20), { bucket: { maximumAvailable: 100_000, restoreRate: 100_000 } });
    const storeId = await connect();
    await runSync(t, storeId);
    fake.productsOf(SHOP).push(...catalogue(25).slice(20));
    const res = await t.request(`/api/v1/admin/stores/${storeId}/credentials`, jsonRequest('PUT', { credentials: CREDENTIALS }, bearer(await t.keyWith('admin'))));
    expect(res.status).toBe(200);
    expect((await res.json()).sync).toMatchObject({ state: 'running', trigger: 'credentials' });
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'credentials', kinds: { products: { items: 25 } } });
    expect((await listAllProducts(t, storeId)).length).toBe(25);
  });

  test('each page gets its own attempts: a page failing late in a long pass is retried, not given up', async () => {
    // 15 pages: more steps than the queue's 12 attempts, so only a fresh count per page lets the 14th retry.
    await setup(catalogue(150), { bucket: { maximumAvailable: 100_000, restoreRate: 100_000 }, retryMs: 1 });
    let failures = 1;
    fake.hooks.beforeProductsPage = ({ offset }) => (offset === 130 && failures-- > 0 ? Response.json({ errors: 'Internal Server Error' }, { status: 500 }) : undefined);
    const storeId = await connect();
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', error: null, kinds: { products: { pages: 15, items: 150 } } });
  });

  test('new credentials supersede a running pass: the page it had in flight is not written (it may be another shop)', async () => {
    const OTHER = { accessToken: 'tok-other-shop', clientSecret: 'other-secret' };
    fake = startFakePlatformA([
      { domain: SHOP, ...CREDENTIALS, currency: 'EUR', products: catalogue(30) },
      { domain: 'other.myplatform-a.com', ...OTHER, currency: 'EUR', products: catalogue(5).map((p) => ({ ...p, id: p.id + 7000, handle: `other-${p.id}` })) },
    ]);
    Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
    t = await makeTestApp({ listen: true, env: { SVC_PLATFORM_A_API_BASE: fake.url }, webhooks: { queue: { baseDelayMs: 20 } } });
    const storeId = await connect();
    let replaced = false;
    fake.hooks.beforeProductsPage = async ({ shop, offset }) => {
      // The second page of the old shop is built; before it is answered, the merchant saves other credentials.
      if (shop !== SHOP || offset !== 10 || replaced) return;
      replaced = true;
      const res = await t.request(`/api/v1/admin/stores/${storeId}/credentials`, jsonRequest('PUT', { credentials: OTHER }, bearer(await t.keyWith('admin'))));
      expect(res.status).toBe(200);
    };
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'credentials', kinds: { products: { items: 5 } } });
    expect(replaced).toBe(true);
    // Only the new shop's products: the old pass's first page is swept, its page in flight never written.
    expect((await listAllProducts(t, storeId)).map((p) => p.productId).sort()).toEqual(['9001', '9002', '9003', '9004', '9005']);
  });

  test("a store connected through svc's app: no import (no API access), the sync state says why", async () => {
    await setup([]);
    const created = await createStore(t, { platform: 'platform-a', domain: 'viaapp.myplatform-a.com', currency: 'USD', credentials: { viaApp: true } });
    expect(created.store.sync).toMatchObject({ state: 'failed', error: expect.stringContaining('no API access') });
    expect((await rows(t, 'jobs'))).toHaveLength(0);
  });
});
