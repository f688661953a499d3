import { afterEach, describe, expect, test } from 'bun:test';
import { UNREGISTER_JOB } from '../src/stores/removal.ts';
import { platformACollection, platformAPage, platformAProduct } from './fakes/payloads.ts';
import { startFakePlatformA, type FakePlatformA } from './fakes/platform-a.ts';
import { startFakePlatformB } from './fakes/platform-b.ts';
import { startFakePlatformC } from './fakes/platform-c.ts';
import { bearer, closeAppAndFakes, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { POSTGRES_MODE } from './helpers/engine.ts';
import { addFaq, enrich } from './helpers/signals.ts';
import { createStore, rows, tablesWithColumn } from './helpers/stores.ts';
import { getStore, runSync } from './helpers/sync.ts';

// Removing a store (DELETE /api/v1/admin/stores/:id) and disconnecting it (?keepData=true), against
// a fake platform A holding two shops: what goes, what stays, what stops working, and what the
// platform is asked.

const ACME = { domain: 'acme.myplatform-a.com', accessToken: 'tok-acme', clientSecret: 'acme-client-secret', currency: 'EUR' };
const OTHER = { domain: 'other.myplatform-a.com', accessToken: 'tok-other', clientSecret: 'other-client-secret', currency: 'USD' };
const ORIGIN = 'https://shop.example.com';

let fake: FakePlatformA;
let t: TestApp;
afterEach(() => closeAppAndFakes(t, [() => fake.stop()]));

const admin = async () => bearer(await t.keyWith('admin'));
const api = async (method: string, path: string, body?: unknown) => {
  const res = await t.request(path, body === undefined ? { method, headers: await admin() } : jsonRequest(method, body, await admin()));
  return { status: res.status, body: (await res.json()) as any };
};
const hookUrl = () => `${t.url}/api/v1/webhooks/platform-a`;
const order = (id: number) => ({ id, order_number: 1000 + id, financial_status: 'paid', line_items: [{ id: id * 10, product_id: 1001, quantity: 1, price: '89.00', title: 'Tote' }] });
const subscriptionsOf = (shop: string) => fake.subscriptions.filter((s) => s.shop === shop).map((s) => s.topic).sort();

/** Two connected shops with a catalogue each (3 products, a collection, a page), and the store fixtures hanging off the first. */
async function setup(options: { unregisterWithinMs?: number; apiTimeoutMs?: number } = {}) {
  const shop = (s: typeof ACME, first: number) => ({
    ...s,
    products: [first, first + 1, first + 2].map((id) => ({ ...platformAProduct(id, { title: `Tote ${id}` }), handle: `tote-${id}` })),
    collections: [platformACollection(first + 50)],
    pages: [platformAPage(first + 60)],
  });
  fake = startFakePlatformA([shop(ACME, 1001), shop(OTHER, 2001)]);
  Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
  t = await makeTestApp({
    listen: true,
    env: { SVC_PLATFORM_A_API_BASE: fake.url },
    webhooks: { unregisterWithinMs: options.unregisterWithinMs, apiTimeoutMs: options.apiTimeoutMs },
  });
  const acme = (await createStore(t, { platform: 'platform-a', domain: ACME.domain, credentials: { clientSecret: ACME.clientSecret, accessToken: ACME.accessToken } })).store.id as string;
  const other = (await createStore(t, { platform: 'platform-a', domain: OTHER.domain, credentials: { clientSecret: OTHER.clientSecret, accessToken: OTHER.accessToken } })).store.id as string;
  for (const id of [acme, other]) expect(await runSync(t, id)).toMatchObject({ state: 'idle' });
  for (const [id, productId] of [[acme, '1001'], [other, '2001']] as const) {
    expect((await enrich(t, id, productId)).status).toBe(200);
    await addFaq(t, { storeId: id, entityType: 'product', entityRef: productId, question: 'Is it waterproof?', answer: 'Yes.', status: 'approved' });
  }
  await addFaq(t, { storeId: acme, entityType: 'category', entityRef: 'summer', question: 'When does it ship?', answer: 'Within two days.' });
  expect((await fake.send(hookUrl(), ACME.domain, 'orders/paid', order(4501))).status).toBe(200);
  expect((await fake.send(hookUrl(), ACME.domain, 'products/update', { ...platformAProduct(1002, { title: 'Tote 1002 v2' }), handle: 'tote-1002', updated_at: '2026-06-01T00:00:00Z' })).status).toBe(200);
  const widget = await api('POST', '/api/v1/admin/keys', { name: 'acme widget', scopes: ['products:read'], storeId: acme, allowedDomains: ['shop.example.com'] });
  expect(widget.status).toBe(201);
  return { acme, other, widgetKey: widget.body.key as string };
}

const faqsWith = (key: string) => t.request('/api/v1/public/faqs?type=product&ref=1001', { headers: { 'X-Api-Key': key, Origin: ORIGIN } });

/** Every table with a store_id column, and how many of its rows name `storeId`; the stores row itself under `stores`. */
async function rowsNaming(storeId: string): Promise<Record<string, number>> {
  const count = async (sql: string) => Number((await t.query(sql, storeId))[0]!.n);
  const counts: Record<string, number> = { stores: await count('SELECT count(*) AS n FROM stores WHERE id = ?') };
  for (const name of await tablesWithColumn(t, 'store_id')) counts[name] = await count(`SELECT count(*) AS n FROM ${name} WHERE store_id = ?`);
  return counts;
}

describe('store removal', () => {
  test('DELETE /api/v1/admin/stores/:id deletes every row that names the store, answers with the counts GET .../data gave, and leaves other stores as they were', async () => {
    const { acme, other } = await setup();
    const before = await api('GET', `/api/v1/admin/stores/${acme}/data`);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ id: acme, counts: { products: 3, enrichments: 1, faqs: 2, categories: 1, pages: 1, deliveries: 2, orderSignals: 1, storeEvents: 0, keys: 1 } });
    const otherBefore = (await api('GET', `/api/v1/admin/stores/${other}/data`)).body;
    const otherRows = await rowsNaming(other);

    const removed = await api('DELETE', `/api/v1/admin/stores/${acme}`);
    expect(removed.status).toBe(200);
    // The disconnect that begins a removal writes two store events: they go too.
    expect(removed.body).toMatchObject({ id: acme, keptData: false, removed: { ...before.body.counts, storeEvents: 2, jobs: 0 }, kept: null, store: null });

    // Every table that has a store_id column, whatever table is added later, and the variants hanging off products.
    const left = await rowsNaming(acme);
    expect(Object.keys(left).length).toBeGreaterThanOrEqual(12);
    expect(Object.entries(left).filter(([, n]) => n > 0)).toEqual([]);
    expect(await t.query('SELECT count(*) AS n FROM product_variants WHERE product_row_id NOT IN (SELECT id FROM products)')).toEqual([{ n: 0 }]);
    expect((await api('GET', `/api/v1/admin/stores/${acme}`)).status).toBe(404);
    expect((await api('GET', `/api/v1/admin/stores/${acme}/data`)).status).toBe(404);
    expect((await api('GET', '/api/v1/admin/stores')).body.items.map((s: any) => s.id)).toEqual([other]);

    expect((await api('GET', `/api/v1/admin/stores/${other}/data`)).body).toEqual(otherBefore);
    expect(await rowsNaming(other)).toEqual(otherRows);
    expect(subscriptionsOf(OTHER.domain)).toHaveLength(4);
  });

  test('the hooks svc registered are deleted at the platform, and the answer says which', async () => {
    const { acme } = await setup();
    expect(subscriptionsOf(ACME.domain)).toEqual(['APP_UNINSTALLED', 'PRODUCTS_CREATE', 'PRODUCTS_DELETE', 'PRODUCTS_UPDATE']);
    // Another app's subscription on the same shop is not svc's to delete.
    fake.subscriptions.push({ id: 'gid://platform-a/WebhookSubscription/999', shop: ACME.domain, topic: 'PRODUCTS_UPDATE', callbackUrl: 'https://other-app.example/hooks' });
    const { body } = await api('DELETE', `/api/v1/admin/stores/${acme}`);
    expect(body.hooks).toEqual({
      outcome: 'unregistered',
      removed: ['products/create', 'products/update', 'products/delete', 'app/uninstalled'],
      left: [],
      error: null,
      deliveryUrl: hookUrl(),
      detail: 'svc deleted its webhooks at the platform',
    });
    expect(fake.subscriptions.filter((s) => s.shop === ACME.domain).map((s) => s.callbackUrl)).toEqual(['https://other-app.example/hooks']);
    expect(subscriptionsOf(OTHER.domain)).toHaveLength(4);
  });

  test('a platform that does not answer does not hold the removal up: the data is gone and the hooks that may be left are reported', async () => {
    const { acme } = await setup({ unregisterWithinMs: 300 });
    let asked = 0;
    fake.hooks.beforeQuery = ({ query }) => {
      if (!query.includes('webhookSubscriptions')) return;
      asked++;
      return new Promise<Response>(() => {}); // never answers
    };
    const { status, body } = await api('DELETE', `/api/v1/admin/stores/${acme}`);
    expect(status).toBe(200);
    expect(asked).toBe(1);
    expect(body.hooks).toMatchObject({ outcome: 'failed', removed: [], left: ['products/create', 'products/update', 'products/delete', 'app/uninstalled'], deliveryUrl: hookUrl() });
    expect(body.hooks.error).toContain('300 ms');
    expect(body.hooks.detail).toContain(`remove those that deliver to ${hookUrl()}`);
    expect(body.removed.products).toBe(3);
    expect(Object.values(await rowsNaming(acme)).every((n) => n === 0)).toBe(true);
  });

  test('a platform that refuses the deletion: the removal goes on and names the call that failed', async () => {
    const { acme } = await setup();
    fake.outage.status = 503;
    const { status, body } = await api('DELETE', `/api/v1/admin/stores/${acme}`);
    expect(status).toBe(200);
    expect(body.hooks).toMatchObject({ outcome: 'failed', left: ['products/create', 'products/update', 'products/delete', 'app/uninstalled'] });
    expect(body.hooks.error).toBe('POST /admin/api/2025-01/graphql.json answered 503');
    expect((await rowsNaming(acme)).stores).toBe(0);
  });

  test('a widget key bound to a removed store stops working at once, its cached answer included', async () => {
    const { acme, other, widgetKey } = await setup();
    const otherKey = (await api('POST', '/api/v1/admin/keys', { scopes: ['products:read'], storeId: other, allowedDomains: ['shop.example.com'] })).body.key;
    expect((await faqsWith(widgetKey)).status).toBe(200);
    expect((await faqsWith(widgetKey)).status).toBe(200); // now from the cache
    await api('DELETE', `/api/v1/admin/stores/${acme}`);
    const refused = await faqsWith(widgetKey);
    expect(refused.status).toBe(403);
    expect((await refused.json()).error).toBe('invalid_api_key');
    expect((await rows(t, 'api_keys')).filter((k) => k.store_id === acme)).toEqual([]);
    expect((await faqsWith(otherKey)).status).toBe(200);
  });

  test('the signals of a removed store are not served from the cache', async () => {
    const { acme } = await setup();
    const signal = () => t.request(`/api/v1/platform-a/stores/${acme}/products/1001.jsonld`);
    expect((await signal()).status).toBe(200);
    expect((await signal()).status).toBe(200); // cached
    await api('DELETE', `/api/v1/admin/stores/${acme}`);
    expect((await signal()).status).toBe(404);
    expect((await t.request('/api/v1/platform-a/products/1001.jsonld')).status).toBe(404);
  });

  test('deliveries for a removed store are refused (401, as for a store svc never had) and write nothing', async () => {
    const { acme } = await setup();
    await api('DELETE', `/api/v1/admin/stores/${acme}`);
    const res = await fake.send(hookUrl(), ACME.domain, 'products/update', { ...platformAProduct(1009), handle: 'tote-1009' });
    expect(res.status).toBe(401);
    expect(Object.values(await rowsNaming(acme)).every((n) => n === 0)).toBe(true);
  });

  test('a delivery verified before the removal and not yet committed is refused, never written for a store that is gone', async () => {
    const { acme } = await setup();
    const store = (await t.webhooks.stores.get(acme))!;
    const pending = t.webhooks.dispatch({ store, topic: 'orders/paid', dedupeKey: 'event:late', event: () => ({ kind: 'order', orderId: '4599', status: 'paid' }) });
    const removal = t.webhooks.storeAdmin.remove(acme, false);
    const answer = await pending.catch((error: { status: number; code: string }) => ({ status: error.status, code: error.code }));
    await removal;
    // On SQLite the removal stops the store within the call, before the delivery's group commits: it
    // is refused. On PostgreSQL the stop is a round trip, and a group already committing commits
    // first: the delivery was recorded while the store existed, and the removal deletes it with the rest.
    expect(answer).toEqual(POSTGRES_MODE && 'outcome' in answer ? { outcome: 'recorded' } : { status: 401, code: 'unverified_webhook' });
    expect(Object.values(await rowsNaming(acme)).every((n) => n === 0)).toBe(true);
  });

  test('its jobs stop: a sync step in flight is aborted, queued jobs are dropped, none is left', async () => {
    // The call in flight would not time out during the test: only the removal can end it.
    const { acme, other } = await setup({ apiTimeoutMs: 120_000 });
    let release = () => {};
    let reached = false;
    fake.hooks.beforeProductsPage = ({ shop }) => {
      if (shop !== ACME.domain) return;
      reached = true;
      return new Promise<Response>((resolve) => (release = () => resolve(new Response('{}', { status: 500 }))));
    };
    await api('POST', `/api/v1/admin/stores/${acme}/sync`);
    const drained = t.webhooks.runner.runDueJobs();
    while (!reached) await Bun.sleep(5);
    const { body } = await api('DELETE', `/api/v1/admin/stores/${acme}`);
    // products (in flight, stopped), categories and pages (queued): all dropped.
    expect(body.removed.jobs).toBe(3);
    // The runner is free again while the platform still holds the page: the step in flight was stopped.
    await drained;
    release();
    expect((await rows(t, 'jobs')).filter((job) => job.store_id === acme)).toEqual([]);
    expect(t.logLines().filter((line) => line.msg === 'job failed' && String(line.error).includes('removed'))).toEqual([]);
    expect((await t.webhooks.sync.view(other)).state).toBe('idle');
  });

  test('400 for a keepData that is not true or false, 404 for an unknown store: nothing changes', async () => {
    const { acme } = await setup();
    const rowsBefore = await rowsNaming(acme);
    for (const query of ['?keepData=yes', '?keepData=1', '?keep=true']) {
      const res = await api('DELETE', `/api/v1/admin/stores/${acme}${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_query');
    }
    expect((await api('DELETE', '/api/v1/admin/stores/st_unknown')).status).toBe(404);
    expect(await rowsNaming(acme)).toEqual(rowsBefore);
    expect((await getStore(t, acme)).status).toBe('active');
  });

  test('while a store is being removed, a second removal, new credentials, Sync now and a pause are 409', async () => {
    const { acme } = await setup({ unregisterWithinMs: 5_000 });
    const held: { answer?: (response: Response) => void } = {};
    fake.hooks.beforeQuery = ({ query }) => (query.includes('webhookSubscriptions') ? new Promise<Response>((resolve) => (held.answer = resolve)) : undefined);
    const removal = api('DELETE', `/api/v1/admin/stores/${acme}`);
    while (!held.answer) await Bun.sleep(5);
    const attempts = [
      await api('DELETE', `/api/v1/admin/stores/${acme}?keepData=true`),
      await api('PUT', `/api/v1/admin/stores/${acme}/credentials`, { credentials: { clientSecret: ACME.clientSecret, accessToken: ACME.accessToken } }),
      await api('POST', `/api/v1/admin/stores/${acme}/sync`),
      await api('POST', `/api/v1/admin/stores/${acme}/sync/pause`),
    ];
    for (const attempt of attempts) expect([attempt.status, attempt.body.error]).toEqual([409, 'store_being_removed']);
    held.answer(Response.json({ data: { webhookSubscriptions: { edges: [] } } }));
    expect((await removal).body.hooks.outcome).toBe('unregistered');
    expect((await rowsNaming(acme)).stores).toBe(0);
  });
});

describe('store disconnect (?keepData=true)', () => {
  test('no hooks, no sync, signals and widget answers withdrawn, deliveries ignored; the data is kept and reported', async () => {
    const { acme, widgetKey } = await setup();
    const before = (await api('GET', `/api/v1/admin/stores/${acme}/data`)).body.counts;
    const { status, body } = await api('DELETE', `/api/v1/admin/stores/${acme}?keepData=true`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: acme, keptData: true, removed: { products: 0, faqs: 0, keys: 0, jobs: 0 }, kept: { ...before, storeEvents: 2 }, hooks: { outcome: 'unregistered' } });
    expect(body.store).toMatchObject({ id: acme, status: 'inactive', disconnectedAt: expect.any(String), signalsWithdrawnAt: expect.any(String), hooks: { status: 'unregistered', topics: [], error: null } });
    expect(body.store.sync.nextScheduledAt).toBeNull();
    expect(subscriptionsOf(ACME.domain)).toEqual([]);

    // Signals and the widget's FAQs: withdrawn (410), the key itself kept.
    expect((await t.request(`/api/v1/platform-a/stores/${acme}/products/1001.jsonld`)).status).toBe(410);
    expect((await faqsWith(widgetKey)).status).toBe(410);
    // No pass: neither the schedule nor Sync now starts one for an inactive store.
    expect(await t.webhooks.sync.reconcileDue(0)).toBe(1); // the other store only
    await api('POST', `/api/v1/admin/stores/${acme}/sync`);
    expect((await rows(t, 'jobs')).filter((job) => job.store_id === acme && job.status === 'queued')).toEqual([]);
    // A delivery still on its way is acknowledged and ignored.
    const late = await fake.send(hookUrl(), ACME.domain, 'products/update', { ...platformAProduct(1009), handle: 'tote-1009' });
    expect(await late.json()).toEqual({ received: true, outcome: 'ignored_inactive' });
    expect((await api('GET', `/api/v1/admin/stores/${acme}/data`)).body.counts).toMatchObject({ products: 3, faqs: 2, enrichments: 1, keys: 1 });
  });

  test('a disconnected store reconnects with PUT .../credentials: hooks registered again, its data still there', async () => {
    const { acme, widgetKey } = await setup();
    await api('DELETE', `/api/v1/admin/stores/${acme}?keepData=true`);
    const reconnected = await api('PUT', `/api/v1/admin/stores/${acme}/credentials`, { credentials: { clientSecret: ACME.clientSecret, accessToken: ACME.accessToken } });
    expect(reconnected.status).toBe(200);
    expect(reconnected.body).toMatchObject({ status: 'active', disconnectedAt: null, signalsWithdrawnAt: null, hooks: { status: 'registered' } });
    expect(subscriptionsOf(ACME.domain)).toHaveLength(4);
    expect((await faqsWith(widgetKey)).status).toBe(200);
    expect((await t.request(`/api/v1/platform-a/stores/${acme}/products/1001.jsonld`)).status).toBe(200);
  });

  test('hooks the platform would not delete stay on the disconnected store as unregister_failed, and its removal asks again', async () => {
    const { acme } = await setup();
    fake.outage.status = 503;
    const { body } = await api('DELETE', `/api/v1/admin/stores/${acme}?keepData=true`);
    expect(body.hooks.outcome).toBe('failed');
    expect(body.store.hooks).toMatchObject({ status: 'unregister_failed', topics: ['products/create', 'products/update', 'products/delete', 'app/uninstalled'], error: 'POST /admin/api/2025-01/graphql.json answered 503' });
    fake.outage.status = null;
    const removed = await api('DELETE', `/api/v1/admin/stores/${acme}`);
    expect(removed.body.hooks).toMatchObject({ outcome: 'unregistered', removed: ['products/create', 'products/update', 'products/delete', 'app/uninstalled'] });
    expect(subscriptionsOf(ACME.domain)).toEqual([]);
  });

  test('an unregistration a restart interrupted is finished by the next start, for a store still disconnected only', async () => {
    const { acme, other } = await setup();
    // As a crash after the first transaction leaves them: acme disconnected, both unregistration jobs still there.
    await t.webhooks.stores.disconnect(acme);
    for (const id of [acme, other]) await t.webhooks.queue.enqueue(UNREGISTER_JOB, id, {});
    await t.webhooks.runner.runDueJobs();
    expect(subscriptionsOf(ACME.domain)).toEqual([]);
    expect((await getStore(t, acme)).hooks).toMatchObject({ status: 'unregistered', topics: [] });
    // A store that is active again (reconnected meanwhile) keeps its hooks.
    expect(subscriptionsOf(OTHER.domain)).toHaveLength(4);
    expect((await getStore(t, other)).hooks.status).toBe('registered');
  });

  test('a delivery verified before the disconnect and not yet committed is ignored as for any inactive store', async () => {
    const { acme } = await setup();
    const store = (await t.webhooks.stores.get(acme))!;
    const pending = t.webhooks.dispatch({ store, topic: 'orders/paid', dedupeKey: 'event:late', event: () => ({ kind: 'order', orderId: '4599', status: 'paid' }) });
    const disconnect = t.webhooks.storeAdmin.remove(acme, true);
    const answer = await pending;
    await disconnect;
    // As for a removal (above): on PostgreSQL a group already committing may commit first, while the
    // store was active; its order is then kept with the disconnected store's data, as any earlier one.
    const kept = (await rows(t, 'order_signals')).filter((row) => row.order_id === '4599').length;
    expect({ answer, kept }).toEqual(POSTGRES_MODE && answer.outcome === 'recorded' ? { answer: { outcome: 'recorded' }, kept: 1 } : { answer: { outcome: 'ignored_inactive' }, kept: 0 });
  });
});

describe('store removal on platforms B and C', () => {
  test('platform B: svc deletes its own hooks of the store (another destination’s stay), then the store', async () => {
    const b = startFakePlatformB({ storeHash: 'hash1', accessToken: 'tok-b', currency: 'GBP' });
    fake = startFakePlatformA([]);
    t = await makeTestApp({ listen: true, env: { SVC_PLATFORM_B_API_BASE: b.url } });
    try {
      const store = (await createStore(t, { platform: 'platform-b', domain: 'shop.example.com', credentials: { storeHash: 'hash1', accessToken: 'tok-b' } })).store;
      expect(b.hooks.map((h) => h.scope).sort()).toEqual(['store/product/created', 'store/product/deleted', 'store/product/updated']);
      b.hooks.push({ id: 900, scope: 'store/product/updated', destination: 'https://other-app.example/hooks', headers: {}, is_active: true });
      const { status, body } = await api('DELETE', `/api/v1/admin/stores/${store.id}`);
      expect(status).toBe(200);
      expect(body.hooks).toMatchObject({ outcome: 'unregistered', removed: ['store/product/created', 'store/product/updated', 'store/product/deleted'], left: [] });
      expect(b.hooks.map((h) => h.destination)).toEqual(['https://other-app.example/hooks']);
      expect(Object.values(await rowsNaming(store.id)).every((n) => n === 0)).toBe(true);
    } finally {
      b.stop();
    }
  });

  test('platform C: svc deletes the hooks that deliver to this store’s URL (with force=true; another store’s stay), then the store', async () => {
    const c = startFakePlatformC({ consumerKey: 'ck_1', consumerSecret: 'cs_1', currency: 'SEK' });
    fake = startFakePlatformA([]);
    t = await makeTestApp({ listen: true });
    try {
      const store = (await createStore(t, { platform: 'platform-c', domain: 'coffee.example.com', credentials: { siteUrl: c.siteUrl, consumerKey: 'ck_1', consumerSecret: 'cs_1' } })).store;
      expect(c.hooks.map((h) => h.topic)).toEqual(['product.created', 'product.updated', 'product.deleted']);
      const elsewhere = `${t.url}/api/v1/platform-c/webhooks?store=another`;
      c.hooks.push({ id: 900, name: 'another', topic: 'product.updated', delivery_url: elsewhere, secret: 's', status: 'active', pingStatus: null });
      const { body } = await api('DELETE', `/api/v1/admin/stores/${store.id}?keepData=true`);
      expect(body.hooks).toMatchObject({ outcome: 'unregistered', removed: ['product.created', 'product.updated', 'product.deleted'], left: [], deliveryUrl: store.webhookUrl });
      expect(c.hooks.map((h) => h.delivery_url)).toEqual([elsewhere]);
      expect(body.store).toMatchObject({ status: 'inactive', hooks: { status: 'unregistered' } });
    } finally {
      c.stop();
    }
  });
});
