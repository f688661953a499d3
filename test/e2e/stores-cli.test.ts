import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { platformAProduct } from '../fakes/payloads.ts';
import { startFakePlatformA, type FakePlatformA } from '../fakes/platform-a.ts';
import { bearer, closeAppAndFakes, jsonRequest, makeTestApp, tempDir } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { createStore } from '../helpers/stores.ts';
import { runSync } from '../helpers/sync.ts';

// svc stores list | remove [--keep-data] | sync-pause | sync-resume, run as an operator would
// against a data directory, with a fake platform A holding the store's hooks.

const SHOP = { domain: 'cli.myplatform-a.com', accessToken: 'tok-cli', clientSecret: 'cli-client-secret', currency: 'EUR' };

let tmp: ReturnType<typeof tempDir>;
let dataDir: string;
let fake: FakePlatformA;
/** What the CLI needs to reach the platform and name svc's webhook URL as the server did. */
let env: Record<string, string>;
let storeId: string;
const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir], { env });

beforeEach(async () => {
  tmp = tempDir('svc-stores-cli-');
  dataDir = path.join(tmp.dir, 'data');
  fake = startFakePlatformA([{ ...SHOP, products: [1, 2, 3].map((i) => ({ ...platformAProduct(7000 + i), handle: `p-${i}` })) }]);
  Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
  // The store connected and synced through the admin API, as an operator would have, then the server stopped.
  const app = await makeTestApp({ dataDir, listen: true, env: { SVC_PLATFORM_A_API_BASE: fake.url } });
  storeId = (await createStore(app, { platform: 'platform-a', domain: SHOP.domain, credentials: { clientSecret: SHOP.clientSecret, accessToken: SHOP.accessToken } })).store.id;
  await runSync(app, storeId);
  const key = await app.request('/api/v1/admin/keys', jsonRequest('POST', { scopes: ['products:read'], storeId, allowedDomains: ['shop.example.com'] }, bearer(await app.keyWith('admin'))));
  expect(key.status).toBe(201);
  env = { SVC_PLATFORM_A_API_BASE: fake.url, SVC_BASE_URL: app.url! };
  await closeAppAndFakes(app, []);
});
afterEach(() => {
  fake.stop();
  tmp.remove();
});

describe('svc stores', () => {
  test('stores list prints every store as the admin API shows it, with its sync state', async () => {
    const res = await cli('stores', 'list');
    expect(res.code).toBe(0);
    expect(res.json.items).toHaveLength(1);
    expect(res.json.items[0]).toMatchObject({ id: storeId, domain: SHOP.domain, status: 'active', hooks: { status: 'registered' }, sync: { state: 'idle', kinds: { products: { items: 3 } } } });
    expect(res.stdout).not.toContain(SHOP.accessToken);
    expect((await cli('stores', 'list', 'extra')).code).toBe(2);
  });

  test('stores remove deletes the hooks at the platform and everything svc holds for the store, and prints what it removed', async () => {
    expect(fake.subscriptions).toHaveLength(4);
    const res = await cli('stores', 'remove', storeId);
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ id: storeId, keptData: false, removed: { products: 3, keys: 1 }, kept: null, hooks: { outcome: 'unregistered', left: [] }, store: null });
    expect(fake.subscriptions).toEqual([]);
    expect((await cli('stores', 'list')).json.items).toEqual([]);
    const again = await cli('stores', 'remove', storeId);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not_found');
  });

  test('stores remove --keep-data disconnects the store: no hooks, data kept, shown inactive', async () => {
    const res = await cli('stores', 'remove', storeId, '--keep-data');
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ keptData: true, removed: { products: 0 }, kept: { products: 3, keys: 1 }, hooks: { outcome: 'unregistered' }, store: { status: 'inactive', hooks: { status: 'unregistered' } } });
    expect(fake.subscriptions).toEqual([]);
    expect((await cli('stores', 'list')).json.items[0]).toMatchObject({ id: storeId, status: 'inactive', disconnectedAt: expect.any(String) });
  });

  test('stores sync-pause stops passes until sync-resume; stores sync refuses meanwhile', async () => {
    const paused = await cli('stores', 'sync-pause', storeId);
    expect(paused.code).toBe(0);
    expect(paused.json).toMatchObject({ id: storeId, sync: { state: 'paused', pausedAt: expect.any(String) } });
    const refused = await cli('stores', 'sync', storeId);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('sync_paused');
    const resumed = await cli('stores', 'sync-resume', storeId);
    expect(resumed.json).toMatchObject({ id: storeId, sync: { state: 'idle', pausedAt: null } });
    expect((await cli('stores', 'sync', storeId)).json.sync).toMatchObject({ state: 'running', trigger: 'manual' });
  });

  test('usage errors: --keep-data outside remove, a missing store ID', async () => {
    for (const args of [['stores', 'sync-pause', storeId, '--keep-data'], ['stores', 'remove'], ['stores', 'sync-resume']]) {
      const res = await cli(...args);
      expect(res.code).toBe(2);
      expect(res.stdout).toBe('');
    }
    expect((await cli('stores', 'sync-pause', 'st_unknown')).stderr).toContain('not_found');
  });
});
