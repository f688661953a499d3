import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { startFakePlatformA, type FakePlatformA } from './fakes/platform-a.ts';
import { platformAProduct, platformASimpleProduct } from './fakes/payloads.ts';
import { makeTestApp, otherConnection, type TestApp } from './helpers/app.ts';
import { failCommitsOf, failInsertsWhen, slowInsertsWhen } from './helpers/failing-commits.ts';
import { testSqliteOnly } from './helpers/engine.ts';
import { foreignWriteInProgress } from './helpers/foreign-writer.ts';
import { createHmac } from 'node:crypto';
import { createStore, flipByte, getProduct, rows, tableNames, wrongEnding } from './helpers/stores.ts';
import { settleInitialSyncs } from './helpers/sync.ts';
import { createSecretBox } from '../src/lib/secrets.ts';
import { parseCredentials } from '../src/stores/credentials.ts';
import { createStoreRegistry } from '../src/stores/registry.ts';

const SHOP = 'acme.myplatform-a.com';
const OTHER = 'other.myplatform-a.com';
const APP_SHOP = 'viaapp.myplatform-a.com';
const TOKEN_SHOP = 'token.myplatform-a.com';

let fake: FakePlatformA;
let t: TestApp;
let storeId: string;
let hookUrl: string;

async function setup(env: Record<string, string> = { SVC_PLATFORM_A_APP_SECRET: 'svc-app-secret' }) {
  fake = startFakePlatformA([
    { domain: SHOP, accessToken: 'tok-acme', clientSecret: 'acme-client-secret', currency: 'EUR' },
    { domain: OTHER, accessToken: 'tok-other', clientSecret: 'other-client-secret', currency: 'USD' },
  ]);
  // A bucket that never holds back the catalogue syncs that connecting a store starts (settleInitialSyncs).
  Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
  t = await makeTestApp({ listen: true, env: { SVC_PLATFORM_A_API_BASE: fake.url, ...env } });
  const created = await createStore(t, { platform: 'platform-a', domain: SHOP, credentials: { clientSecret: 'acme-client-secret', accessToken: 'tok-acme' } });
  expect(created.status).toBe(201);
  storeId = created.store.id;
  await createStore(t, { platform: 'platform-a', domain: OTHER, credentials: { clientSecret: 'other-client-secret', accessToken: 'tok-other' } });
  hookUrl = `${t.url}/api/v1/webhooks/platform-a`;
}

beforeEach(() => setup());
afterEach(async () => {
  await t.close();
  fake.stop();
});

const product = (id: string) => getProduct(t, storeId, id);

/** The Shop resource the platform sends with app/uninstalled (its permanent domain, and the primary one). */
const shopResource = (domain: string) => ({ id: 55, name: 'Acme', email: 'owner@acme.example', domain, 'myplatform-a_domain': domain, plan_name: 'basic' });
/** The Order resource (orders/create, orders/paid): an id, the line items and the financial status, with buyer data svc never keeps. */
const order = (id: number, financialStatus = 'paid') => ({
  id,
  order_number: 1000 + id,
  financial_status: financialStatus,
  email: 'buyer@example.com',
  customer: { first_name: 'Bo' },
  line_items: [{ id: id * 10, product_id: 1001, variant_id: 10010, quantity: 1, price: '89.00', title: 'Waxed Canvas Tote' }],
});
/** The privacy topics' bodies for a shop, as the platform sends them. */
const privacyBodies = (domain: string) => ({
  'customers/data_request': { shop_id: 55, shop_domain: domain, orders_requested: [4501], customer: { id: 9001, email: 'jane.doe@example.com', phone: '+15550100' }, data_request: { id: 77 } },
  'customers/redact': { shop_id: 55, shop_domain: domain, customer: { id: 9001, email: 'jane.doe@example.com', phone: '+15550100' }, orders_to_redact: [4501] },
  'shop/redact': { shop_id: 55, shop_domain: domain },
});

/** A store connected through svc's app (verified with SVC_PLATFORM_A_APP_SECRET, no API access): deliveries signed as the platform does for it. */
async function viaAppStore(domain = APP_SHOP) {
  const created = await createStore(t, { platform: 'platform-a', domain, currency: 'USD', credentials: { viaApp: true } });
  expect(created.status).toBe(201);
  const id: string = created.store.id;
  return {
    id,
    domain,
    send: (topic: string, payload: unknown, options: Parameters<FakePlatformA['send']>[4] = {}) => fake.send(hookUrl, domain, topic, payload, { secret: 'svc-app-secret', ...options }),
    product: (productId: string) => getProduct(t, id, productId),
  };
}
const signatureOf = (secret: string, payload: unknown) => createHmac('sha256', secret).update(JSON.stringify(payload)).digest('base64');
/** The store's delivery log, in the order written (ids are time-ordered). */
const deliveries = () => t.query('SELECT * FROM webhook_deliveries WHERE store_id = ? ORDER BY id', storeId);

describe('platform A: hook registration', () => {
  test('saving credentials registers products/create|update|delete and app/uninstalled to the webhook URL, never order topics', () => {
    const mine = fake.subscriptions.filter((s) => s.shop === SHOP);
    expect(mine.map((s) => s.topic).sort()).toEqual(['APP_UNINSTALLED', 'PRODUCTS_CREATE', 'PRODUCTS_DELETE', 'PRODUCTS_UPDATE']);
    expect(new Set(mine.map((s) => s.callbackUrl))).toEqual(new Set([hookUrl]));
  });

  test('saving the credentials again creates no duplicate subscription', async () => {
    const res = await t.request(`/api/v1/admin/stores/${storeId}/credentials`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await t.keyWith('admin')}` },
      body: JSON.stringify({ credentials: { clientSecret: 'acme-client-secret', accessToken: 'tok-acme' } }),
    });
    expect(res.status).toBe(200);
    expect((await res.json()).hooks.status).toBe('registered');
    expect(fake.subscriptions.filter((s) => s.shop === SHOP)).toHaveLength(4);
  });

  test('a store of svc\'s app and a permanent-token store get no hooks from svc (spec §4.3 rule 3)', async () => {
    const viaApp = await createStore(t, { platform: 'platform-a', domain: APP_SHOP, currency: 'USD', credentials: { viaApp: true } });
    const tokenOnly = await createStore(t, { platform: 'platform-a', domain: TOKEN_SHOP, currency: 'USD', credentials: { accessToken: 'tok-x' } });
    expect(viaApp.store.hooks.status).toBe('platform_managed');
    expect(tokenOnly.store.hooks.status).toBe('not_required');
    expect(fake.subscriptions.filter((s) => s.shop === APP_SHOP || s.shop === TOKEN_SHOP)).toHaveLength(0);
  });
});

describe('platform A: product topics', () => {
  test('products/create syncs the product (catalogue data, price, currency from the shop)', async () => {
    const [res] = await fake.deliver(SHOP, 'products/create', platformAProduct(1001));
    expect(res!.status).toBe(200);
    expect(await res!.json()).toEqual({ received: true, outcome: 'applied' });
    const { status, body } = await product('1001');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      productId: '1001',
      title: 'Waxed Canvas Tote',
      handle: 'waxed-canvas-tote',
      price: '89.00',
      priceMax: '99.00',
      currency: 'EUR',
      availability: 'in_stock',
      options: ['Color'],
      brand: 'Northwind Goods',
      url: `https://${SHOP}/products/waxed-canvas-tote`,
      updatedAt: '2026-01-10T15:00:00.000Z',
    });
    expect(body.descriptionText).toContain('Brass rivets & hardware');
    expect(body.images).toHaveLength(3);
    // Every variant of the payload, with its own identifiers, price and stock; no warnings for valid barcodes.
    expect(body.variants).toEqual([
      { variantId: '10010', title: 'Olive', sku: 'TOTE-1001-OLIVE', barcode: '4006381333931', gtin: '4006381333931', mpn: null, price: '89.00', compareAtPrice: '99.00', availability: 'in_stock', options: { Color: 'Olive' }, image: 'https://cdn.platform-a.example/files/tote-1001-0.jpg?v=1736521200', url: `https://${SHOP}/products/waxed-canvas-tote?variant=10010` },
      { variantId: '10011', title: 'Navy', sku: 'TOTE-1001-NAVY', barcode: '4006381333948', gtin: '4006381333948', mpn: null, price: '89.00', compareAtPrice: '99.00', availability: 'out_of_stock', options: { Color: 'Navy' }, image: 'https://cdn.platform-a.example/files/tote-1001-1.jpg?v=1736521200', url: `https://${SHOP}/products/waxed-canvas-tote?variant=10011` },
      { variantId: '10012', title: 'Sand', sku: 'TOTE-1001-SAND', barcode: '4006381333955', gtin: '4006381333955', mpn: null, price: '99.00', compareAtPrice: null, availability: 'in_stock', options: { Color: 'Sand' }, image: 'https://cdn.platform-a.example/files/tote-1001-2.jpg?v=1736521200', url: `https://${SHOP}/products/waxed-canvas-tote?variant=10012` },
    ]);
    expect(body.warnings).toEqual([]);
  });

  test('a product without options: its single Default Title variant gives the product its SKU and barcode', async () => {
    await fake.deliver(SHOP, 'products/create', platformASimpleProduct(1002));
    const { body } = await product('1002');
    expect(body).toMatchObject({ sku: 'CARD-1002', barcode: '0036000291452', gtin: '0036000291452', options: [], price: '35.00', priceMax: '35.00' });
    expect(body.variants).toEqual([expect.objectContaining({ variantId: '10020', title: null, options: {}, url: `https://${SHOP}/products/leather-card-holder?variant=10020` })]);
  });

  test('a variant selling on backorder (inventory policy continue) and an untracked one count as available', async () => {
    await fake.deliver(SHOP, 'products/create', platformAProduct(1003, { inventory: 0, variants: [{ inventory_policy: 'continue' }, {}, { inventory_management: null }] }));
    const { body } = await product('1003');
    expect(body.variants.map((v: any) => v.availability)).toEqual(['backorder', 'out_of_stock', 'in_stock']);
    expect(body.availability).toBe('in_stock');
  });

  test('an update that drops a variant removes it from the catalogue', async () => {
    await fake.deliver(SHOP, 'products/create', platformAProduct(1004));
    const next = platformAProduct(1004, { updatedAt: '2026-01-11T10:00:00-05:00' });
    await fake.deliver(SHOP, 'products/update', { ...next, variants: next.variants.slice(0, 2) });
    const { body } = await product('1004');
    expect(body.variants.map((v: any) => v.variantId)).toEqual(['10040', '10041']);
    expect(body.priceMax).toBe('89.00');
  });

  test('an update that changes one variant and reorders the others leaves exactly the payload\'s variants, in its order', async () => {
    await fake.deliver(SHOP, 'products/create', platformAProduct(1005));
    const next = platformAProduct(1005, { updatedAt: '2026-01-11T10:00:00-05:00', variants: [{ price: '79.00' }] });
    await fake.deliver(SHOP, 'products/update', { ...next, variants: [next.variants[2], next.variants[0], next.variants[1]] });
    const { body } = await product('1005');
    expect(body.variants.map((v: any) => [v.variantId, v.price, v.title])).toEqual([['10052', '99.00', 'Sand'], ['10050', '79.00', 'Olive'], ['10051', '89.00', 'Navy']]);
    await fake.deliver(SHOP, 'products/update', { ...next, updated_at: '2026-01-12T10:00:00-05:00', variants: [next.variants[1]] });
    expect((await product('1005')).body.variants.map((v: any) => v.variantId)).toEqual(['10051']);
  });

  test('products/update syncs the product\'s changes', async () => {
    await fake.deliver(SHOP, 'products/create', platformAProduct(1001));
    await fake.deliver(SHOP, 'products/update', platformAProduct(1001, { title: 'Tote, renamed', updatedAt: '2026-01-11T10:00:00-05:00', inventory: 0 }));
    const { body } = await product('1001');
    expect(body).toMatchObject({ title: 'Tote, renamed', availability: 'out_of_stock' });
  });

  test('an update with a new description replaces its text; one that keeps the description keeps its text', async () => {
    await fake.deliver(SHOP, 'products/create', platformAProduct(1001));
    const renamed = platformAProduct(1001, { title: 'Renamed', updatedAt: '2026-01-11T10:00:00-05:00' });
    await fake.deliver(SHOP, 'products/update', renamed);
    expect((await product('1001')).body).toMatchObject({ title: 'Renamed', descriptionText: expect.stringContaining('Brass rivets & hardware') });
    const rewritten = { ...platformAProduct(1001, { updatedAt: '2026-01-12T10:00:00-05:00' }), body_html: '<p>Now in <b>recycled</b> canvas.</p><ul><li>Lighter</li></ul>' };
    await fake.deliver(SHOP, 'products/update', rewritten);
    expect((await product('1001')).body).toMatchObject({ descriptionHtml: rewritten.body_html, descriptionText: 'Now in recycled canvas.\nLighter' });
    await fake.deliver(SHOP, 'products/update', { ...rewritten, body_html: null, updated_at: '2026-01-13T10:00:00-05:00' });
    expect((await product('1001')).body).toMatchObject({ descriptionHtml: null, descriptionText: null });
    await fake.deliver(SHOP, 'products/update', { ...rewritten, body_html: platformAProduct(1001).body_html, updated_at: '2026-01-14T10:00:00-05:00' });
    expect((await product('1001')).body).toMatchObject({ descriptionText: expect.stringContaining('Brass rivets & hardware') });
  });

  test('the description text always follows the stored markup, also after an older delivery with other markup was refused', async () => {
    await fake.deliver(SHOP, 'products/create', platformAProduct(1001, { updatedAt: '2026-01-12T10:00:00-05:00' }));
    const older = { ...platformAProduct(1001, { updatedAt: '2026-01-11T10:00:00-05:00' }), body_html: '<p>Old <i>copy</i></p>' };
    const [stale] = await fake.deliver(SHOP, 'products/update', older);
    expect(await stale!.json()).toMatchObject({ outcome: 'stale' });
    expect((await product('1001')).body).toMatchObject({ descriptionText: expect.stringContaining('Brass rivets & hardware') });
    await fake.deliver(SHOP, 'products/update', { ...older, updated_at: '2026-01-13T10:00:00-05:00' });
    expect((await product('1001')).body).toMatchObject({ descriptionHtml: '<p>Old <i>copy</i></p>', descriptionText: 'Old copy' });
  });

  test('the product keeps the payload as it arrived (the verified body text)', async () => {
    // Non-ASCII text too: the stored payload is the body's own UTF-8, read back as the same text.
    const body = JSON.stringify(platformAProduct(1001, { title: 'Sac cabas — été' }), null, 1);
    const res = await fake.send(hookUrl, SHOP, 'products/create', null, { body });
    expect(res.status).toBe(200);
    expect((await rows(t, 'products')).find((p) => p.product_id === '1001')!.raw).toBe(body);
  });

  test('products/delete of a store with its own app: answered queued, then removed once the platform says the product is gone (404 afterwards)', async () => {
    await settleInitialSyncs(t);
    await fake.deliver(SHOP, 'products/create', platformAProduct(1001));
    const [res] = await fake.deliver(SHOP, 'products/delete', { id: 1001 }, { triggeredAt: '2026-01-12T00:00:00Z' });
    expect(await res!.json()).toEqual({ received: true, outcome: 'queued' });
    // Answered before the platform was asked: the question is a job.
    expect(fake.stats.productLookups).toBe(0);
    expect((await product('1001')).status).toBe(200);
    expect(await t.webhooks.runner.runDueJobs()).toBe(1);
    expect(fake.stats.productLookups).toBe(1);
    expect((await product('1001')).status).toBe(404);
    expect((await deliveries()).find((d) => d.topic === 'products/delete')).toMatchObject({ outcome: 'removed', reason: null });
  });

  test('the alternative path /api/v1/platform-a/webhooks is accepted too', async () => {
    const res = await fake.send(`${t.url}/api/v1/platform-a/webhooks`, SHOP, 'products/create', platformAProduct(7));
    expect(res.status).toBe(200);
    expect((await product('7')).status).toBe(200);
  });
});

describe('platform A: duplicates and ordering', () => {
  test('a duplicate delivery (same event id) is applied once', async () => {
    const payload = platformAProduct(1001);
    await fake.send(hookUrl, SHOP, 'products/update', payload, { eventId: 'evt-same' });
    await fake.send(hookUrl, SHOP, 'products/update', { ...payload, title: 'Changed in transit?' }, { eventId: 'evt-same' });
    expect((await product('1001')).body.title).toBe('Waxed Canvas Tote');
    expect((await deliveries())).toHaveLength(1);
    expect((await deliveries())[0]).toMatchObject({ outcome: 'applied', duplicates: 1 });
  });

  test('a retry without an event id (same bytes) is a duplicate', async () => {
    const payload = platformAProduct(1001);
    const first = await fake.send(hookUrl, SHOP, 'products/update', payload, { headers: { 'x-platform-a-event-id': null, 'x-platform-a-webhook-id': null } });
    const again = await fake.send(hookUrl, SHOP, 'products/update', payload, { headers: { 'x-platform-a-event-id': null, 'x-platform-a-webhook-id': null } });
    expect((await first.json()).outcome).toBe('applied');
    expect((await again.json()).outcome).toBe('duplicate');
  });

  test('an older payload never overwrites newer catalogue data', async () => {
    await fake.deliver(SHOP, 'products/update', platformAProduct(1001, { title: 'Newer', updatedAt: '2026-01-11T10:00:00Z' }));
    const [late] = await fake.deliver(SHOP, 'products/update', platformAProduct(1001, { title: 'Older', updatedAt: '2026-01-10T10:00:00Z' }));
    expect(await late!.json()).toEqual({ received: true, outcome: 'stale' });
    expect((await product('1001')).body.title).toBe('Newer');
  });

  // A store of svc's app gives svc no API to confirm a delete with: the body's own rules order it.
  test('a store of svc\'s app: a delete older than the current data arriving after it does not remove the product', async () => {
    const app = await viaAppStore();
    await app.send('products/update', platformAProduct(1001, { title: 'Kept', updatedAt: '2026-01-12T00:00:00Z' }));
    const late = await app.send('products/delete', { id: 1001 }, { triggeredAt: '2026-01-11T00:00:00Z' });
    expect(await late.json()).toEqual({ received: true, outcome: 'stale' });
    expect((await app.product('1001')).body.title).toBe('Kept');
  });

  test('a store of svc\'s app: an update older than the delete arriving after it does not bring the product back; a newer one does', async () => {
    const app = await viaAppStore();
    await app.send('products/create', platformAProduct(1001, { updatedAt: '2026-01-10T10:00:00Z' }));
    expect(await (await app.send('products/delete', { id: 1001 }, { triggeredAt: '2026-01-12T00:00:00Z' })).json()).toEqual({ received: true, outcome: 'removed' });
    const late = await app.send('products/update', platformAProduct(1001, { updatedAt: '2026-01-11T00:00:00Z' }));
    expect((await late.json()).outcome).toBe('stale');
    expect((await app.product('1001')).status).toBe(404);
    await app.send('products/update', platformAProduct(1001, { title: 'Back', updatedAt: '2026-01-13T00:00:00Z' }));
    expect((await app.product('1001')).body.title).toBe('Back');
  });
});

describe('platform A: group commit (deliveries arriving together share one transaction)', () => {
  /** A delivery through the app's handler, signed with the shop's client secret unless `signature` is given. */
  const delivery = (payload: unknown, eventId: string, signature = signatureOf('acme-client-secret', payload)) =>
    t.request('/api/v1/webhooks/platform-a', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-platform-a-hmac-sha256': signature, 'x-platform-a-shop-domain': SHOP, 'x-platform-a-topic': 'products/update', 'x-platform-a-event-id': eventId },
      body: JSON.stringify(payload),
    });
  /** The shop's app/uninstalled delivery. */
  const uninstalled = () => {
    const uninstall = { id: 1, domain: SHOP };
    return t.request('/api/v1/webhooks/platform-a', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-platform-a-hmac-sha256': signatureOf('acme-client-secret', uninstall), 'x-platform-a-shop-domain': SHOP, 'x-platform-a-topic': 'app/uninstalled', 'x-platform-a-event-id': 'evt-uninstall' },
      body: JSON.stringify(uninstall),
    });
  };
  /** Sends all at once and returns each answer's status and body, with the number of transactions they took. */
  async function together(sends: (() => Promise<Response>)[]) {
    // The shop's store held in memory, as a busy server holds it: each delivery is then verified in
    // the turn it arrives (a store read from PostgreSQL answers in a turn of its own).
    for (let lookup = t.webhooks.stores.findByRef('platform-a', SHOP); lookup instanceof Promise; lookup = t.webhooks.stores.findByRef('platform-a', SHOP)) await lookup;
    const groupsBefore = t.webhooks.dispatch.groups;
    const responses = await Promise.all(sends.map((send) => send()));
    const answers = await Promise.all(responses.map(async (r) => ({ status: r.status, body: await r.json() })));
    return { answers, groups: t.webhooks.dispatch.groups - groupsBefore };
  }

  test('deliveries arriving together are committed in one transaction and each is answered after it', async () => {
    const { answers, groups } = await together([1001, 1002, 1003].map((id) => () => delivery(platformAProduct(id), `evt-${id}`)));
    expect(groups).toBe(1);
    expect(answers.map((a) => a.body.outcome)).toEqual(['applied', 'applied', 'applied']);
    for (const id of ['1001', '1002', '1003']) expect((await product(id)).status).toBe(200);
    expect((await deliveries())).toHaveLength(3);
  });

  test('a burst larger than a group is committed in several transactions, every delivery answered after its own', async () => {
    const ids = Array.from({ length: 150 }, (_, i) => 2000 + i);
    const { answers, groups } = await together(ids.map((id) => () => delivery(platformAProduct(id), `evt-${id}`)));
    expect(groups).toBeGreaterThanOrEqual(3);
    expect(answers.every((a) => a.status === 200 && a.body.outcome === 'applied')).toBe(true);
    expect((await deliveries())).toHaveLength(150);
  });

  test('the rest of a burst is committed a slice of about 2 ms per turn of the event loop, in order, each delivery answered 200 once', async () => {
    // The last deliveries take several ms each to log: longer than a slice.
    await slowInsertsWhen(t, 'webhook_deliveries', "NEW.dedupe_key LIKE 'event:slow-%'");
    const sends = [
      ...Array.from({ length: 64 }, (_, i) => () => delivery(platformAProduct(3000 + i), `evt-${3000 + i}`)),
      ...Array.from({ length: 4 }, (_, i) => () => delivery(platformAProduct(4000 + i), `slow-${i}`)),
      // An older update of the same product behind a newer one, in a later slice: still stale.
      () => delivery(platformAProduct(4100, { title: 'Newer', updatedAt: '2026-01-11T10:00:00Z' }), 'slow-newer'),
      () => delivery(platformAProduct(4100, { title: 'Older', updatedAt: '2026-01-10T10:00:00Z' }), 'slow-older'),
    ];
    const groupsPerTurn: number[] = [];
    let ticking = true;
    const tick = () => {
      groupsPerTurn.push(t.webhooks.dispatch.groups);
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const { answers, groups } = await together(sends);
    ticking = false;
    // The first group takes the 64 that arrived together; the slow rest goes out in slices...
    expect(groups).toBeGreaterThan(2);
    // ...one group per turn, other work running in between.
    expect(groupsPerTurn.every((n, i) => i === 0 || n - groupsPerTurn[i - 1]! <= 1)).toBe(true);
    expect(answers.map((a) => a.status)).toEqual(sends.map(() => 200));
    expect(answers.map((a) => a.body.outcome)).toEqual([...sends.slice(0, -1).map(() => 'applied'), 'stale']);
    expect((await product('4100')).body.title).toBe('Newer');
    // Committed in the order verified, each once.
    expect((await deliveries()).map((d) => d.dedupe_key)).toEqual([
      ...Array.from({ length: 64 }, (_, i) => `event:evt-${3000 + i}`),
      ...Array.from({ length: 4 }, (_, i) => `event:slow-${i}`),
      'event:slow-newer',
      'event:slow-older',
    ]);
  });

  test('an older update after a newer one in the same group is not applied', async () => {
    const { answers, groups } = await together([
      () => delivery(platformAProduct(1001, { title: 'Newer', updatedAt: '2026-01-11T10:00:00Z' }), 'evt-newer'),
      () => delivery(platformAProduct(1001, { title: 'Older', updatedAt: '2026-01-10T10:00:00Z' }), 'evt-older'),
    ]);
    expect(groups).toBe(1);
    expect(answers.map((a) => a.body.outcome)).toEqual(['applied', 'stale']);
    expect((await product('1001')).body.title).toBe('Newer');
  });

  test('the same event id twice in one group is applied once', async () => {
    const { answers, groups } = await together([
      () => delivery(platformAProduct(1001, { title: 'First' }), 'evt-same'),
      () => delivery(platformAProduct(1001, { title: 'Second' }), 'evt-same'),
    ]);
    expect(groups).toBe(1);
    expect(answers.map((a) => a.body.outcome)).toEqual(['applied', 'duplicate']);
    expect((await product('1001')).body.title).toBe('First');
    expect((await deliveries())).toEqual([expect.objectContaining({ outcome: 'applied', duplicates: 1 })]);
  });

  test('a delivery after app/uninstalled in the same group is ignored like any for an inactive store', async () => {
    const { answers, groups } = await together([
      () => delivery(platformAProduct(1001), 'evt-before'),
      uninstalled,
      () => delivery(platformAProduct(1002), 'evt-after'),
    ]);
    expect(groups).toBe(1);
    expect(answers.map((a) => a.body.outcome)).toEqual(['applied', 'deactivated', 'ignored_inactive']);
    expect((await rows(t, 'products')).map((p) => p.product_id)).toEqual(['1001']);
  });

  test('a delivery after app/uninstalled that is left for a later group of the same burst is ignored like any for an inactive store', async () => {
    const { answers, groups } = await together([
      ...Array.from({ length: 63 }, (_, i) => () => delivery(platformAProduct(5000 + i), `evt-${5000 + i}`)),
      uninstalled,
      () => delivery(platformAProduct(6000), 'evt-after'),
    ]);
    expect(groups).toBeGreaterThan(1);
    expect(answers.slice(-2).map((a) => a.body.outcome)).toEqual(['deactivated', 'ignored_inactive']);
    expect((await rows(t, 'products')).map((p) => p.product_id)).not.toContain('6000');
  });

  test('a bad signature in the middle of a group does not affect the others', async () => {
    const { answers, groups } = await together([
      () => delivery(platformAProduct(1001), 'evt-1'),
      () => delivery(platformAProduct(1002), 'evt-2', signatureOf('wrong-secret', platformAProduct(1002))),
      () => delivery(platformAProduct(1003), 'evt-3'),
    ]);
    expect(groups).toBe(1);
    expect(answers.map((a) => a.status)).toEqual([200, 401, 200]);
    expect((await product('1001')).status).toBe(200);
    expect((await product('1002')).status).toBe(404);
    expect((await product('1003')).status).toBe(200);
  });

  testSqliteOnly('the lock is SQLite\'s one write lock of the file (PostgreSQL locks rows)', 'a delivery that meets a write of another connection (CLI, checkpointer) waits for it and is committed, never refused as locked', async () => {
    // The group reads (duplicates) before it writes: started DEFERRED, it could not take the write lock held meanwhile.
    const foreign = await foreignWriteInProgress(t.config.databaseFile);
    const { answers, groups } = await together([1001, 1002].map((id) => () => delivery(platformAProduct(id), `evt-${id}`)));
    await foreign.committed;
    expect(answers).toEqual([200, 200].map((status) => ({ status, body: { received: true, outcome: 'applied' } })));
    expect(groups).toBe(1);
    expect((await product('1001')).status).toBe(200);
    expect((await deliveries()).map((d) => d.dedupe_key).sort()).toEqual(['event:evt-1001', 'event:evt-1002']);
  });

  test('a delivery whose write fails inside a group is refused alone; the others are committed', async () => {
    // A planted failure of the catalogue write for one product, as a full disk or a broken row would cause.
    const writesFailNoMore = await failInsertsWhen(t, 'products', "NEW.product_id = '1002'");
    const { answers, groups } = await together([1001, 1002, 1003].map((id) => () => delivery(platformAProduct(id), `evt-${id}`)));
    expect(groups).toBe(1);
    expect(answers.map((a) => a.status)).toEqual([200, 500, 200]);
    expect((await product('1001')).status).toBe(200);
    expect((await product('1003')).status).toBe(200);
    // Nothing of the failed one is kept: no product, and no delivery row, so the platform's retry is applied.
    expect((await product('1002')).status).toBe(404);
    expect((await deliveries()).map((d) => d.dedupe_key).sort()).toEqual(['event:evt-1001', 'event:evt-1003']);
    await writesFailNoMore();
    expect((await (await delivery(platformAProduct(1002), 'evt-1002')).json()).outcome).toBe('applied');
  });

  test('a COMMIT that fails after one delivery of the group was refused: every delivery is refused, none is kept, and their retries are applied', async () => {
    const writesFailNoMore = await failInsertsWhen(t, 'products', "NEW.product_id = '1002'");
    const commitsFailNoMore = await failCommitsOf(t, 'webhook_deliveries');
    const { answers, groups } = await together([1001, 1002, 1003].map((id) => () => delivery(platformAProduct(id), `evt-${id}`)));
    expect(groups).toBe(0);
    expect(answers.map((a) => a.status)).toEqual([500, 500, 500]);
    expect((await deliveries())).toEqual([]);
    for (const id of ['1001', '1002', '1003']) expect((await product(id)).status).toBe(404);
    await writesFailNoMore();
    await commitsFailNoMore();
    const retried = await together([1001, 1002, 1003].map((id) => () => delivery(platformAProduct(id), `evt-${id}`)));
    expect(retried.answers.map((a) => a.body.outcome)).toEqual(['applied', 'applied', 'applied']);
  });

  testSqliteOnly('RAISE(ROLLBACK) is SQLite\'s; on PostgreSQL any failed statement is undone by its savepoint alone', 'a failure that makes SQLite roll the whole transaction back: the others are applied again without it and committed', async () => {
    t.database.sqlite.exec("CREATE TRIGGER rollback_1002 BEFORE INSERT ON products WHEN NEW.product_id = '1002' BEGIN SELECT RAISE(ROLLBACK, 'planted failure'); END");
    const { answers } = await together([1001, 1002, 1003].map((id) => () => delivery(platformAProduct(id), `evt-${id}`)));
    expect(answers.map((a) => a.status)).toEqual([200, 500, 200]);
    expect(answers[0]!.body.outcome).toBe('applied');
    expect(answers[2]!.body.outcome).toBe('applied');
    expect((await product('1001')).status).toBe(200);
    expect((await product('1003')).status).toBe(200);
    expect((await deliveries()).map((d) => d.dedupe_key).sort()).toEqual(['event:evt-1001', 'event:evt-1003']);
  });
});

describe('platform A: the secret held in memory follows every change (store cache)', () => {
  const deliverSignedWith = async (secret: string, id: number) => (await fake.send(hookUrl, SHOP, 'products/update', platformAProduct(id), { secret })).status;

  test('a client secret changed through the admin API verifies the very next delivery, and the old one no longer does', async () => {
    expect(await deliverSignedWith('acme-client-secret', 1001)).toBe(200); // the store and its secret are now held in memory
    const saved = await t.request(`/api/v1/admin/stores/${storeId}/credentials`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await t.keyWith('admin')}` },
      body: JSON.stringify({ credentials: { clientSecret: 'acme-rotated-secret', accessToken: 'tok-acme' } }),
    });
    expect(saved.status).toBe(200);
    expect(await deliverSignedWith('acme-client-secret', 1002)).toBe(401);
    expect(await deliverSignedWith('acme-rotated-secret', 1003)).toBe(200);
  });

  test('a client secret changed by another process (another connection to the database) verifies the very next delivery', async () => {
    expect(await deliverSignedWith('acme-client-secret', 1001)).toBe(200);
    const other = await otherConnection(t);
    try {
      const registry = createStoreRegistry(other.storage.stores, other.storage.changes.tableStamp(['stores']), createSecretBox(t.config.encryptionKey), t.clock);
      const row = (await registry.get(storeId))!;
      await registry.saveCredentials(row, parseCredentials('platform-a', SHOP, { clientSecret: 'acme-rotated-secret', accessToken: 'tok-acme' }, t.config.platformAShopSuffix));
    } finally {
      await other.close();
    }
    expect(await deliverSignedWith('acme-client-secret', 1002)).toBe(401);
    expect(await deliverSignedWith('acme-rotated-secret', 1003)).toBe(200);
  });

  test('a store written directly on the server\'s own connection is read again on the very next delivery', async () => {
    expect((await (await fake.send(hookUrl, SHOP, 'products/update', platformAProduct(1001))).json()).outcome).toBe('applied');
    await t.query("UPDATE stores SET status = 'inactive' WHERE id = ?", storeId);
    await t.changesHeard(); // PostgreSQL tells of the write a few ms after its commit
    expect((await (await fake.send(hookUrl, SHOP, 'products/update', platformAProduct(1002))).json()).outcome).toBe('ignored_inactive');
  });
});

test('platform A: an unsigned future X-Platform-A-Triggered-At cannot hold a removal past now', async () => {
  const app = await viaAppStore();
  await app.send('products/create', platformAProduct(1001));
  await app.send('products/delete', { id: 1001 }, { triggeredAt: '2999-01-01T00:00:00Z' });
  await app.send('products/update', platformAProduct(1001, { title: 'Recreated', updatedAt: new Date(Date.now() + 60_000).toISOString() }));
  expect((await app.product('1001')).body.title).toBe('Recreated');
});

describe('platform A: store topics', () => {
  test('app/uninstalled deactivates the store and records the withdrawal of its signals', async () => {
    const [res] = await fake.deliver(SHOP, 'app/uninstalled', shopResource(SHOP));
    expect(await res!.json()).toEqual({ received: true, outcome: 'deactivated' });
    const store = (await rows(t, 'stores')).find((s) => s.id === storeId);
    expect(store).toMatchObject({ status: 'inactive' });
    expect(store.signals_withdrawn_at).toBeNumber();
    expect((await rows(t, 'store_events')).filter((e) => e.store_id === storeId).map((e) => e.kind).sort()).toEqual(['app_uninstalled', 'signals_withdrawn']);
  });

  test('any delivery for an inactive store gets 200 and is ignored', async () => {
    await fake.deliver(SHOP, 'app/uninstalled', shopResource(SHOP));
    const [res] = await fake.deliver(SHOP, 'products/create', platformAProduct(1001));
    expect(res!.status).toBe(200);
    expect(await res!.json()).toEqual({ received: true, outcome: 'ignored_inactive' });
    expect((await product('1001')).status).toBe(404);
    const malformed = await fake.send(hookUrl, SHOP, 'products/update', { title: 'no id' });
    expect(malformed.status).toBe(200);
  });

  test('privacy topics are acknowledged and logged with no customer personal data kept', async () => {
    const customer = { id: 9001, email: 'jane.doe@example.com', phone: '+15550100' };
    for (const [topic, payload] of [
      ['customers/data_request', { shop_id: 55, shop_domain: SHOP, orders_requested: [1, 2], customer, data_request: { id: 77 } }],
      ['customers/redact', { shop_id: 55, shop_domain: SHOP, customer, orders_to_redact: [1] }],
      ['shop/redact', { shop_id: 55, shop_domain: SHOP }],
    ] as const) {
      const res = await fake.send(hookUrl, SHOP, topic, payload);
      expect(res.status).toBe(200);
      expect((await res.json()).outcome).toBe('acknowledged');
    }
    expect((await rows(t, 'store_events')).map((e) => e.kind).sort()).toEqual(['customers/data_request', 'customers/redact', 'shop/redact']);
    const dump = JSON.stringify(await Promise.all((await tableNames(t)).map((name) => rows(t, name))));
    expect(dump).not.toContain('jane.doe');
    expect(dump).not.toContain('+15550100');
  });

  test('shop/redact after uninstall is still logged against the store', async () => {
    await fake.deliver(SHOP, 'app/uninstalled', shopResource(SHOP));
    const res = await fake.send(hookUrl, SHOP, 'shop/redact', { shop_id: 55, shop_domain: SHOP });
    expect((await res.json()).outcome).toBe('acknowledged');
  });

  test('order topics are verified and recorded as order signals, with no buyer data', async () => {
    const res = await fake.send(hookUrl, SHOP, 'orders/paid', order(4501));
    expect(await res.json()).toEqual({ received: true, outcome: 'recorded' });
    expect((await rows(t, 'order_signals'))).toMatchObject([{ store_id: storeId, topic: 'orders/paid', order_id: '4501', status: 'paid' }]);
    expect(JSON.stringify((await rows(t, 'order_signals')))).not.toContain('buyer@example.com');
    const bad = await fake.send(hookUrl, SHOP, 'orders/create', { note: 'no id', line_items: [] });
    expect(bad.status).toBe(400);
  });

  test('an unhandled topic gets 200 and is ignored', async () => {
    const res = await fake.send(hookUrl, SHOP, 'collections/update', { id: 3 });
    expect(await res.json()).toEqual({ received: true, outcome: 'ignored_topic' });
  });
});

/** Everything a delivery could change, table by table (the delivery log aside). */
const everything = async () => Object.fromEntries(await Promise.all(['products', 'product_variants', 'stores', 'store_events', 'order_signals', 'jobs'].map(async (table) => [table, await rows(t, table)])));

describe('platform A: a signed body under a topic it was not made for changes nothing (the topic header is not signed)', () => {
  /** One genuine body of each handled topic for SHOP, as the platform sends it. */
  const genuine: Record<string, () => unknown> = {
    'products/create': () => platformAProduct(1001),
    'products/update': () => platformAProduct(1001, { title: 'Renamed', updatedAt: '2026-01-11T10:00:00Z' }),
    'products/delete': () => ({ id: 1001 }),
    'app/uninstalled': () => shopResource(SHOP),
    ...Object.fromEntries(Object.entries(privacyBodies(SHOP)).map(([topic, body]) => [topic, () => body])),
    'orders/create': () => order(4501, 'pending'),
    'orders/paid': () => order(4501),
  };
  /** Topics whose bodies are the same resource: a body of one is the other's own. */
  const sameResource = (a: string, b: string) => [a, b].every((topic) => topic.startsWith('products/') && topic !== 'products/delete') || [a, b].every((topic) => topic.startsWith('orders/'));

  for (const topic of Object.keys(genuine)) {
    test(`${topic}: the signed body of every other topic is refused (200, body_not_for_topic), logged with the reason, and changes nothing`, async () => {
      // The shop's state before: a live product and an order signal a misapplied body could change.
      await fake.deliver(SHOP, 'products/create', platformAProduct(1001));
      fake.productsOf(SHOP).push(platformAProduct(1001));
      await fake.send(hookUrl, SHOP, 'orders/create', order(4500));
      for (const [bodyTopic, body] of Object.entries(genuine)) {
        if (bodyTopic === topic || sameResource(topic, bodyTopic)) continue;
        const before = await everything();
        const res = await fake.send(hookUrl, SHOP, topic, body(), { eventId: `evt-${bodyTopic}-as-${topic}` });
        expect({ bodyTopic, status: res.status, answer: await res.json() }).toEqual({ bodyTopic, status: 200, answer: { received: true, outcome: 'refused', reason: 'body_not_for_topic' } });
        expect({ bodyTopic, state: await everything() }).toEqual({ bodyTopic, state: before });
        // Logged with the reason, without the event id (a refused delivery never stands in for the genuine one).
        expect((await deliveries()).at(-1)).toMatchObject({ topic, outcome: 'refused', reason: 'body_not_for_topic', dedupe_key: null, product_id: null });
      }
      await t.webhooks.runner.runDueJobs();
      expect((await product('1001')).body.title).toBe('Waxed Canvas Tote');
    });
  }

  test('the refusal holds for an inactive store too (refused, not acknowledged)', async () => {
    await fake.deliver(SHOP, 'app/uninstalled', shopResource(SHOP));
    const res = await fake.send(hookUrl, SHOP, 'shop/redact', platformAProduct(1001));
    expect(await res.json()).toEqual({ received: true, outcome: 'refused', reason: 'body_not_for_topic' });
    expect((await rows(t, 'store_events')).map((e) => e.kind)).not.toContain('shop/redact');
  });

  test('a products/delete body that names more than the product (a product body) is refused, never removes it', async () => {
    await fake.deliver(SHOP, 'products/create', platformAProduct(1001));
    const res = await fake.send(hookUrl, SHOP, 'products/delete', { id: 1001, title: 'Waxed Canvas Tote' });
    expect(await res.json()).toEqual({ received: true, outcome: 'refused', reason: 'body_not_for_topic' });
    expect((await rows(t, 'jobs')).filter((j) => j.kind === 'product.confirm-removal')).toEqual([]);
  });

  test('a product body whose global id is another resource\'s is refused', async () => {
    const res = await fake.send(hookUrl, SHOP, 'products/update', { ...platformAProduct(1001), admin_graphql_api_id: 'gid://platform-a/Collection/1001' });
    expect(await res.json()).toEqual({ received: true, outcome: 'refused', reason: 'body_not_for_topic' });
    expect((await product('1001')).status).toBe(404);
  });
});

describe('platform A: a delivery for one store never changes another (stores of svc\'s app share one secret)', () => {
  const SECOND_APP_SHOP = 'second.myplatform-a.com';
  /** For every topic, a body signed for the first shop (and applied there), sent with the second shop's domain header. */
  const bodies: Record<string, unknown> = {
    'products/create': platformAProduct(1001),
    'products/update': platformAProduct(1001, { updatedAt: '2026-01-11T10:00:00Z' }),
    'products/delete': { id: 1001 },
    'app/uninstalled': shopResource(APP_SHOP),
    ...privacyBodies(APP_SHOP),
    'orders/create': order(4501, 'pending'),
    'orders/paid': order(4501),
  };
  const expectedReason = (topic: string) => (topic.startsWith('products/') || topic.startsWith('orders/') ? 'held_by_other_store' : 'other_shop');

  for (const [topic, body] of Object.entries(bodies)) {
    test(`${topic}: a body signed for one shop, sent with another shop's domain, is refused (${expectedReason(topic)}) and leaves the other store as it was`, async () => {
      const first = await viaAppStore(APP_SHOP);
      const second = await viaAppStore(SECOND_APP_SHOP);
      expect((await first.send(topic, body)).status).toBe(200);
      const before = await everything();
      const res = await second.send(topic, body, { eventId: 'evt-replayed' });
      expect(await res.json()).toEqual({ received: true, outcome: 'refused', reason: expectedReason(topic) });
      expect(await everything()).toEqual(before);
      // Logged without its event id: it cannot stand in for a genuine delivery of the second shop carrying that id.
      expect((await rows(t, 'webhook_deliveries')).filter((d) => d.store_id === second.id)).toEqual([expect.objectContaining({ topic, outcome: 'refused', reason: expectedReason(topic), dedupe_key: null })]);
      const genuine = await second.send('products/create', platformAProduct(2002), { eventId: 'evt-replayed' });
      expect((await genuine.json()).outcome).toBe('applied');
    });
  }

  test('app/uninstalled and the privacy topics apply to a store only when the payload names its shop', async () => {
    const app = await viaAppStore();
    for (const [topic, payload] of Object.entries(privacyBodies(OTHER))) {
      expect(await (await app.send(topic, payload)).json()).toEqual({ received: true, outcome: 'refused', reason: 'other_shop' });
    }
    expect(await (await app.send('app/uninstalled', shopResource(OTHER))).json()).toEqual({ received: true, outcome: 'refused', reason: 'other_shop' });
    // The primary domain may be the shop's own; the permanent one names it.
    expect(await (await app.send('app/uninstalled', { ...shopResource(APP_SHOP), domain: 'www.acme-shop.example' })).json()).toEqual({ received: true, outcome: 'deactivated' });
    expect((await rows(t, 'stores')).find((s) => s.id === app.id)).toMatchObject({ status: 'inactive' });
  });

  test('a store with its own app: a shop or privacy body naming another shop is refused (other_shop)', async () => {
    const res = await fake.send(hookUrl, SHOP, 'app/uninstalled', shopResource(OTHER));
    expect(await res.json()).toEqual({ received: true, outcome: 'refused', reason: 'other_shop' });
    expect((await rows(t, 'stores')).find((s) => s.id === storeId)).toMatchObject({ status: 'active' });
  });
});

describe('platform A: a delete is applied only when the platform confirms the product is gone (stores with their own app)', () => {
  test('a delete of a product the platform still has is refused (product_not_removed) and the product stays', async () => {
    await settleInitialSyncs(t);
    await fake.deliver(SHOP, 'products/create', platformAProduct(1001));
    fake.productsOf(SHOP).push(platformAProduct(1001));
    // A signed products/update body resent as products/delete is refused by its shape; a genuine
    // delete body replayed with a fresh event id is refused by the platform.
    const [res] = await fake.deliver(SHOP, 'products/delete', { id: 1001 });
    expect(await res!.json()).toEqual({ received: true, outcome: 'queued' });
    await t.webhooks.runner.runDueJobs();
    expect((await product('1001')).status).toBe(200);
    expect((await deliveries()).find((d) => d.topic === 'products/delete')).toMatchObject({ outcome: 'refused', reason: 'product_not_removed' });
  });

  test('a confirmation for a store that went inactive meanwhile removes nothing and says so in the delivery log', async () => {
    await settleInitialSyncs(t);
    await fake.deliver(SHOP, 'products/create', platformAProduct(1001));
    await fake.deliver(SHOP, 'products/delete', { id: 1001 });
    await fake.deliver(SHOP, 'app/uninstalled', shopResource(SHOP));
    await t.webhooks.runner.runDueJobs();
    expect(fake.stats.productLookups).toBe(0);
    expect((await rows(t, 'products')).find((p) => p.product_id === '1001')).toMatchObject({ removed_at: null });
    expect((await deliveries()).find((d) => d.topic === 'products/delete')).toMatchObject({ outcome: 'ignored_inactive' });
  });

  test('a platform API failure leaves the delete queued and retried, nothing removed meanwhile', async () => {
    await settleInitialSyncs(t);
    await fake.deliver(SHOP, 'products/create', platformAProduct(1001));
    fake.outage.status = 503;
    await fake.deliver(SHOP, 'products/delete', { id: 1001 });
    await t.webhooks.runner.runDueJobs();
    expect((await product('1001')).status).toBe(200);
    expect((await rows(t, 'jobs')).find((j) => j.kind === 'product.confirm-removal')).toMatchObject({ status: 'queued', attempts: 1 });
    expect((await deliveries()).find((d) => d.topic === 'products/delete')).toMatchObject({ outcome: 'queued' });
  });
});

describe('platform A: errors (spec §7)', () => {
  test('400 for an invalid shop domain', async () => {
    for (const domain of ['acme.example.com', 'a.b.myplatform-a.com', '', '-x.myplatform-a.com']) {
      const res = await fake.send(hookUrl, SHOP, 'products/update', platformAProduct(1), { headers: { 'x-platform-a-shop-domain': domain } });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_shop_domain' });
    }
  });

  test('400 for a missing topic, a missing product id or malformed JSON', async () => {
    const noTopic = await fake.send(hookUrl, SHOP, 'products/update', platformAProduct(1), { headers: { 'x-platform-a-topic': null } });
    expect(noTopic.status).toBe(400);
    expect(await noTopic.json()).toMatchObject({ error: 'missing_topic' });
    const noId = await fake.send(hookUrl, SHOP, 'products/update', { ...platformAProduct(1), id: undefined, admin_graphql_api_id: undefined });
    expect(noId.status).toBe(400);
    expect(await noId.json()).toMatchObject({ error: 'missing_product_id' });
    const notJson = await fake.send(hookUrl, SHOP, 'products/update', null, { body: '{"id":' });
    expect(notJson.status).toBe(400);
    expect((await deliveries())).toHaveLength(0);
  });

  test('500 for a store of svc\'s app while SVC_PLATFORM_A_APP_SECRET is unset', async () => {
    await t.close();
    fake.stop();
    await setup({});
    await createStore(t, { platform: 'platform-a', domain: APP_SHOP, currency: 'USD', credentials: { viaApp: true } });
    const res = await fake.send(hookUrl, APP_SHOP, 'products/update', platformAProduct(1), { secret: 'anything' });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error: 'app_secret_not_configured' });
  });

  test('a store of svc\'s app is verified with SVC_PLATFORM_A_APP_SECRET', async () => {
    const app = await createStore(t, { platform: 'platform-a', domain: APP_SHOP, currency: 'USD', credentials: { viaApp: true } });
    const res = await fake.send(hookUrl, APP_SHOP, 'products/update', platformAProduct(5), { secret: 'svc-app-secret' });
    expect(res.status).toBe(200);
    expect((await getProduct(t, app.store.id, '5')).status).toBe(200);
  });

  test('a permanent-token store never accepts a delivery (401), whatever the signature', async () => {
    await createStore(t, { platform: 'platform-a', domain: TOKEN_SHOP, currency: 'USD', credentials: { accessToken: 'tok-x' } });
    for (const secret of ['svc-app-secret', 'tok-x', '']) {
      const res = await fake.send(hookUrl, TOKEN_SHOP, 'products/update', platformAProduct(1), { secret });
      expect(res.status).toBe(401);
    }
  });
});

describe('platform A: unknown and known shops get the same 401', () => {
  test('an unknown shop, a known shop with a wrong signature and a permanent-token shop get the same 401 body', async () => {
    await createStore(t, { platform: 'platform-a', domain: TOKEN_SHOP, currency: 'USD', credentials: { accessToken: 'tok-x' } });
    const answer = async (shop: string) => {
      const res = await fake.send(hookUrl, shop, 'products/update', platformAProduct(1), { secret: 'not-the-secret' });
      return { status: res.status, body: await res.json() };
    };
    const unknown = await answer('nobody.myplatform-a.com');
    expect(unknown).toEqual({ status: 401, body: { error: 'unverified_webhook', detail: expect.any(String) } });
    expect(await answer(SHOP)).toEqual(unknown);
    expect(await answer(TOKEN_SHOP)).toEqual(unknown);
    expect((await rows(t, 'webhook_deliveries'))).toHaveLength(0);
  });
});

describe('platform A: tamper suite (nothing is ever applied)', () => {
  const tampered: [string, (payload: any) => Promise<Response>][] = [
    ['one flipped byte in the body', (p) => fake.send(hookUrl, SHOP, 'products/update', p, { body: flipByte(JSON.stringify(p)), signedBody: JSON.stringify(p) })],
    ['a wrong secret', (p) => fake.send(hookUrl, SHOP, 'products/update', p, { secret: 'wrong-secret' })],
    ['another store\'s secret', (p) => fake.send(hookUrl, SHOP, 'products/update', p, { secret: 'other-client-secret' })],
    ['svc\'s app secret for a store with its own app', (p) => fake.send(hookUrl, SHOP, 'products/update', p, { secret: 'svc-app-secret' })],
    ['a missing signature header', (p) => fake.send(hookUrl, SHOP, 'products/update', p, { headers: { 'x-platform-a-hmac-sha256': null } })],
    ['an empty signature', (p) => fake.send(hookUrl, SHOP, 'products/update', p, { headers: { 'x-platform-a-hmac-sha256': '' } })],
    ['the right signature under another store\'s domain', (p) => fake.send(hookUrl, OTHER, 'products/update', p, { secret: 'acme-client-secret' })],
    ['an unknown shop', (p) => fake.send(hookUrl, 'nobody.myplatform-a.com', 'products/update', p, { secret: 'acme-client-secret' })],
    ['a signature wrong only in its last characters', (p) => fake.send(hookUrl, SHOP, 'products/update', p, { headers: { 'x-platform-a-hmac-sha256': wrongEnding(signatureOf('acme-client-secret', p)) } })],
    ['a truncated signature', (p) => fake.send(hookUrl, SHOP, 'products/update', p, { headers: { 'x-platform-a-hmac-sha256': signatureOf('acme-client-secret', p).slice(0, 24) } })],
  ];
  for (const [name, send] of tampered) {
    test(`401 for ${name}`, async () => {
      const res = await send(platformAProduct(1001));
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'unverified_webhook' });
      expect((await rows(t, 'products'))).toHaveLength(0);
      expect((await rows(t, 'webhook_deliveries'))).toHaveLength(0);
    });
  }

  test('a replayed delivery is not applied again', async () => {
    await fake.send(hookUrl, SHOP, 'products/update', platformAProduct(1001, { title: 'First', updatedAt: '2026-01-10T00:00:00Z' }), { eventId: 'e1' });
    await fake.send(hookUrl, SHOP, 'products/update', platformAProduct(1001, { title: 'Second', updatedAt: '2026-01-11T00:00:00Z' }), { eventId: 'e2' });
    // An attacker replays the first delivery byte for byte, with and without a fresh event id.
    const replay = await fake.send(hookUrl, SHOP, 'products/update', platformAProduct(1001, { title: 'First', updatedAt: '2026-01-10T00:00:00Z' }), { eventId: 'e1' });
    const fresh = await fake.send(hookUrl, SHOP, 'products/update', platformAProduct(1001, { title: 'First', updatedAt: '2026-01-10T00:00:00Z' }), { eventId: 'e3' });
    expect((await replay.json()).outcome).toBe('duplicate');
    expect((await fresh.json()).outcome).toBe('stale');
    expect((await product('1001')).body.title).toBe('Second');
  });
});

describe('platform A: refused before the body is read (issue 11)', () => {
  test('a delivery for a known shop whose signature is not a base64 HMAC-SHA256 is refused 401 without waiting for its body', async () => {
    let pulled = 0;
    const stalled = new ReadableStream<Uint8Array>({
      pull: () => {
        pulled++;
        return new Promise(() => {}); // never sends a byte
      },
    });
    const response = t.request('/api/v1/webhooks/platform-a', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '5000', 'x-platform-a-hmac-sha256': 'not-a-signature', 'x-platform-a-shop-domain': SHOP, 'x-platform-a-topic': 'products/update' },
      body: stalled,
      // @ts-expect-error: Bun and the fetch spec need half-duplex for a streamed request body
      duplex: 'half',
    });
    const answered = await Promise.race([response, Bun.sleep(1_000).then(() => null)]);
    expect(answered?.status).toBe(401);
    expect(await answered!.json()).toMatchObject({ error: 'unverified_webhook' });
    expect(pulled).toBeLessThanOrEqual(1);
  });
});
