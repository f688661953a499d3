import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { systemClock } from '../src/lib/clock.ts';
import { createSecretBox } from '../src/lib/secrets.ts';
import { createStoreRegistry } from '../src/stores/registry.ts';
import { startFakePlatformA, type FakePlatformA } from './fakes/platform-a.ts';
import { platformAProduct } from './fakes/payloads.ts';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { testSqliteOnly } from './helpers/engine.ts';
import { createStore, rows } from './helpers/stores.ts';

const KEY = Buffer.alloc(32, 7).toString('base64');
const SHOP = 'acme.myplatform-a.com';
const credentials = { clientSecret: 'acme-client-secret-value', accessToken: 'tok-acme-access-token' };

let fake: FakePlatformA;
let t: TestApp;
beforeEach(async () => {
  fake = startFakePlatformA([{ domain: SHOP, accessToken: credentials.accessToken, clientSecret: credentials.clientSecret, currency: 'EUR' }]);
  t = await makeTestApp({ listen: true, env: { SVC_PLATFORM_A_API_BASE: fake.url, SVC_ENCRYPTION_KEY: KEY } });
});
afterEach(async () => {
  await t.close();
  fake.stop();
});

const admin = async () => bearer(await t.keyWith('admin'));

describe('admin store endpoints', () => {
  test('POST /api/v1/admin/stores returns 201 with the store, its hook state and webhook URL, never a secret', async () => {
    const { status, store } = await createStore(t, { platform: 'platform-a', domain: SHOP, credentials });
    expect(status).toBe(201);
    expect(store).toMatchObject({ platform: 'platform-a', domain: SHOP, currency: 'EUR', status: 'active', credentialKind: 'own-app', hooks: { status: 'registered' }, webhookUrl: `${t.url}/api/v1/webhooks/platform-a` });
    const list = await (await t.request('/api/v1/admin/stores', { headers: await admin() })).json();
    const one = await (await t.request(`/api/v1/admin/stores/${store.id}`, { headers: await admin() })).json();
    expect(list.items.map((s: any) => s.id)).toEqual([store.id]);
    for (const body of [store, list, one]) {
      const text = JSON.stringify(body);
      expect(text).not.toContain(credentials.clientSecret);
      expect(text).not.toContain(credentials.accessToken);
      expect(text).not.toContain('credentials');
    }
  });

  test('credentials and webhook secrets are encrypted at rest (raw database)', async () => {
    await createStore(t, { platform: 'platform-a', domain: SHOP, credentials });
    await createStore(t, { platform: 'platform-b', domain: 'b.example.com', currency: 'USD', credentials: { storeHash: 'hash1', accessToken: 'b-token-value' } });
    const raw = (await rows(t, 'stores'));
    for (const row of raw) {
      expect(row.credentials).toStartWith('enc:v1:');
      if (row.webhook_secret !== null) expect(row.webhook_secret).toStartWith('enc:v1:');
    }
    expect(raw.find((r) => r.platform === 'platform-b').webhook_secret).toStartWith('enc:v1:');
  });

  testSqliteOnly('it reads the database file and its WAL; on PostgreSQL the server keeps the files', 'no secret is anywhere in the database file or its WAL', async () => {
    await createStore(t, { platform: 'platform-a', domain: SHOP, credentials });
    await createStore(t, { platform: 'platform-b', domain: 'b.example.com', currency: 'USD', credentials: { storeHash: 'hash1', accessToken: 'b-token-value' } });
    const file = await Bun.file(t.config.databaseFile).text();
    const wal = await Bun.file(`${t.config.databaseFile}-wal`).text().catch(() => '');
    for (const secret of [credentials.clientSecret, credentials.accessToken, 'b-token-value']) {
      expect(file + wal).not.toContain(secret);
    }
  });

  test('without SVC_ENCRYPTION_KEY secrets are stored in clear, marked as such', async () => {
    const plain = await makeTestApp();
    try {
      await createStore(plain, { platform: 'platform-a', domain: 'x.myplatform-a.com', currency: 'USD', credentials: { viaApp: true } });
      expect((await rows(plain, 'stores'))[0].credentials).toBe('plain:{"kind":"via-app"}');
    } finally {
      await plain.close();
    }
  });

  test('400 for invalid input: platform, domain, currency, credential shapes', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ platform: 'platform-z', domain: SHOP, credentials }, 'invalid_request'],
      [{ platform: 'platform-a', domain: 'acme.example.com', credentials }, 'invalid_domain'],
      [{ platform: 'platform-a', domain: SHOP, currency: 'euro', credentials }, 'invalid_request'],
      [{ platform: 'platform-a', domain: SHOP, credentials: {} }, 'invalid_credentials'],
      [{ platform: 'platform-a', domain: SHOP, credentials: { viaApp: false } }, 'invalid_credentials'],
      [{ platform: 'platform-a', domain: SHOP, credentials: { ...credentials, storeHash: 'x' } }, 'invalid_credentials'],
      [{ platform: 'platform-b', domain: 'b.example.com', credentials: { storeHash: 'has space', accessToken: 't' } }, 'invalid_credentials'],
      [{ platform: 'platform-c', domain: 'c.example.com', credentials: { siteUrl: 'ftp://x', consumerKey: 'a', consumerSecret: 'b' } }, 'invalid_credentials'],
      [{ platform: 'platform-c', domain: 'not a host', credentials: { siteUrl: 'https://c.example.com', consumerKey: 'a', consumerSecret: 'b' } }, 'invalid_domain'],
      [{ platform: 'platform-a', domain: SHOP, credentials, extra: true }, 'invalid_request'],
    ];
    for (const [body, error] of cases) {
      const res = await t.request('/api/v1/admin/stores', jsonRequest('POST', body, await admin()));
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe(error);
    }
    expect((await rows(t, 'stores'))).toHaveLength(0);
  });

  test('409 for a second store with the same shop domain; 404 for an unknown store', async () => {
    await createStore(t, { platform: 'platform-a', domain: SHOP, credentials });
    const again = await createStore(t, { platform: 'platform-a', domain: SHOP, credentials });
    expect(again.status).toBe(409);
    expect(again.store.error).toBe('store_exists');
    for (const [path, init] of [
      ['/api/v1/admin/stores/nope', {}],
      ['/api/v1/admin/stores/nope/products', {}],
      ['/api/v1/admin/stores/nope/hooks', { method: 'POST' }],
    ] as const) {
      const res = await t.request(path, { ...init, headers: await admin() });
      expect(res.status).toBe(404);
    }
  });

  test('store endpoints need the admin scope', async () => {
    expect((await t.request('/api/v1/admin/stores')).status).toBe(401);
    expect((await t.request('/api/v1/admin/stores', { headers: bearer(await t.keyWith('dashboard:read')) })).status).toBe(403);
  });

  test('a currency the platform cannot report is explained in the response', async () => {
    const { status, store } = await createStore(t, { platform: 'platform-a', domain: 'viaapp.myplatform-a.com', credentials: { viaApp: true } });
    expect(status).toBe(201);
    expect(store.currency).toBeNull();
    expect(store.currencyError).toContain('currency');
  });

  test('a currency the platform cannot report is set afterwards with the credentials; a bad one is 400 and changes nothing', async () => {
    const { store } = await createStore(t, { platform: 'platform-a', domain: 'viaapp.myplatform-a.com', credentials: { viaApp: true } });
    expect(store.currencyError).toContain('PUT /api/v1/admin/stores/:id/credentials');
    const put = async (body: unknown) => t.request(`/api/v1/admin/stores/${store.id}/credentials`, jsonRequest('PUT', body, await admin()));
    const bad = await put({ credentials: { viaApp: true }, currency: 'euro' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toBe('invalid_request');
    expect((await (await t.request(`/api/v1/admin/stores/${store.id}`, { headers: await admin() })).json()).currency).toBeNull();
    const saved = await put({ credentials: { viaApp: true }, currency: 'EUR' });
    expect(saved.status).toBe(200);
    const body = await saved.json();
    expect(body.currency).toBe('EUR');
    expect(body.currencyError).toBeUndefined();
    const read = await t.request(`/api/v1/admin/stores/${store.id}`, { headers: await admin() });
    expect((await read.json()).currency).toBe('EUR');
  });
});

test('outbound platform calls time out: a platform that never answers makes registration fail, not hang', async () => {
  const silent = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Promise<Response>(() => {}) });
  const slow = await makeTestApp({ env: { SVC_PLATFORM_A_API_BASE: `http://127.0.0.1:${silent.port}` }, webhooks: { apiTimeoutMs: 200 } });
  try {
    const { status, store } = await createStore(slow, { platform: 'platform-a', domain: SHOP, currency: 'USD', credentials });
    expect(status).toBe(201);
    expect(store.hooks).toMatchObject({ status: 'failed', error: expect.stringContaining('timed out after 200 ms') });
  } finally {
    slow.close();
    silent.stop(true);
  }
});

describe('admin catalogue endpoints', () => {
  test('a page size out of bounds is 400 naming the query parameter (not "body")', async () => {
    const { store } = await createStore(t, { platform: 'platform-a', domain: SHOP, credentials });
    for (const path of [
      `/api/v1/admin/stores/${store.id}/products?limit=1000`,
      `/api/v1/admin/stores/${store.id}/categories?cursor=x&limit=0`,
      `/api/v1/admin/faqs?storeId=${store.id}&limit=501`,
    ]) {
      const res = await t.request(path, { headers: await admin() });
      expect(res.status, path).toBe(400);
      const body = await res.json();
      expect(body.error, path).toBe('invalid_request');
      expect(body.detail, path).toMatch(/^limit: Expected number to be (less|greater) or equal to (500|1)$/);
    }
  });

  test('GET /api/v1/admin/stores/:id/products pages through live products with nextCursor', async () => {
    const { store } = await createStore(t, { platform: 'platform-a', domain: SHOP, credentials });
    for (const id of [1, 2, 3]) await fake.deliver(SHOP, 'products/create', platformAProduct(id));
    await fake.deliver(SHOP, 'products/delete', { id: 2 }, { triggeredAt: '2027-01-01T00:00:00Z' });
    await t.webhooks.runner.runDueJobs(); // the platform confirms the product is gone
    const first = await (await t.request(`/api/v1/admin/stores/${store.id}/products?limit=1`, { headers: await admin() })).json();
    expect(first.items.map((p: any) => p.productId)).toEqual(['1']);
    const second = await (await t.request(`/api/v1/admin/stores/${store.id}/products?limit=1&cursor=${first.nextCursor}`, { headers: await admin() })).json();
    expect(second.items.map((p: any) => p.productId)).toEqual(['3']);
    expect(second.nextCursor).toBeNull();
    expect(Object.keys(second.items[0])).toEqual(expect.arrayContaining(['productId', 'title', 'handle', 'price', 'currency', 'availability', 'updatedAt']));
    const bad = await t.request(`/api/v1/admin/stores/${store.id}/products?limit=0`, { headers: await admin() });
    expect(bad.status).toBe(400);
  });
});

describe('secret sealing', () => {
  test('a sealed secret opens only with the same key and the same context', () => {
    const box = createSecretBox(new Uint8Array(32).fill(1));
    const sealed = box.seal('s3cret', 'store:1:credentials');
    expect(sealed).not.toContain('s3cret');
    expect(box.open(sealed, 'store:1:credentials')).toBe('s3cret');
    expect(() => box.open(sealed, 'store:2:credentials')).toThrow();
    expect(() => createSecretBox(new Uint8Array(32).fill(2)).open(sealed, 'store:1:credentials')).toThrow();
    expect(() => createSecretBox(null).open(sealed, 'store:1:credentials')).toThrow('SVC_ENCRYPTION_KEY');
    expect(box.seal('s3cret', 'c')).not.toBe(box.seal('s3cret', 'c'));
  });

  const boxOf = (fill: number | null) => createSecretBox(fill === null ? null : new Uint8Array(32).fill(fill));
  const under = (fill: number | null) => createStoreRegistry(t.storage.stores, t.storage.changes.tableStamp(['stores']), boxOf(fill), systemClock);
  const site = (n: number) => ({ platform: 'platform-c' as const, domain: `site${n}.example`, currency: 'EUR', parsed: { credentials: { kind: 'rest-keys' as const, siteUrl: `https://site${n}.example`, consumerKey: 'ck', consumerSecret: 'cs' }, platformRef: `https://site${n}.example` } });

  test('the start check tries every sealed value: a store sealed under another key, or a webhook secret kept from an earlier key, is found', async () => {
    const [keyA, keyB, noKey] = [under(1), under(2), under(null)];
    const doesNotOpen = 'a stored secret does not open with SVC_ENCRYPTION_KEY: another key sealed it (or it was moved to another row)';
    expect(await keyA.sealedCredentialsProblem()).toBeNull();
    // As an svc before the start check left it when credentials were saved after the key changed:
    // the credentials sealed under the new key, the webhook secret kept under the old one.
    const first = (await keyA.create(site(1)))!;
    await t.query('UPDATE stores SET credentials = ? WHERE id = ?', boxOf(2).seal(JSON.stringify(site(1).parsed.credentials), `store:${first.id}:credentials`), first.id);
    await t.changesHeard(); // PostgreSQL tells of the write a few ms after its commit
    expect(await keyB.sealedCredentialsProblem()).toBe(`store ${first.id}, webhook-secret: ${doesNotOpen}`);
    expect(await keyA.sealedCredentialsProblem()).toBe(`store ${first.id}, credentials: ${doesNotOpen}`);
    // A store connected under the new key, after one connected under the old key; one stored in clear opens under any key.
    const second = (await keyB.create(site(2)))!;
    expect(await noKey.create(site(3))).not.toBeNull();
    expect(second.id > first.id).toBe(true);
    expect(await keyA.sealedCredentialsProblem()).toBe(`store ${first.id}, credentials: ${doesNotOpen}; 2 more sealed value(s) do not open either`);
    expect(await noKey.sealedCredentialsProblem()).toBe(`store ${first.id}, credentials: a stored secret is encrypted but SVC_ENCRYPTION_KEY is not set; 3 more sealed value(s) do not open either`);
    expect(await under(3).sealedCredentialsProblem()).toStartWith(`store ${first.id}, credentials: ${doesNotOpen}; 3 more`);
  });

  test('credentials saved once a key is set seal the kept webhook secret too (stored in clear before), unchanged, so registered hooks stay valid', async () => {
    const [clear, keyed] = [under(null), under(1)];
    const store = (await clear.create(site(1)))!;
    expect([store.credentials, store.webhookSecret]).toEqual([expect.stringMatching(/^plain:/), expect.stringMatching(/^plain:/)]);
    const secret = clear.webhookSecretOf(store);
    const saved = (await keyed.saveCredentials(store, site(1).parsed))!;
    expect([saved.credentials, saved.webhookSecret]).toEqual([expect.stringMatching(/^enc:v1:/), expect.stringMatching(/^enc:v1:/)]);
    expect(saved.webhookSecret).not.toContain(secret!);
    expect(keyed.webhookSecretOf(saved)).toBe(secret);
    expect(keyed.credentialsOf(saved)).toEqual(site(1).parsed.credentials);
    expect(await keyed.sealedCredentialsProblem()).toBeNull();
  });
});
