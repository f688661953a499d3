import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { startFakePlatformC, type FakePlatformC } from './fakes/platform-c.ts';
import { platformCProduct, platformCVariableProduct } from './fakes/payloads.ts';
import { bearer, makeTestApp, type TestApp } from './helpers/app.ts';
import { fixedClock } from '../src/lib/clock.ts';
import { PING_GRACE_MS } from '../src/stores/registry.ts';
import { createHmac } from 'node:crypto';
import { seedStore } from './helpers/signals.ts';
import { settleInitialSyncs } from './helpers/sync.ts';
import { createStore, flipByte, getProduct, rows, wrongEnding } from './helpers/stores.ts';

let fake: FakePlatformC;
let other: FakePlatformC;
let t: TestApp;
let store: any;
let otherStore: any;

beforeEach(async () => {
  fake = startFakePlatformC({ consumerKey: 'ck_1', consumerSecret: 'cs_1', currency: 'SEK' });
  other = startFakePlatformC({ consumerKey: 'ck_2', consumerSecret: 'cs_2', currency: 'USD' });
  t = await makeTestApp({ listen: true });
  const created = await createStore(t, { platform: 'platform-c', domain: 'coffee.example.com', credentials: { siteUrl: fake.siteUrl, consumerKey: 'ck_1', consumerSecret: 'cs_1' } });
  expect(created.status).toBe(201);
  store = created.store;
  otherStore = (await createStore(t, { platform: 'platform-c', domain: 'other.example.com', credentials: { siteUrl: other.siteUrl, consumerKey: 'ck_2', consumerSecret: 'cs_2' } })).store;
  await settleInitialSyncs(t);
});

afterEach(() => {
  t.close();
  fake.stop();
  other.stop();
});

const product = (id: string) => getProduct(t, store.id, id);
const hookUrl = () => `${t.url}/api/v1/platform-c/webhooks?store=${store.id}`;
const secret = () => fake.hooks[0]!.secret;
const signatureOf = (key: string, body: string) => createHmac('sha256', key).update(body).digest('base64');
const payload = (id = 77, overrides: Parameters<typeof platformCProduct>[2] = {}) => platformCProduct(id, fake.siteUrl, overrides);

describe('platform C: hook registration and the creation ping', () => {
  test('saving credentials registers the three product topics with the per-store secret and store URL', () => {
    expect(fake.hooks.map((h) => h.topic).sort()).toEqual(['product.created', 'product.deleted', 'product.updated']);
    for (const hook of fake.hooks) {
      expect(hook.delivery_url).toBe(hookUrl());
      expect(hook.secret.length).toBeGreaterThanOrEqual(43);
      expect(hook.secret).toBe(secret());
    }
    expect(other.hooks[0]!.secret).not.toBe(secret());
    expect(store).toMatchObject({ currency: 'SEK', hooks: { status: 'registered' } });
  });

  test('the creation ping is answered 200 and marks the store\'s hooks active without being an event', async () => {
    expect(fake.hooks.map((h) => h.pingStatus)).toEqual([200, 200, 200]);
    const res = await t.request(`/api/v1/admin/stores/${store.id}`, { headers: bearer(await t.keyWith('admin')) });
    expect((await res.json()).hooks.confirmedAt).toBeString();
    expect(rows(t, 'webhook_deliveries')).toHaveLength(0);
  });

  test('a ping for an unknown store is 401; a ping without the store parameter is 400', async () => {
    const unknown = await fetch(`${t.url}/api/v1/platform-c/webhooks?store=nope`, { method: 'POST', body: 'webhook_id=3' });
    expect(unknown.status).toBe(401);
    const missing = await fetch(`${t.url}/api/v1/platform-c/webhooks`, { method: 'POST', body: 'webhook_id=3' });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'missing_store' });
  });

  test('a ping confirms only a store whose hooks svc is registering or just registered; any other gets the unknown store\'s 401', async () => {
    const clock = fixedClock(Date.now());
    const app = await makeTestApp({ listen: true, clock });
    const platform = startFakePlatformC({ consumerKey: 'ck_3', consumerSecret: 'cs_3', currency: 'EUR' });
    try {
      const created = await createStore(app, { platform: 'platform-c', domain: 'tea.example.com', credentials: { siteUrl: platform.siteUrl, consumerKey: 'ck_3', consumerSecret: 'cs_3' } });
      expect(platform.hooks.map((h) => h.pingStatus)).toEqual([200, 200, 200]); // pinged while svc registered them
      const id: string = created.store.id;
      const ping = async (storeId: string) => {
        const res = await fetch(`${app.url}/api/v1/platform-c/webhooks?store=${storeId}`, { method: 'POST', body: 'webhook_id=9' });
        return { status: res.status, body: await res.json() };
      };
      const confirmedAt = async () => (await app.webhooks.stores.get(id))!.hooksConfirmedAt;

      clock.advance(PING_GRACE_MS - 1);
      expect((await ping(id)).status).toBe(200); // a late ping within the grace still counts

      app.database.sqlite.run('UPDATE stores SET hooks_confirmed_at = NULL');
      clock.advance(1);
      const unknown = await ping('no-such-store');
      expect(unknown).toEqual({ status: 401, body: { error: 'unverified_webhook', detail: expect.any(String) } });
      expect(await ping(id)).toEqual(unknown);
      const seeded = await seedStore(app, 'platform-c', 'https://seeded.example.com'); // never registered by svc
      expect(await ping(seeded)).toEqual(unknown);
      expect(await confirmedAt()).toBeNull();
      expect((await app.webhooks.stores.get(seeded))!.hooksConfirmedAt).toBeNull();

      // Registering again (the hooks exist: updated, not pinged) opens a new window.
      expect((await app.request(`/api/v1/admin/stores/${id}/hooks`, { method: 'POST', headers: bearer(await app.keyWith('admin')) })).status).toBe(200);
      expect((await ping(id)).status).toBe(200);
      expect(await confirmedAt()).toBe(clock.now());

      // A system clock set back (NTP, a restored VM) closes the window rather than stretching it by the step.
      app.database.sqlite.run('UPDATE stores SET hooks_confirmed_at = NULL');
      expect((await app.request(`/api/v1/admin/stores/${id}/hooks`, { method: 'POST', headers: bearer(await app.keyWith('admin')) })).status).toBe(200);
      clock.advance(-3_600_000);
      expect(await ping(id)).toEqual(unknown);
      expect(await confirmedAt()).toBeNull();
    } finally {
      app.close();
      platform.stop();
    }
  });

  test('saving credentials again creates no duplicate hooks and keeps the secret', async () => {
    const before = secret();
    fake.hooks[1]!.status = 'disabled';
    const res = await t.request(`/api/v1/admin/stores/${store.id}/credentials`, {
      method: 'PUT',
      headers: { ...bearer(await t.keyWith('admin')), 'content-type': 'application/json' },
      body: JSON.stringify({ credentials: { siteUrl: fake.siteUrl, consumerKey: 'ck_1', consumerSecret: 'cs_1' } }),
    });
    expect(res.status).toBe(200);
    expect(fake.hooks).toHaveLength(3);
    expect(fake.hooks.every((h) => h.status === 'active' && h.secret === before)).toBe(true);
  });

  test('wrong consumer keys: registration fails, is reported, and the store is still saved', async () => {
    const third = startFakePlatformC({ consumerKey: 'ck_3', consumerSecret: 'cs_3', currency: 'USD' });
    try {
      const created = await createStore(t, { platform: 'platform-c', domain: 'third.example.com', currency: 'USD', credentials: { siteUrl: third.siteUrl, consumerKey: 'ck_3', consumerSecret: 'wrong' } });
      expect(created.status).toBe(201);
      expect(created.store.hooks).toMatchObject({ status: 'failed', error: expect.stringContaining('401') });
      expect(third.hooks).toHaveLength(0);
    } finally {
      third.stop();
    }
  });
});

describe('platform C: product topics', () => {
  test('product.created syncs the product', async () => {
    const [res] = await fake.deliver('product.created', payload());
    expect(await res!.json()).toEqual({ received: true, outcome: 'applied' });
    expect((await product('77')).body).toMatchObject({
      productId: '77',
      title: 'Ceramic Pour-Over Set',
      handle: 'ceramic-pour-over-set',
      price: '64.00',
      currency: 'SEK',
      availability: 'in_stock',
      sku: 'POUR-77',
      barcode: '0799439112766',
      gtin: '0799439112766',
      options: [],
      variants: [],
      url: `${fake.siteUrl}/product/ceramic-pour-over-set/`,
      updatedAt: '2026-01-10T12:00:00.000Z',
    });
  });

  test('product.updated syncs the changes; an older payload arriving later is ignored', async () => {
    await fake.deliver('product.created', payload());
    await fake.deliver('product.updated', payload(77, { name: 'Newer', modifiedGmt: '2026-01-12T00:00:00' }));
    const [late] = await fake.deliver('product.updated', payload(77, { name: 'Older', modifiedGmt: '2026-01-11T00:00:00' }));
    expect((await late!.json()).outcome).toBe('stale');
    expect((await product('77')).body.title).toBe('Newer');
  });

  test('product.deleted is answered queued and removes the product once the site no longer has it (404)', async () => {
    await fake.deliver('product.created', payload());
    const [res] = await fake.deliver('product.deleted', { id: 77 });
    expect(await res!.json()).toEqual({ received: true, outcome: 'queued' });
    expect((await product('77')).status).toBe(200);
    expect(await t.webhooks.runner.runDueJobs()).toBe(1);
    expect((await product('77')).status).toBe(404);
    expect(rows(t, 'webhook_deliveries').find((d) => d.topic === 'product.deleted')).toMatchObject({ outcome: 'removed', reason: null });
    // The delete carries no time and the site's 404 gives none: ordered right after the data svc held, never dated at receipt.
    expect(rows(t, 'products').find((p) => p.product_id === '77')).toMatchObject({ removed_at: Date.parse('2026-01-10T12:00:00Z') });
  });

  test('a duplicate delivery (same product id and date_modified_gmt) is applied once', async () => {
    await fake.send(hookUrl(), 'product.updated', payload(), secret());
    const again = await fake.send(hookUrl(), 'product.updated', payload(), secret());
    expect((await again.json()).outcome).toBe('duplicate');
    expect(rows(t, 'webhook_deliveries')).toHaveLength(1);
  });

  test('an unhandled topic gets 200 and is ignored; an inactive store too', async () => {
    const res = await fake.send(hookUrl(), 'order.created', { id: 5 }, secret());
    expect(await res.json()).toEqual({ received: true, outcome: 'ignored_topic' });
    t.database.sqlite.run("UPDATE stores SET status = 'inactive' WHERE id = ?", [store.id]);
    const [inactive] = await fake.deliver('product.created', payload());
    expect(await inactive!.json()).toEqual({ received: true, outcome: 'ignored_inactive' });
    expect((await product('77')).status).toBe(404);
  });

  test('400 for a missing topic header, a missing product id or malformed JSON', async () => {
    const noTopic = await fake.send(hookUrl(), 'product.updated', payload(), secret(), { headers: { 'x-platform-c-webhook-topic': null } });
    expect(noTopic.status).toBe(400);
    const noId = await fake.send(hookUrl(), 'product.updated', { ...payload(), id: undefined }, secret());
    expect(noId.status).toBe(400);
    expect(await noId.json()).toMatchObject({ error: 'missing_product_id' });
    const notJson = await fake.send(hookUrl(), 'product.updated', null, secret(), { body: '{"id":' });
    expect(notJson.status).toBe(400);
  });
});

/** Everything a delivery could change (the delivery log aside). */
const everything = () => Object.fromEntries(['products', 'product_variants', 'stores', 'store_events', 'jobs'].map((table) => [table, rows(t, table)]));

describe('platform C: a signed body under a topic it was not made for changes nothing (the topic header is not signed)', () => {
  /** One genuine body of each topic the site sends, for product 77 (an order's too, which svc does not take). */
  const genuine: Record<string, () => unknown> = {
    'product.created': () => payload(),
    'product.updated': () => payload(77, { name: 'Renamed', modifiedGmt: '2026-01-11T00:00:00' }),
    'product.deleted': () => ({ id: 77 }),
    'order.created': () => ({ id: 77, parent_id: 0, status: 'processing', currency: 'SEK', date_modified_gmt: '2026-01-11T00:00:00', total: '64.00', line_items: [{ id: 1, product_id: 77, quantity: 1 }] }),
  };
  const sameResource = (a: string, b: string) => [a, b].every((topic) => topic === 'product.created' || topic === 'product.updated');

  for (const topic of ['product.created', 'product.updated', 'product.deleted']) {
    test(`${topic}: the signed body of every other topic is refused (200, body_not_for_topic), logged with the reason, and changes nothing`, async () => {
      fake.products.set(77, payload());
      await fake.deliver('product.created', payload());
      for (const [bodyTopic, body] of Object.entries(genuine)) {
        if (bodyTopic === topic || sameResource(topic, bodyTopic)) continue;
        const before = everything();
        const res = await fake.send(hookUrl(), topic, body(), secret());
        expect({ bodyTopic, answer: await res.json() }).toEqual({ bodyTopic, answer: { received: true, outcome: 'refused', reason: 'body_not_for_topic' } });
        expect({ bodyTopic, state: everything() }).toEqual({ bodyTopic, state: before });
        expect(rows(t, 'webhook_deliveries').at(-1)).toMatchObject({ topic, outcome: 'refused', reason: 'body_not_for_topic', dedupe_key: null });
      }
      expect((await product('77')).body.title).toBe('Ceramic Pour-Over Set');
    });
  }
});

describe('platform C: a delete is applied only when the site confirms the product is gone, dated by the site', () => {
  test('a delete of a product the site still has (a product.updated body replayed as a delete is refused by its shape; a delete body by the site) is refused: product_not_removed', async () => {
    fake.products.set(77, payload());
    await fake.deliver('product.created', payload());
    const res = await fake.send(hookUrl(), 'product.deleted', { id: 77 }, secret());
    expect(await res.json()).toEqual({ received: true, outcome: 'queued' });
    await t.webhooks.runner.runDueJobs();
    expect((await product('77')).status).toBe(200);
    expect(rows(t, 'webhook_deliveries').find((d) => d.topic === 'product.deleted')).toMatchObject({ outcome: 'refused', reason: 'product_not_removed', dedupe_key: null });
  });

  test('a product moved to the trash (the API still answers for it) is removed, dated by the site\'s time of trashing, never by receipt: a later genuine update brings it back', async () => {
    fake.products.set(77, payload());
    await fake.deliver('product.created', payload());
    fake.trash(77, new Date('2026-01-12T00:00:00Z'));
    // Delivered late (the site queues deliveries): long after the trashing, and after the update below was made.
    await fake.deliver('product.deleted', { id: 77 });
    await t.webhooks.runner.runDueJobs();
    expect((await product('77')).status).toBe(404);
    expect(rows(t, 'products').find((p) => p.product_id === '77')).toMatchObject({ removed_at: Date.parse('2026-01-12T00:00:00Z') });
    // Restored and edited on 13 January (before this delete was received): applied, not refused as stale.
    const restored = payload(77, { name: 'Restored', modifiedGmt: '2026-01-13T00:00:00' });
    fake.products.set(77, restored);
    const [res] = await fake.deliver('product.updated', restored);
    expect((await res!.json()).outcome).toBe('applied');
    expect((await product('77')).body.title).toBe('Restored');
  });

  test('a queued fetch of a product in the trash removes it instead of syncing it', async () => {
    const { product: data, variations } = platformCVariableProduct(88, fake.siteUrl);
    fake.products.set(88, data);
    fake.variations.set(88, variations);
    await fake.deliver('product.updated', data);
    fake.trash(88, new Date('2026-01-12T00:00:00Z'));
    await t.webhooks.runner.runDueJobs();
    expect((await product('88')).status).toBe(404);
    expect(rows(t, 'products').find((p) => p.product_id === '88')).toMatchObject({ removed_at: Date.parse('2026-01-12T00:00:00Z') });
  });

  test('deletes carry a dedupe key: the same delete again while its confirmation is pending is a duplicate; once refused, the key is free again', async () => {
    fake.products.set(77, payload());
    await fake.deliver('product.created', payload());
    const send = async () => (await (await fake.send(hookUrl(), 'product.deleted', { id: 77 }, secret())).json()).outcome;
    expect(await send()).toBe('queued');
    expect(await send()).toBe('duplicate');
    await t.webhooks.runner.runDueJobs();
    expect(fake.calls.productFetches).toBe(1);
    // Refused (the site has the product): the next delete of it is a delivery of its own, so a
    // replayed delete can never stand in for the genuine one that comes later.
    fake.trash(77, new Date('2026-01-12T00:00:00Z'));
    expect(await send()).toBe('queued');
    await t.webhooks.runner.runDueJobs();
    expect((await product('77')).status).toBe(404);
    expect(await send()).toBe('duplicate');
  });

  test('a delete that arrives while the site is being asked about an earlier one is not lost: the site is asked again', async () => {
    fake.products.set(77, payload());
    await fake.deliver('product.created', payload());
    await fake.send(hookUrl(), 'product.deleted', { id: 77 }, secret()); // replayed: the site still has the product
    let asked = 0;
    fake.pageHooks.beforeProductFetch = async (id) => {
      if (id !== 77 || asked++ > 0) return;
      const live = Response.json(fake.products.get(77)); // the site answers as of before the trashing
      fake.trash(77, new Date('2026-01-12T00:00:00Z'));
      expect(await (await fake.send(hookUrl(), 'product.deleted', { id: 77 }, secret())).json()).toMatchObject({ outcome: 'duplicate' });
      return live;
    };
    await t.webhooks.runner.runDueJobs();
    expect(asked).toBe(2);
    expect((await product('77')).status).toBe(404);
  });
});

describe('platform C: variable products and their variations', () => {
  /** The site's products API holds the product and its variations; the webhook payload names the variations only by id. */
  function variable(id: number, modifiedGmt?: string) {
    const { product: data, variations } = platformCVariableProduct(id, fake.siteUrl, { modifiedGmt });
    fake.products.set(id, data);
    fake.variations.set(id, variations);
    return { data, variations };
  }

  test('a variable product is queued, then read with every variation from the products API', async () => {
    const { data } = variable(88);
    const [res] = await fake.deliver('product.updated', data);
    expect(await res!.json()).toEqual({ received: true, outcome: 'queued' });
    expect((await product('88')).status).toBe(404);
    expect(await t.webhooks.runner.runDueJobs()).toBe(1);
    expect(fake.calls).toMatchObject({ productFetches: 1, variationPages: 1 });
    const { body } = await product('88');
    expect(body).toMatchObject({ title: 'Kitchen Apron', price: '36.00', priceMax: '42.00', availability: 'in_stock', options: ['Material', 'Pattern'], warnings: [] });
    expect(body.variants).toEqual([
      {
        variantId: '881', title: 'Linen / Stripe', sku: 'APRON-88-LINEN-STRIPE', barcode: '0012345678905', gtin: '0012345678905', mpn: null, price: '42.00', compareAtPrice: null, availability: 'in_stock',
        options: { Material: 'Linen', Pattern: 'Stripe' }, image: `${fake.siteUrl}/wp-content/uploads/apron-linen.jpg`, url: `${fake.siteUrl}/product/kitchen-apron/?attribute_pa_material=linen&attribute_pa_pattern=stripe`,
      },
      {
        variantId: '882', title: 'Cotton / Check', sku: 'APRON-88-COTTON-CHECK', barcode: '0614141000036', gtin: '0614141000036', mpn: null, price: '36.00', compareAtPrice: '45.00', availability: 'out_of_stock',
        options: { Material: 'Cotton', Pattern: 'Check' }, image: `${fake.siteUrl}/wp-content/uploads/apron-cotton.jpg`, url: `${fake.siteUrl}/product/kitchen-apron/?attribute_pa_material=cotton&attribute_pa_pattern=check`,
      },
    ]);
  });

  test('more than 100 variations are read page by page', async () => {
    const { data, variations } = variable(89);
    const many = Array.from({ length: 130 }, (_, i) => ({ ...variations[i % 2]!, id: 10_000 + i }));
    fake.variations.set(89, many);
    await fake.deliver('product.updated', data);
    await t.webhooks.runner.runDueJobs();
    expect(fake.calls.variationPages).toBe(2);
    expect((await product('89')).body.variants).toHaveLength(130);
  });

  test('a variation edited on its own (the platform delivers the variation) refreshes its parent', async () => {
    const { data, variations } = variable(90);
    await fake.deliver('product.updated', data);
    await t.webhooks.runner.runDueJobs();
    const changed = { ...variations[0]!, price: '39.00', regular_price: '42.00', sale_price: '39.00', date_modified_gmt: '2026-01-15T09:00:00' };
    fake.variations.set(90, [changed, variations[1]!]);
    const [res] = await fake.deliver('product.updated', changed);
    expect(await res!.json()).toEqual({ received: true, outcome: 'queued' });
    await t.webhooks.runner.runDueJobs();
    const { body } = await product('90');
    expect(body.variants[0]).toMatchObject({ price: '39.00', compareAtPrice: '42.00' });
    // The newest of the product and its variations orders later deliveries.
    expect(body.updatedAt).toBe('2026-01-15T09:00:00.000Z');
    expect((await product(String(changed.id))).status).toBe(404);
  });

  test('a product the API no longer has is removed when its fetch answers 404', async () => {
    const { data } = variable(91);
    await fake.deliver('product.updated', data);
    await t.webhooks.runner.runDueJobs();
    fake.products.delete(91);
    await fake.deliver('product.updated', { ...data, date_modified_gmt: '2026-01-16T00:00:00' });
    await t.webhooks.runner.runDueJobs();
    expect((await product('91')).status).toBe(404);
  });
});

describe('platform C: tamper suite (nothing is ever applied)', () => {
  const cases: [string, () => Promise<Response>][] = [
    ['one flipped byte in the body', () => fake.send(hookUrl(), 'product.updated', payload(), secret(), { body: flipByte(JSON.stringify(payload())), signedBody: JSON.stringify(payload()) })],
    ['a wrong secret', () => fake.send(hookUrl(), 'product.updated', payload(), 'not-the-secret')],
    ['another store\'s secret', () => fake.send(hookUrl(), 'product.updated', payload(), other.hooks[0]!.secret)],
    ['a missing signature header', () => fake.send(hookUrl(), 'product.updated', payload(), secret(), { headers: { 'x-platform-c-webhook-signature': null } })],
    ['the right signature with another store\'s id', () => fake.send(`${t.url}/api/v1/platform-c/webhooks?store=${otherStore.id}`, 'product.updated', payload(), secret())],
    ['the right signature with another store\'s source', () => fake.send(hookUrl(), 'product.updated', payload(), secret(), { headers: { 'x-platform-c-webhook-source': `${other.siteUrl}/` } })],
    ['a missing source header', () => fake.send(hookUrl(), 'product.updated', payload(), secret(), { headers: { 'x-platform-c-webhook-source': null } })],
    ['a signed ping-looking body', () => fake.send(hookUrl(), 'product.updated', null, 'not-the-secret', { body: 'webhook_id=1' })],
    ['a signature wrong only in its last characters', () => fake.send(hookUrl(), 'product.updated', payload(), secret(), { headers: { 'x-platform-c-webhook-signature': wrongEnding(signatureOf(secret(), JSON.stringify(payload()))) } })],
    ['a truncated signature', () => fake.send(hookUrl(), 'product.updated', payload(), secret(), { headers: { 'x-platform-c-webhook-signature': signatureOf(secret(), JSON.stringify(payload())).slice(0, 24) } })],
    ['the id, secret and site of a store of another platform', async () => {
      const foreign = (await t.webhooks.stores.get(await seedStore(t, 'platform-b', 'foreignhash')))!;
      const foreignSecret = t.webhooks.stores.webhookSecretOf(foreign)!;
      return fake.send(`${t.url}/api/v1/platform-c/webhooks?store=${foreign.id}`, 'product.updated', payload(), foreignSecret, { headers: { 'x-platform-c-webhook-source': foreign.platformRef } });
    }],
  ];
  for (const [name, send] of cases) {
    test(`401 for ${name}`, async () => {
      const res = await send();
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'unverified_webhook' });
      expect(rows(t, 'products')).toHaveLength(0);
      expect(rows(t, 'webhook_deliveries')).toHaveLength(0);
    });
  }

  test('a replayed delivery is not applied again', async () => {
    const first = payload(77, { name: 'First', modifiedGmt: '2026-01-10T00:00:00' });
    await fake.send(hookUrl(), 'product.updated', first, secret());
    await fake.send(hookUrl(), 'product.updated', payload(77, { name: 'Second', modifiedGmt: '2026-01-11T00:00:00' }), secret());
    const replay = await fake.send(hookUrl(), 'product.updated', first, secret());
    expect((await replay.json()).outcome).toBe('duplicate');
    expect((await product('77')).body.title).toBe('Second');
  });
});
