import { afterEach, describe, expect, test } from 'bun:test';
import { startFakePlatformA, type FakePlatformA } from './fakes/platform-a.ts';
import { platformAProduct } from './fakes/payloads.ts';
import { bearer, jsonRequest, makeTestApp, tempDir, type TestApp } from './helpers/app.ts';
import { runCli } from './helpers/cli.ts';
import { createStore, getProduct } from './helpers/stores.ts';
import { listAllProducts, runSync } from './helpers/sync.ts';

const SHOP = 'reconcile.myplatform-a.com';
const CREDENTIALS = { clientSecret: 'rec-secret', accessToken: 'tok-rec' };
const product = (id: number, updatedAt = '2026-01-10T10:00:00-05:00') => ({ ...platformAProduct(id, { title: `Tote ${id}`, updatedAt }), handle: `tote-${id}` });

let fake: FakePlatformA;
let t: TestApp;
let offset = 0;

async function setup(count: number, options: { dataDir?: string; retryMs?: number } = {}) {
  offset = 0;
  fake = startFakePlatformA([{ domain: SHOP, ...CREDENTIALS, currency: 'EUR', products: Array.from({ length: count }, (_, i) => product(4001 + i)) }]);
  Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
  t = await makeTestApp({ listen: true, dataDir: options.dataDir, clock: { now: () => Date.now() + offset }, env: { SVC_PLATFORM_A_API_BASE: fake.url }, webhooks: { queue: { baseDelayMs: options.retryMs ?? 1 } } });
  const storeId = (await createStore(t, { platform: 'platform-a', domain: SHOP, credentials: CREDENTIALS })).store.id as string;
  await runSync(t, storeId);
  return storeId;
}

const requestSync = async (storeId: string) => t.request(`/api/v1/admin/stores/${storeId}/sync`, { method: 'POST', headers: bearer(await t.keyWith('admin')) });

afterEach(() => {
  t?.close();
  fake?.stop();
});

describe('catalogue reconciliation', () => {
  test('a complete pass removes a product the platform no longer has and adds one whose webhook was lost', async () => {
    const storeId = await setup(30);
    const list = fake.productsOf(SHOP);
    list.splice(list.findIndex((p) => p.id === 4010), 1); // deleted on the platform, its delivery lost
    list.push(product(4999)); // created on the platform, its delivery lost
    const res = await requestSync(storeId);
    expect(res.status).toBe(202);
    expect((await res.json()).sync).toMatchObject({ state: 'running', trigger: 'manual' });
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'manual', kinds: { products: { items: 30 } } });
    expect((await getProduct(t, storeId, 4010)).status).toBe(404);
    expect((await getProduct(t, storeId, 4999)).body.title).toBe('Tote 4999');
    expect((await listAllProducts(t, storeId)).length).toBe(30);
    expect(t.logLines().filter((line) => line.msg === 'catalog sync completed' && line.kind === 'products').map((line) => [line.trigger, line.removed])).toEqual([['connect', 0], ['manual', 1]]);
  });

  test('a pass that finds most of the catalogue gone removes all of it, in steps through the catalogue', async () => {
    const storeId = await setup(300);
    const list = fake.productsOf(SHOP);
    list.splice(0, list.length, ...list.filter((p) => p.id % 10 === 0)); // 270 deleted on the platform, their deliveries lost
    await requestSync(storeId);
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'manual', kinds: { products: { items: 30 } } });
    expect((await listAllProducts(t, storeId)).map((p) => Number(p.productId)).sort()).toEqual(list.map((p) => p.id).sort());
    expect(t.logLines().filter((line) => line.msg === 'catalog sync completed' && line.kind === 'products').map((line) => line.removed)).toEqual([0, 270]);
  });

  test('a pass that does not complete removes nothing', async () => {
    const storeId = await setup(30);
    const list = fake.productsOf(SHOP);
    list.splice(list.findIndex((p) => p.id === 4001), 1);
    fake.hooks.beforeProductsPage = ({ offset: at }) => (at === 20 ? Response.json({ errors: 'Internal Server Error' }, { status: 500 }) : undefined);
    await requestSync(storeId);
    expect(await runSync(t, storeId, 30_000)).toMatchObject({ state: 'failed' });
    expect((await getProduct(t, storeId, 4001)).status).toBe(200);
  });

  test('a product created by webhook while a pass runs is not swept by it', async () => {
    const storeId = await setup(30);
    fake.hooks.beforeProductsPage = async ({ offset: at }) => {
      if (at === 20) await fake.deliver(SHOP, 'products/create', product(3000, '2026-01-12T10:00:00-05:00'));
    };
    await requestSync(storeId);
    await runSync(t, storeId);
    expect((await getProduct(t, storeId, 3000)).status).toBe(200);
  });

  test('POST .../sync while a pass runs leaves it running (no second pass); 404 for an unknown store', async () => {
    const storeId = await setup(5);
    await requestSync(storeId);
    const startedAt = (await t.webhooks.sync.view(storeId)).startedAt;
    await Bun.sleep(5);
    expect((await (await requestSync(storeId)).json()).sync.startedAt).toBe(startedAt);
    expect((await requestSync('st_unknown')).status).toBe(404);
  });

  test('the schedule starts a pass for a store whose last pass is older than the interval, not before', async () => {
    const storeId = await setup(10);
    expect(await t.webhooks.sync.reconcileDue(3_600_000)).toBe(0);
    offset = 2 * 3_600_000;
    expect(await t.webhooks.sync.reconcileDue(3_600_000)).toBe(1);
    expect(await t.webhooks.sync.view(storeId)).toMatchObject({ state: 'running', trigger: 'schedule' });
    expect(await t.webhooks.sync.reconcileDue(3_600_000)).toBe(0); // running: not started twice
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'schedule' });
  });

  test('the schedule leaves a store whose connection is under way to it: no pass before its hooks are in place, and its import reads each page once', async () => {
    fake = startFakePlatformA([{ domain: SHOP, ...CREDENTIALS, currency: 'EUR', products: Array.from({ length: 5 }, (_, i) => product(4001 + i)) }]);
    let register!: () => void;
    const registering = new Promise<void>((resolve) => (register = resolve));
    fake.hooks.beforeQuery = async () => {
      await registering;
      return undefined;
    };
    t = await makeTestApp({ listen: true, env: { SVC_PLATFORM_A_API_BASE: fake.url }, webhooks: { connectAnswerMs: 20 } });
    const { store } = await createStore(t, { platform: 'platform-a', domain: SHOP, credentials: CREDENTIALS });
    expect(store.hooks.status).toBe('registering');
    // Never synced, but its connection (hooks, currency) is under way: left to it.
    expect(await t.webhooks.sync.reconcileDue(0)).toBe(0);
    expect(await t.webhooks.sync.view(store.id)).toMatchObject({ state: 'idle', startedAt: null });
    register();
    // The connection starts the import once the hooks and the currency are in place.
    for (let waited = 0; (await t.webhooks.sync.view(store.id)).startedAt === null && waited < 10_000; waited += 10) await Bun.sleep(10);
    expect(await runSync(t, store.id)).toMatchObject({ state: 'idle', trigger: 'connect', kinds: { products: { pages: 1, items: 5 } } });
    expect(fake.stats.productPages).toHaveLength(1);
    // Connected, it is the schedule's again.
    expect(await t.webhooks.sync.reconcileDue(0)).toBe(1);
  });

  test('the schedule, run the moment a store or its new credentials are committed, leaves the store to its connection: they are committed with its job, and each import reads each page once', async () => {
    fake = startFakePlatformA([{ domain: SHOP, ...CREDENTIALS, currency: 'EUR', products: Array.from({ length: 5 }, (_, i) => product(4001 + i)) }]);
    Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
    // What the schedule started each time it ran right after one of those writes (on PostgreSQL the
    // leader's reconciliation runs beside every other instance's requests).
    const started: number[] = [];
    let reconcile: (() => Promise<number>) | null = null;
    const thenReconcile = async <T,>(written: Promise<T>): Promise<T> => {
      const row = await written;
      if (reconcile) started.push(await reconcile());
      return row;
    };
    t = await makeTestApp({
      listen: true,
      env: { SVC_PLATFORM_A_API_BASE: fake.url },
      storage: (given) => ({ ...given, stores: { ...given.stores, add: (...args) => thenReconcile(given.stores.add(...args)), saveCredentials: (...args) => thenReconcile(given.stores.saveCredentials(...args)) } }),
    });
    reconcile = () => t.webhooks.sync.reconcileDue(0);
    const { store } = await createStore(t, { platform: 'platform-a', domain: SHOP, credentials: CREDENTIALS });
    expect(await runSync(t, store.id)).toMatchObject({ state: 'idle', trigger: 'connect', kinds: { products: { pages: 1, items: 5 } } });
    const saved = await t.request(`/api/v1/admin/stores/${store.id}/credentials`, jsonRequest('PUT', { credentials: CREDENTIALS }, bearer(await t.keyWith('admin'))));
    expect(saved.status).toBe(200);
    expect(await runSync(t, store.id)).toMatchObject({ state: 'idle', trigger: 'credentials', kinds: { products: { pages: 1, items: 5 } } });
    expect(started).toEqual([0, 0]);
    expect(fake.stats.productPages).toHaveLength(2);
    // Each connection ran in the job stored with it: two, both done.
    expect((await t.query("SELECT status FROM jobs WHERE kind = 'store.connect'")).map((row) => row.status)).toEqual(['done', 'done']);
  });

  test('SVC_SYNC_INTERVAL_HOURS: default 24, 0 turns the schedule off, other values are refused', async () => {
    const { loadConfig } = await import('../src/config.ts');
    expect(loadConfig({}, {}).syncIntervalHours).toBe(24);
    expect(loadConfig({}, { SVC_SYNC_INTERVAL_HOURS: '0' }).syncIntervalHours).toBe(0);
    expect(() => loadConfig({}, { SVC_SYNC_INTERVAL_HOURS: 'daily' })).toThrow('SVC_SYNC_INTERVAL_HOURS');
  });

  test('svc stores sync ID logs what it decides on the spot as the server logs: JSON lines with ts, level and msg', async () => {
    const dir = tempDir();
    try {
      t = await makeTestApp({ dataDir: dir.dir });
      const { store } = await createStore(t, { platform: 'platform-a', domain: 'app.myplatform-a.com', currency: 'EUR', credentials: { viaApp: true } });
      t.close();
      const out = await runCli(['stores', 'sync', store.id, '--data-dir', dir.dir]);
      expect(out.code).toBe(0);
      expect(out.json.sync.state).toBe('failed');
      const lines = out.stderr.trim().split('\n').map((line) => JSON.parse(line));
      expect(lines.length).toBe(3);
      for (const line of lines) expect(line).toMatchObject({ ts: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/), level: 'warn', msg: 'catalog sync failed', store: store.id });
    } finally {
      dir.remove();
    }
  });

  test('svc stores sync ID queues a pass the server carries out; an unknown id is a 404 error', async () => {
    const dir = tempDir();
    try {
      const storeId = await setup(3, { dataDir: dir.dir });
      t.close();
      const out = await runCli(['stores', 'sync', storeId, '--data-dir', dir.dir]);
      expect(out.code).toBe(0);
      expect(out.json).toMatchObject({ id: storeId, sync: { state: 'running', trigger: 'manual' } });
      const missing = await runCli(['stores', 'sync', 'st_unknown', '--data-dir', dir.dir]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('not_found');
      t = await makeTestApp({ dataDir: dir.dir, env: { SVC_PLATFORM_A_API_BASE: fake.url } });
      expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'manual', kinds: { products: { items: 3 } } });
    } finally {
      dir.remove();
    }
  });
});
