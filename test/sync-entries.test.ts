import { afterEach, describe, expect, test } from 'bun:test';
import { startFakePlatformA, type FakePlatformA } from './fakes/platform-a.ts';
import { startFakePlatformB, type FakePlatformB } from './fakes/platform-b.ts';
import { startFakePlatformC, type FakePlatformC } from './fakes/platform-c.ts';
import { platformACollection, platformAPage, platformBCategory, platformBPage, platformCCategory, platformCPage } from './fakes/payloads.ts';
import { fixedClock } from '../src/lib/clock.ts';
import { bearer, makeTestApp, tempDir, type TestApp } from './helpers/app.ts';
import { createStore, rows } from './helpers/stores.ts';
import { addFaq, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';
import { runSync } from './helpers/sync.ts';

let t: TestApp;
let stop: (() => void) | null = null;
afterEach(() => {
  t?.close();
  stop?.();
});

/** Every category or page of the store through the admin catalogue API, `limit` at a time. */
async function listAll(storeId: string, what: 'categories' | 'pages', limit = 500): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await t.request(`/api/v1/admin/stores/${storeId}/${what}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { headers: bearer(await t.keyWith('admin')) });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: any[]; nextCursor: string | null };
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

const requestSync = async (storeId: string) => t.request(`/api/v1/admin/stores/${storeId}/sync`, { method: 'POST', headers: bearer(await t.keyWith('admin')) });
const ids = (items: any[]) => items.map((item) => item.id);
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe('platform A: collections and pages through the GraphQL Admin API', () => {
  const SHOP = 'entries.myplatform-a.com';
  const CREDENTIALS = { clientSecret: 'entries-secret', accessToken: 'tok-entries' };
  let fake: FakePlatformA;

  async function setup(options: { collections?: number; pages?: number; bucket?: { maximumAvailable: number; restoreRate: number }; retryMs?: number; dataDir?: string } = {}) {
    fake = startFakePlatformA([
      {
        domain: SHOP,
        ...CREDENTIALS,
        currency: 'EUR',
        products: [],
        collections: range(1001, options.collections ?? 0).map((id) => platformACollection(id)),
        pages: range(501, options.pages ?? 0).map((id) => platformAPage(id)),
      },
    ]);
    stop = fake.stop;
    Object.assign(fake.bucket, options.bucket ?? { maximumAvailable: 100_000, restoreRate: 100_000 });
    t = await makeTestApp({ listen: true, dataDir: options.dataDir, env: { SVC_PLATFORM_A_API_BASE: fake.url }, webhooks: { queue: { baseDelayMs: options.retryMs ?? 20 } } });
  }
  const connect = async () => (await createStore(t, { platform: 'platform-a', domain: SHOP, credentials: CREDENTIALS })).store.id as string;

  test('connecting a store imports every collection and page across pages, with id, handle, title, URL and updated time', async () => {
    await setup({ collections: 120, pages: 60 });
    const storeId = await connect();
    const sync = await runSync(t, storeId);
    expect(sync).toMatchObject({ state: 'idle', error: null, kinds: { categories: { state: 'idle', pages: 3, items: 120 }, pages: { state: 'idle', pages: 2, items: 60 } } });
    expect(fake.stats.entryPages.collections).toHaveLength(3);
    const categories = await listAll(storeId, 'categories', 50);
    expect(ids(categories).sort()).toEqual(range(1001, 120).map(String));
    expect(categories.find((c) => c.id === '1001')).toEqual({
      id: '1001',
      handle: 'collection-1001',
      title: 'Collection 1001',
      url: `https://${SHOP}/collections/collection-1001`,
      updatedAt: '2026-01-10T15:00:00.000Z',
      syncedAt: expect.any(String),
    });
    const pages = await listAll(storeId, 'pages');
    expect(pages).toHaveLength(60);
    expect(pages.find((p) => p.id === '501')).toMatchObject({ handle: 'page-501', title: 'Page 501', url: `https://${SHOP}/pages/page-501` });
  });

  test('throttling: collections and pages wait for the cost bucket like products (no query while it cannot pay)', async () => {
    // A collections or pages query costs 52 points of 100 (a products page 92): the kinds share the bucket and wait for its refill.
    await setup({ collections: 200, pages: 150, bucket: { maximumAvailable: 100, restoreRate: 2000 } });
    const storeId = await connect();
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { categories: { items: 200 }, pages: { items: 150 } } });
    expect(fake.stats.entryPages.collections).toHaveLength(4);
    expect(fake.stats.lowestAvailable).toBeLessThan(20);
    expect(fake.stats.requestsWhileEmpty).toBe(0);
  });

  test('restart mid-import: the pass resumes at the saved cursor; no page is read twice, no entry is held twice', async () => {
    const dir = tempDir();
    try {
      await setup({ collections: 150, retryMs: 3_600_000, dataDir: dir.dir });
      fake.hooks.beforeEntriesPage = ({ connection, offset }) => (connection === 'collections' && offset === 100 ? Response.json({ errors: 'Bad Gateway' }, { status: 502 }) : undefined);
      const storeId = await connect();
      await t.webhooks.runner.runDueJobs();
      expect(fake.stats.entryPages.collections).toHaveLength(2);
      t.close();
      fake.hooks.beforeEntriesPage = null;
      t = await makeTestApp({ dataDir: dir.dir, clock: { now: () => Date.now() + 2 * 3_600_000 }, env: { SVC_PLATFORM_A_API_BASE: fake.url } });
      expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { categories: { pages: 3, items: 150 } } });
      expect(new Set(fake.stats.entryPages.collections).size).toBe(3);
      expect(fake.stats.entryPages.collections).toHaveLength(3);
      expect(rows(t, 'catalog_entries').filter((row) => row.type === 'category')).toHaveLength(150);
    } finally {
      dir.remove();
    }
  });

  test('reconciliation: a collection or page the shop no longer has is removed by the next complete pass; a renamed one is updated', async () => {
    await setup({ collections: 60, pages: 5 });
    const storeId = await connect();
    await runSync(t, storeId);
    const collections = fake.entriesOf(SHOP, 'collections');
    collections.splice(collections.findIndex((c) => c.id === 1010), 1);
    fake.entriesOf(SHOP, 'pages').splice(0, 1); // page 501
    fake.entriesOf(SHOP, 'pages')[0]!.title = 'Shipping & returns';
    expect((await requestSync(storeId)).status).toBe(202);
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'manual' });
    expect(ids(await listAll(storeId, 'categories'))).not.toContain('1010');
    expect(await listAll(storeId, 'categories')).toHaveLength(59);
    const pages = await listAll(storeId, 'pages');
    expect(ids(pages).sort()).toEqual(['502', '503', '504', '505']);
    expect(pages.find((p) => p.id === '502').title).toBe('Shipping & returns');
    const removed = t.logLines().filter((line) => line.msg === 'catalog sync completed' && line.trigger === 'manual').map((line) => [line.kind, line.removed]);
    expect(removed.sort()).toEqual([['categories', 1], ['pages', 1], ['products', 0]]);
  });

  test('a pass that fails removes nothing; the failure shows on its kind with the reason', async () => {
    await setup({ collections: 60, retryMs: 1 });
    const storeId = await connect();
    await runSync(t, storeId);
    fake.entriesOf(SHOP, 'collections').splice(0, 1);
    fake.hooks.beforeEntriesPage = ({ connection, offset }) => (connection === 'collections' && offset === 50 ? Response.json({ errors: 'Internal Server Error' }, { status: 500 }) : undefined);
    await requestSync(storeId);
    const sync = await runSync(t, storeId, 30_000);
    expect(sync).toMatchObject({ state: 'failed', kinds: { categories: { state: 'failed', pages: 1, items: 50 }, products: { state: 'idle' }, pages: { state: 'idle' } } });
    expect(sync.kinds.categories.error).toContain('answered 500');
    expect(ids(await listAll(storeId, 'categories'))).toContain('1001');
  }, 30_000);
});

describe('platform B: catalog categories and content pages (v3, quota headers)', () => {
  const HASH = 'bentries';
  let fake: FakePlatformB;

  async function setup(options: { categories?: number; pages?: number; retryMs?: number; dataDir?: string } = {}) {
    fake = startFakePlatformB({ storeHash: HASH, accessToken: 'tok-be', currency: 'GBP' });
    stop = fake.stop;
    for (const id of range(31, options.categories ?? 0)) fake.categories.set(id, platformBCategory(id));
    for (const id of range(701, options.pages ?? 0)) fake.pages.set(id, platformBPage(id));
    t = await makeTestApp({ listen: true, dataDir: options.dataDir, env: { SVC_PLATFORM_B_API_BASE: fake.url }, webhooks: { queue: { baseDelayMs: options.retryMs ?? 20 } } });
  }
  const connect = async () => (await createStore(t, { platform: 'platform-b', domain: 'shoes.example.com', credentials: { storeHash: HASH, accessToken: 'tok-be' } })).store.id as string;

  test('connecting a store imports every category and content page across pages', async () => {
    await setup({ categories: 230, pages: 120 });
    fake.categories.set(31, platformBCategory(31, { name: 'Trail Running', path: '/running/trail/' }));
    const storeId = await connect();
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { categories: { pages: 3, items: 230 }, pages: { pages: 2, items: 120 } } });
    expect(fake.calls.categoryPages).toEqual([1, 2, 3]);
    expect(fake.calls.contentPages).toEqual([1, 2]);
    const categories = await listAll(storeId, 'categories');
    expect(categories).toHaveLength(230);
    expect(categories.find((c) => c.id === '31')).toMatchObject({ handle: 'trail', title: 'Trail Running', url: 'https://shoes.example.com/running/trail/', updatedAt: null });
    expect((await listAll(storeId, 'pages')).find((p) => p.id === '701')).toMatchObject({ handle: 'page-701', title: 'Page 701', url: 'https://shoes.example.com/page-701/' });
  });

  test('throttling: one quota for every list: when the headers say it is spent, no kind asks before the reset (no 429)', async () => {
    await setup({ categories: 300, pages: 200 });
    Object.assign(fake.rateLimit, { quota: 2, windowMs: 80 });
    const storeId = await connect();
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { categories: { items: 300 }, pages: { items: 200 } } });
    expect(fake.calls.categoryPages).toHaveLength(3);
    expect(fake.calls.overQuota).toBe(0);
  });

  test('an answer without quota headers says nothing about the quota: the pass goes on at once (also under a frozen clock)', async () => {
    fake = startFakePlatformB({ storeHash: HASH, accessToken: 'tok-be', currency: 'GBP' });
    stop = fake.stop;
    fake.rateLimit.sendHeaders = false;
    for (const id of range(31, 150)) fake.categories.set(id, platformBCategory(id));
    t = await makeTestApp({ listen: true, clock: fixedClock(Date.parse('2026-01-20T12:00:00Z')), env: { SVC_PLATFORM_B_API_BASE: fake.url } });
    const storeId = await connect();
    expect(await runSync(t, storeId, 5_000)).toMatchObject({ state: 'idle', kinds: { categories: { pages: 2, items: 150 } } });
  });

  test('a 429 on a categories page is asked again after the reset, not counted as a failure', async () => {
    await setup({ categories: 150 });
    const storeId = await connect();
    Object.assign(fake.rateLimit, { quota: 5, windowMs: 300, used: 5, windowStart: performance.now() });
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', error: null, kinds: { categories: { items: 150 } } });
    expect(fake.calls.overQuota).toBeGreaterThan(0);
    expect(rows(t, 'jobs').filter((job) => job.kind === 'catalog-sync.categories')).toEqual([expect.objectContaining({ status: 'done', last_error: null })]);
  });

  test('restart mid-import: the pass resumes at the saved page, no page is read twice', async () => {
    const dir = tempDir();
    try {
      await setup({ pages: 250, retryMs: 3_600_000, dataDir: dir.dir });
      fake.pageHooks.beforeEntriesPage = (kind, page) => (kind === 'page' && page === 2 ? Response.json({ status: 500, title: 'Internal error' }, { status: 500 }) : undefined);
      const storeId = await connect();
      await t.webhooks.runner.runDueJobs();
      expect(fake.calls.contentPages).toEqual([1]);
      t.close();
      fake.pageHooks.beforeEntriesPage = null;
      t = await makeTestApp({ dataDir: dir.dir, clock: { now: () => Date.now() + 2 * 3_600_000 }, env: { SVC_PLATFORM_B_API_BASE: fake.url } });
      expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { pages: { pages: 3, items: 250 } } });
      expect(fake.calls.contentPages).toEqual([1, 2, 3]);
      expect(rows(t, 'catalog_entries').filter((row) => row.type === 'page')).toHaveLength(250);
    } finally {
      dir.remove();
    }
  });

  test('reconciliation: a vanished category is removed once the platform answers 404 for it; one shifted across pages during the pass stays', async () => {
    await setup({ categories: 250 });
    const storeId = await connect();
    await runSync(t, storeId);
    fake.categories.delete(280); // deleted on the platform
    fake.pageHooks.beforeEntriesPage = (kind, page) => {
      // Page 1 (31-130) is read: a category on it is deleted, so 131 moves back to page 1 and this pass never lists it.
      if (kind === 'category' && page === 2) fake.categories.delete(40);
    };
    await requestSync(storeId);
    await runSync(t, storeId);
    const held = ids(await listAll(storeId, 'categories'));
    expect(held).not.toContain('280');
    expect(held).toContain('131');
    expect(held).toContain('40'); // listed before it was deleted: the next pass removes it
    fake.pageHooks.beforeEntriesPage = null;
    await requestSync(storeId);
    await runSync(t, storeId);
    expect(ids(await listAll(storeId, 'categories'))).not.toContain('40');
    expect(await listAll(storeId, 'categories')).toHaveLength(248);
  });
});

describe('platform C: product categories and the site pages (X-WP-TotalPages, 429/5xx)', () => {
  let fake: FakePlatformC;

  async function setup(options: { categories?: number; pages?: number; retryMs?: number; dataDir?: string } = {}) {
    fake = startFakePlatformC({ consumerKey: 'ck_e', consumerSecret: 'cs_e', currency: 'SEK' });
    stop = fake.stop;
    for (const id of range(15, options.categories ?? 0)) fake.categories.set(id, platformCCategory(id, fake.siteUrl));
    for (const id of range(90, options.pages ?? 0)) fake.pages.set(id, platformCPage(id, fake.siteUrl));
    t = await makeTestApp({ listen: true, dataDir: options.dataDir, webhooks: { queue: { baseDelayMs: options.retryMs ?? 20 } } });
  }
  const connect = async () => (await createStore(t, { platform: 'platform-c', domain: 'coffee.example.com', credentials: { siteUrl: fake.siteUrl, consumerKey: 'ck_e', consumerSecret: 'cs_e' } })).store.id as string;

  test('connecting a store imports every category and every published page across pages (pages read without the shop keys)', async () => {
    await setup({ categories: 150, pages: 120 });
    fake.categories.set(15, platformCCategory(15, fake.siteUrl, { name: 'Tea &amp; Infusions', slug: 'tea' }));
    fake.pages.set(90, platformCPage(90, fake.siteUrl, { title: 'Shipping &#038; Returns', slug: 'shipping', modifiedGmt: '2026-01-11T09:30:00' }));
    const storeId = await connect();
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', error: null, kinds: { categories: { pages: 2, items: 150 }, pages: { pages: 2, items: 120 } } });
    expect(fake.calls.categoryPages).toEqual([1, 2]);
    expect(fake.calls.sitePages).toEqual([1, 2]);
    const categories = await listAll(storeId, 'categories');
    expect(categories).toHaveLength(150);
    expect(categories.find((c) => c.id === '15')).toMatchObject({ handle: 'tea', title: 'Tea & Infusions', url: `${fake.siteUrl}/product-category/tea/`, updatedAt: null });
    const pages = await listAll(storeId, 'pages');
    expect(pages).toHaveLength(120);
    expect(pages.find((p) => p.id === '90')).toMatchObject({ handle: 'shipping', title: 'Shipping & Returns', url: `${fake.siteUrl}/shipping/`, updatedAt: '2026-01-11T09:30:00.000Z' });
  });

  test('a 429 with Retry-After holds every list of the site until it has passed, then the import completes', async () => {
    await setup({ categories: 120, pages: 30 });
    fake.throttle.next = 2;
    const storeId = await connect();
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', error: null, kinds: { categories: { items: 120 }, pages: { items: 30 } } });
    expect(fake.throttle.ignoredRetryAfter).toBe(0);
    expect(fake.calls.categoryPages).toEqual([1, 2]);
  });

  test('a 5xx mid-way backs off and the pass goes on from that page; a restart resumes without reading a page twice', async () => {
    const dir = tempDir();
    try {
      await setup({ categories: 250, retryMs: 3_600_000, dataDir: dir.dir });
      fake.pageHooks.beforeEntriesPage = (kind, page) => (kind === 'category' && page === 2 ? Response.json({ code: 'internal_server_error' }, { status: 503 }) : undefined);
      const storeId = await connect();
      await t.webhooks.runner.runDueJobs();
      expect(fake.calls.categoryPages).toEqual([1]);
      expect((await t.webhooks.sync.view(storeId)).kinds.categories).toMatchObject({ state: 'running', error: expect.stringContaining('answered 503') });
      t.close();
      fake.pageHooks.beforeEntriesPage = null;
      t = await makeTestApp({ dataDir: dir.dir, clock: { now: () => Date.now() + 2 * 3_600_000 } });
      expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { categories: { pages: 3, items: 250 } } });
      expect(fake.calls.categoryPages).toEqual([1, 2, 3]);
      expect(rows(t, 'catalog_entries').filter((row) => row.type === 'category')).toHaveLength(250);
    } finally {
      dir.remove();
    }
  });

  test('reconciliation: a page deleted (or no longer public) is removed once the site answers 404 for it', async () => {
    await setup({ categories: 3, pages: 4 });
    const storeId = await connect();
    await runSync(t, storeId);
    fake.pages.delete(91);
    fake.categories.delete(16);
    await requestSync(storeId);
    await runSync(t, storeId);
    expect(ids(await listAll(storeId, 'pages')).sort()).toEqual(['90', '92', '93']);
    expect(ids(await listAll(storeId, 'categories')).sort()).toEqual(['15', '17']);
  });
});

describe('categories and pages in the admin API and the public FAQ endpoint', () => {
  const SHOP = 'faq-entries.myplatform-a.com';
  const CREDENTIALS = { clientSecret: 'faq-secret', accessToken: 'tok-faq' };
  const ORIGIN = 'https://www.faq-shop.test';

  async function setup() {
    const fake = startFakePlatformA([
      { domain: SHOP, ...CREDENTIALS, currency: 'EUR', products: [], collections: [platformACollection(2201, { handle: 'summer', title: 'Summer' })], pages: [platformAPage(601, { handle: 'shipping', title: 'Shipping' })] },
    ]);
    stop = fake.stop;
    Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
    t = await makeTestApp({ listen: true, env: { SVC_PLATFORM_A_API_BASE: fake.url } });
    const storeId = (await createStore(t, { platform: 'platform-a', domain: SHOP, credentials: CREDENTIALS })).store.id as string;
    await runSync(t, storeId);
    return storeId;
  }
  const publicFaqs = (key: string, type: string, ref: string) => t.request(`/api/v1/public/faqs?type=${type}&ref=${ref}`, { headers: { 'X-Api-Key': key, Origin: ORIGIN } });

  test('the public FAQ endpoint answers for a category and a page of the store by platform id or handle, whichever the FAQ was filed under', async () => {
    const storeId = await setup();
    const key = (await t.keys.create({ scopes: ['products:read'], allowedDomains: ['www.faq-shop.test'], storeId })).key;
    const faq = (entityType: string, entityRef: string, question: string) => addFaq(t, { storeId, entityType, entityRef, question, answer: 'Yes.', status: 'approved' });
    await faq('category', 'summer', 'Filed by handle?');
    await faq('category', '2201', 'Filed by id?');
    await faq('page', '601', 'Page by id?');
    for (const ref of ['summer', '2201']) {
      const res = await publicFaqs(key, 'category', ref);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.entity).toEqual({ type: 'category', ref });
      expect(body.items.map((i: any) => i.question).sort()).toEqual(['Filed by handle?', 'Filed by id?']);
    }
    // The widget detects /pages/shipping: the handle finds the FAQ filed under the page's id.
    expect((await (await publicFaqs(key, 'page', 'shipping')).json()).items.map((i: any) => i.question)).toEqual(['Page by id?']);
    // An entity svc does not hold answers with what was filed under that exact ref (here: nothing).
    expect((await (await publicFaqs(key, 'category', 'winter')).json()).items).toEqual([]);
  });

  test('GET .../titles names products, categories and pages by platform id or handle in one request (the console names FAQ cards by them); refs that name nothing are left out', async () => {
    const storeId = await setup();
    const product = realisticProduct('platform-a', 1004, SHOP);
    await syncProduct(t, storeId, product);
    const admin = bearer(await t.keyWith('admin'));
    const titles = async (query: string) => {
      const res = await t.request(`/api/v1/admin/stores/${storeId}/titles?${query}`, { headers: admin });
      return { status: res.status, body: await res.json() };
    };
    const products = await titles(`type=product&ref=1004&ref=${product.handle}&ref=gone%2Cwith-a-comma`);
    expect(products.status).toBe(200);
    expect(products.body.items).toEqual([
      { ref: '1004', id: '1004', handle: product.handle, title: product.title, url: product.url },
      { ref: product.handle, id: '1004', handle: product.handle, title: product.title, url: product.url },
    ]);
    expect((await titles('type=category&ref=summer&ref=2201&ref=601')).body.items.map((i: any) => [i.ref, i.title])).toEqual([['summer', 'Summer'], ['2201', 'Summer']]);
    expect((await titles('type=page&ref=shipping')).body.items).toEqual([{ ref: 'shipping', id: '601', handle: 'shipping', title: 'Shipping', url: expect.stringContaining('/pages/shipping') }]);
    // A product's refs never name a page.
    expect((await titles('type=product&ref=601')).body.items).toEqual([]);
    // A ref names the product with that platform id before one whose handle it is (as the widget
    // looks FAQs up), and only products of this store.
    await syncProduct(t, storeId, { ...realisticProduct('platform-a', 1005, SHOP), title: 'Handle clash', handle: '1004' });
    const elsewhere = await seedStore(t, 'platform-a', 'elsewhere.myplatform-a.com');
    await syncProduct(t, elsewhere, { ...realisticProduct('platform-a', 1004, 'elsewhere.myplatform-a.com'), title: 'Another store’s product', handle: 'another-1004' });
    expect((await titles('type=product&ref=1004&ref=another-1004')).body.items.map((i: any) => [i.ref, i.id, i.title])).toEqual([['1004', '1004', product.title]]);
    for (const bad of ['type=variant&ref=1', 'type=product', `type=product&${Array.from({ length: 101 }, (_, i) => `ref=${i}`).join('&')}`, 'type=product&ref=1&limit=5', 'type=product&type=page&ref=1']) {
      const res = await titles(bad);
      expect([bad, res.status, res.body.error]).toEqual([bad, 400, 'invalid_query']);
    }
    expect((await t.request('/api/v1/admin/stores/st_unknown/titles?type=product&ref=1', { headers: admin })).status).toBe(404);
    expect((await t.request(`/api/v1/admin/stores/${storeId}/titles?type=product&ref=1`)).status).toBe(401);
  });

  test('GET .../categories and .../pages page through the held entries with cursor and limit; 404 for an unknown store, 400 for a bad limit', async () => {
    const storeId = await setup();
    const first = await t.request(`/api/v1/admin/stores/${storeId}/categories?limit=1`, { headers: bearer(await t.keyWith('admin')) });
    expect(await first.json()).toEqual({ items: [expect.objectContaining({ id: '2201', handle: 'summer', title: 'Summer' })], nextCursor: null });
    expect((await t.request('/api/v1/admin/stores/st_unknown/pages', { headers: bearer(await t.keyWith('admin')) })).status).toBe(404);
    expect((await t.request(`/api/v1/admin/stores/${storeId}/pages?limit=0`, { headers: bearer(await t.keyWith('admin')) })).status).toBe(400);
    expect((await t.request(`/api/v1/admin/stores/${storeId}/pages`)).status).toBe(401);
  });
});
