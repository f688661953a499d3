import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { startFakePlatformB, type FakePlatformB } from './fakes/platform-b.ts';
import { platformBProduct, platformBVariantProduct } from './fakes/payloads.ts';
import { bearer, makeTestApp, tempDir, type TestApp } from './helpers/app.ts';
import { seedStore } from './helpers/signals.ts';
import { settleInitialSyncs } from './helpers/sync.ts';
import { createStore, getProduct, rows, wrongEnding } from './helpers/stores.ts';

const HASH = 'abc123';
const OTHER_HASH = 'zzz999';
const START = Date.parse('2026-01-20T12:00:00Z');

let fake: FakePlatformB;
let t: TestApp;
let clock: ReturnType<typeof fixedClock>;
let data: { dir: string; remove(): void };
let storeId: string;
let otherStoreId: string;
let hookUrl: string;

async function openApp() {
  t = await makeTestApp({ listen: true, clock, dataDir: data.dir, env: { SVC_PLATFORM_B_API_BASE: fake.url } });
  hookUrl = `${t.url}/api/v1/platform-b/webhooks`;
}

beforeEach(async () => {
  clock = fixedClock(START);
  data = tempDir();
  fake = startFakePlatformB({ storeHash: HASH, accessToken: 'tok-b', currency: 'GBP' }, [{ storeHash: OTHER_HASH, accessToken: 'tok-other' }]);
  await openApp();
  const created = await createStore(t, { platform: 'platform-b', domain: 'shop.example.com', credentials: { storeHash: HASH, accessToken: 'tok-b' } });
  expect(created.status).toBe(201);
  storeId = created.store.id;
  otherStoreId = (await createStore(t, { platform: 'platform-b', domain: 'other.example.com', currency: 'USD', credentials: { storeHash: OTHER_HASH, accessToken: 'tok-other' } })).store.id;
  await settleInitialSyncs(t);
  fake.products.set(501, platformBProduct(501));
});

afterEach(() => {
  t.close();
  fake.stop();
  data.remove();
});

const product = (id: string) => getProduct(t, storeId, id);
const otherSecret = () => fake.otherHooks.get(OTHER_HASH)![0]!.headers['X-Svc-Webhook-Secret']!;
const ownSecret = () => fake.hooks[0]!.headers['X-Svc-Webhook-Secret']!;

describe('platform B: hook registration', () => {
  test('saving credentials registers the three product scopes with the store id and secret headers, never order scopes', () => {
    expect(fake.hooks.map((h) => h.scope).sort()).toEqual(['store/product/created', 'store/product/deleted', 'store/product/updated']);
    for (const hook of fake.hooks) {
      expect(hook.destination).toBe(hookUrl);
      expect(hook.is_active).toBe(true);
      expect(hook.headers['X-Svc-Store-Id']).toBe(storeId);
      expect(hook.headers['X-Svc-Webhook-Secret']!.length).toBeGreaterThanOrEqual(43);
    }
  });

  test('the currency is read from the platform when omitted', async () => {
    const res = await t.request(`/api/v1/admin/stores/${storeId}`, { headers: bearer(await t.keyWith('admin')) });
    expect(await res.json()).toMatchObject({ currency: 'GBP', hooks: { status: 'registered' } });
  });

  test('saving again is idempotent and re-activates a hook the platform deactivated', async () => {
    const secret = fake.hooks[0]!.headers['X-Svc-Webhook-Secret'];
    fake.hooks[0]!.is_active = false;
    const res = await t.request(`/api/v1/admin/stores/${storeId}/credentials`, {
      method: 'PUT',
      headers: { ...bearer(await t.keyWith('admin')), 'content-type': 'application/json' },
      body: JSON.stringify({ credentials: { storeHash: HASH, accessToken: 'tok-b' } }),
    });
    expect(res.status).toBe(200);
    expect(fake.hooks).toHaveLength(3);
    expect(fake.hooks.every((h) => h.is_active && h.headers['X-Svc-Webhook-Secret'] === secret)).toBe(true);
  });

  test('a registration failure is reported on the store and can be retried', async () => {
    fake.outage.api.status = 503;
    const failed = await createStore(t, { platform: 'platform-b', domain: 'third.example.com', currency: 'USD', credentials: { storeHash: HASH.toUpperCase() + 'x', accessToken: 'tok-b' } });
    expect(failed.status).toBe(201);
    expect(failed.store.hooks).toMatchObject({ status: 'failed' });
    expect(failed.store.hooks.error).toBeString();
    const again = await t.request(`/api/v1/admin/stores/${storeId}/hooks`, { method: 'POST', headers: bearer(await t.keyWith('admin')) });
    expect((await again.json()).hooks).toMatchObject({ status: 'failed', error: expect.stringContaining('503') });
    fake.outage.api.status = null;
    const retried = await t.request(`/api/v1/admin/stores/${storeId}/hooks`, { method: 'POST', headers: bearer(await t.keyWith('admin')) });
    expect(retried.status).toBe(200);
    expect((await retried.json()).hooks).toMatchObject({ status: 'registered', error: null });
    expect(fake.hooks).toHaveLength(3);
  });
});

describe('platform B: product scopes through the job queue', () => {
  test('store/product/created is recorded, answered 200, then the product is fetched and synced', async () => {
    const { responses } = await fake.deliver('store/product/created', 501);
    expect(responses[0]!.status).toBe(200);
    expect(await responses[0]!.json()).toEqual({ received: true, outcome: 'queued' });
    expect(fake.calls.productFetches).toBe(0);
    expect((await product('501')).status).toBe(404);
    expect(await t.webhooks.runner.runDueJobs()).toBe(1);
    const { status, body } = await product('501');
    expect(status).toBe(200);
    expect(body).toMatchObject({ productId: '501', title: 'Trail Runner 2', handle: 'trail-runner-2', price: '120', currency: 'GBP', availability: 'in_stock', sku: 'TR2-501', gtin: '012345678905', url: 'https://shop.example.com/trail-runner-2/' });
  });

  test('a product with options: every variant with its options, price, identifiers and variant-level stock', async () => {
    fake.products.set(502, platformBVariantProduct(502));
    await fake.deliver('store/product/created', 502);
    await t.webhooks.runner.runDueJobs();
    const { body } = await product('502');
    expect(body).toMatchObject({ title: 'Alpine Fleece', price: '64', priceMax: '69', options: ['Size', 'Color'], sku: 'FLEECE-502', warnings: [] });
    expect(body.variants.map((v: any) => [v.variantId, v.title, v.options, v.price, v.availability, v.sku, v.gtin, v.mpn])).toEqual([
      ['5020', 'S / Forest', { Size: 'S', Color: 'Forest' }, '64', 'in_stock', 'FLEECE-502-S-FOREST', '5012345678900', 'AF-S-Forest'],
      ['5021', 'M / Forest', { Size: 'M', Color: 'Forest' }, '64', 'out_of_stock', 'FLEECE-502-M-FOREST', '5012345678917', 'AF-M-Forest'],
      ['5022', 'L / Forest', { Size: 'L', Color: 'Forest' }, '69', 'in_stock', 'FLEECE-502-L-FOREST', '5012345678924', 'AF-L-Forest'],
      ['5023', 'M / Slate', { Size: 'M', Color: 'Slate' }, '64', 'in_stock', 'FLEECE-502-M-SLATE', '5012345678931', 'AF-M-Slate'],
    ]);
  });

  test('store/product/updated syncs the product\'s current data', async () => {
    await fake.deliver('store/product/created', 501);
    await t.webhooks.runner.runDueJobs();
    fake.products.set(501, platformBProduct(501, { name: 'Trail Runner 3', dateModified: '2026-01-11T00:00:00+00:00' }));
    await fake.deliver('store/product/updated', 501);
    await t.webhooks.runner.runDueJobs();
    expect((await product('501')).body.title).toBe('Trail Runner 3');
  });

  test('store/product/deleted is answered queued and removes the product once the catalog API answers 404 for it; a queued fetch answered 404 removes it too', async () => {
    await fake.deliver('store/product/created', 501);
    await t.webhooks.runner.runDueJobs();
    fake.products.delete(501);
    const { responses } = await fake.deliver('store/product/deleted', 501);
    expect(await responses[0]!.json()).toEqual({ received: true, outcome: 'queued' });
    expect((await product('501')).status).toBe(200);
    expect(await t.webhooks.runner.runDueJobs()).toBe(1);
    expect((await product('501')).status).toBe(404);
    expect(rows(t, 'webhook_deliveries').find((d) => d.topic === 'store/product/deleted')).toMatchObject({ outcome: 'removed', reason: null });

    fake.products.set(502, platformBProduct(502));
    await fake.deliver('store/product/created', 502);
    await t.webhooks.runner.runDueJobs();
    fake.products.delete(502);
    await fake.deliver('store/product/updated', 502);
    await t.webhooks.runner.runDueJobs();
    expect((await product('502')).status).toBe(404);
  });

  test('a duplicate delivery (same payload hash) is applied once', async () => {
    const payload = fake.event('store/product/updated', 501);
    const first = await fake.send(hookUrl, payload);
    const second = await fake.send(hookUrl, payload);
    expect((await first.json()).outcome).toBe('queued');
    expect((await second.json()).outcome).toBe('duplicate');
    expect(rows(t, 'jobs')).toHaveLength(1);
    // A later event about the same product with the same data hash is not a duplicate.
    const later = await fake.send(hookUrl, { ...payload, created_at: payload.created_at + 60 });
    expect((await later.json()).outcome).toBe('queued');
  });

  test('a failing platform API is retried with exponential backoff (with jitter) until it recovers', async () => {
    fake.outage.catalog.status = 500;
    await fake.deliver('store/product/created', 501);
    await t.webhooks.runner.runDueJobs();
    let [job] = rows(t, 'jobs');
    // 30 s, less up to half of it at random: retries that failed together do not come back together.
    expect(job).toMatchObject({ status: 'queued', attempts: 1 });
    expect(job.run_at).toBeGreaterThanOrEqual(START + 15_000);
    expect(job.run_at).toBeLessThanOrEqual(START + 30_000);
    expect(job.last_error).toContain('500');
    expect(await t.webhooks.runner.runDueJobs()).toBe(0); // not due yet
    clock.advance(30_000);
    await t.webhooks.runner.runDueJobs();
    [job] = rows(t, 'jobs');
    expect(job).toMatchObject({ status: 'queued', attempts: 2 });
    expect(job.run_at).toBeGreaterThanOrEqual(START + 30_000 + 30_000);
    expect(job.run_at).toBeLessThanOrEqual(START + 30_000 + 60_000);
    fake.outage.catalog.status = null;
    clock.advance(60_000);
    await t.webhooks.runner.runDueJobs();
    expect(rows(t, 'jobs')[0]).toMatchObject({ status: 'done', attempts: 3 });
    expect((await product('501')).status).toBe(200);
    expect(fake.calls.productFetches).toBe(3);
  });

  test('the queue survives a restart: a delivery recorded before the crash is fetched after it', async () => {
    await fake.deliver('store/product/created', 501);
    t.close(); // the process dies before the worker ran
    await openApp();
    expect(await t.webhooks.runner.runDueJobs()).toBe(1);
    expect((await product('501')).status).toBe(200);
  });

  test('a job interrupted mid-run is taken again once its lease ends', async () => {
    await fake.deliver('store/product/created', 501);
    expect(t.webhooks.queue.claim()).not.toBeNull(); // started, then the process dies
    t.close();
    await openApp();
    expect(await t.webhooks.runner.runDueJobs()).toBe(0);
    clock.advance(60_000);
    expect(await t.webhooks.runner.runDueJobs()).toBe(1);
    expect((await product('501')).status).toBe(200);
  });

  test('order scopes are recorded as order signals; other scopes are ignored', async () => {
    const order = { ...fake.event('store/order/statusUpdated', 9001), data: { type: 'order', id: 9001, status: { previous_status_id: 1, new_status_id: 11 } } };
    const res = await fake.send(hookUrl, order);
    expect(await res.json()).toEqual({ received: true, outcome: 'recorded' });
    expect(rows(t, 'order_signals')).toMatchObject([{ topic: 'store/order/statusUpdated', order_id: '9001', status: '11' }]);
    const other = await fake.send(hookUrl, fake.event('store/category/updated', 3));
    expect(await other.json()).toEqual({ received: true, outcome: 'ignored_topic' });
  });

  test('a fetch queued before the store became inactive is dropped, not applied', async () => {
    const { responses } = await fake.deliver('store/product/created', 501);
    expect(await responses[0]!.json()).toEqual({ received: true, outcome: 'queued' });
    t.webhooks.stores.deactivate(storeId);
    expect(await t.webhooks.runner.runDueJobs()).toBe(1);
    expect(fake.calls.productFetches).toBe(0);
    expect((await product('501')).status).toBe(404);
    expect(rows(t, 'jobs')[0]).toMatchObject({ status: 'done' });
  });

  test('a delivery for an inactive store gets 200 and is ignored', async () => {
    t.database.sqlite.run("UPDATE stores SET status = 'inactive' WHERE id = ?", [storeId]);
    const { responses } = await fake.deliver('store/product/created', 501);
    expect(await responses[0]!.json()).toEqual({ received: true, outcome: 'ignored_inactive' });
    expect(rows(t, 'jobs')).toHaveLength(0);
  });
});

describe('platform B: an event whose data is not its scope\'s changes nothing', () => {
  const SCOPES = ['store/product/created', 'store/product/updated', 'store/product/deleted', 'store/order/created', 'store/order/statusUpdated'];
  const resourceOf = (scope: string) => scope.split('/')[1];
  /** Everything a delivery could change (the delivery log aside). */
  const everything = () => Object.fromEntries(['products', 'stores', 'store_events', 'order_signals', 'jobs'].map((table) => [table, rows(t, table)]));

  for (const scope of SCOPES) {
    test(`${scope}: the data of every scope of another resource is refused (200, body_not_for_topic), logged with the reason, and changes nothing`, async () => {
      await fake.deliver('store/product/created', 501);
      await t.webhooks.runner.runDueJobs();
      for (const other of SCOPES.filter((s) => resourceOf(s) !== resourceOf(scope))) {
        const before = everything();
        const res = await fake.send(hookUrl, { ...fake.event(other, 501), scope });
        expect({ other, answer: await res.json() }).toEqual({ other, answer: { received: true, outcome: 'refused', reason: 'body_not_for_topic' } });
        expect({ other, state: everything() }).toEqual({ other, state: before });
        expect(rows(t, 'webhook_deliveries').at(-1)).toMatchObject({ topic: scope, outcome: 'refused', reason: 'body_not_for_topic', dedupe_key: null });
      }
    });
  }

  test('store/product/deleted for a product the catalog API still has is refused (product_not_removed) and the product stays', async () => {
    await fake.deliver('store/product/created', 501);
    await t.webhooks.runner.runDueJobs();
    const { responses } = await fake.deliver('store/product/deleted', 501);
    expect(await responses[0]!.json()).toEqual({ received: true, outcome: 'queued' });
    await t.webhooks.runner.runDueJobs();
    expect((await product('501')).status).toBe(200);
    expect(rows(t, 'webhook_deliveries').find((d) => d.topic === 'store/product/deleted')).toMatchObject({ outcome: 'refused', reason: 'product_not_removed' });
  });
});

describe('platform B: errors and tamper suite (nothing is ever applied)', () => {
  test('400 for a missing scope or a product scope without data.id', async () => {
    const { scope: _scope, ...noScope } = fake.event('store/product/updated', 501);
    const a = await fake.send(hookUrl, noScope);
    expect(a.status).toBe(400);
    expect(await a.json()).toMatchObject({ error: 'missing_scope' });
    const b = await fake.send(hookUrl, { ...fake.event('store/product/updated', 501), data: { type: 'product' } });
    expect(b.status).toBe(400);
    expect(await b.json()).toMatchObject({ error: 'missing_product_id' });
    const c = await fetch(hookUrl, { method: 'POST', headers: fake.hooks[0]!.headers, body: '{"scope":' });
    expect(c.status).toBe(400);
    expect(await c.json()).toMatchObject({ error: 'malformed_json' });
    expect(rows(t, 'jobs')).toHaveLength(0);
  });

  const cases: [string, () => Promise<Response>][] = [
    ['a wrong secret', () => fake.send(hookUrl, fake.event('store/product/updated', 501), { 'X-Svc-Webhook-Secret': 'guess' })],
    ['another store\'s secret', () => fake.send(hookUrl, fake.event('store/product/updated', 501), { 'X-Svc-Webhook-Secret': otherSecret() })],
    ['a missing secret header', () => fake.send(hookUrl, fake.event('store/product/updated', 501), { 'X-Svc-Webhook-Secret': null })],
    ['a missing store id header', () => fake.send(hookUrl, fake.event('store/product/updated', 501), { 'X-Svc-Store-Id': null })],
    ['an unknown store id', () => fake.send(hookUrl, fake.event('store/product/updated', 501), { 'X-Svc-Store-Id': 'nope' })],
    ['the right secret with another store\'s id', () => fake.send(hookUrl, fake.event('store/product/updated', 501), { 'X-Svc-Store-Id': otherStoreId })],
    ['the right headers with another store\'s producer', () => fake.send(hookUrl, { ...fake.event('store/product/updated', 501), producer: `stores/${OTHER_HASH}` })],
    ['the secret wrong only in its last characters', () => fake.send(hookUrl, fake.event('store/product/updated', 501), { 'X-Svc-Webhook-Secret': wrongEnding(ownSecret()) })],
    ['a truncated secret', () => fake.send(hookUrl, fake.event('store/product/updated', 501), { 'X-Svc-Webhook-Secret': ownSecret().slice(0, 8) })],
  ];
  for (const [name, send] of cases) {
    test(`401 for ${name}`, async () => {
      const res = await send();
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'unverified_webhook' });
      expect(rows(t, 'jobs')).toHaveLength(0);
      expect(rows(t, 'webhook_deliveries')).toHaveLength(0);
    });
  }

  test('401 for the id and secret of a store of another platform, with a matching producer', async () => {
    for (const [platform, ref] of [['platform-c', 'https://wp.example.com'], ['platform-a', 'acme.myplatform-a.com']] as const) {
      const foreignId = await seedStore(t, platform, ref);
      const foreignSecret = t.webhooks.stores.webhookSecretOf((await t.webhooks.stores.get(foreignId))!) ?? 'none';
      const res = await fake.send(hookUrl, { ...fake.event('store/product/updated', 501), producer: `stores/${ref}` }, { 'X-Svc-Store-Id': foreignId, 'X-Svc-Webhook-Secret': foreignSecret });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'unverified_webhook' });
    }
    expect(rows(t, 'jobs')).toHaveLength(0);
    expect(rows(t, 'webhook_deliveries')).toHaveLength(0);
  });

  test('a replayed delivery is not applied again', async () => {
    const { payload } = await fake.deliver('store/product/created', 501);
    await t.webhooks.runner.runDueJobs();
    const replay = await fake.send(hookUrl, payload);
    expect((await replay.json()).outcome).toBe('duplicate');
    expect(await t.webhooks.runner.runDueJobs()).toBe(0);
    expect(fake.calls.productFetches).toBe(1);
  });
});
