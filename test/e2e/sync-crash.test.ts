import { expect, test } from 'bun:test';
import { startFakePlatformC } from '../fakes/platform-c.ts';
import { platformCProduct } from '../fakes/payloads.ts';
import { runCli } from '../helpers/cli.ts';
import { POSTGRES_MODE, queryDataDir } from '../helpers/engine.ts';
import { serversPerTest, type SpawnedServer } from '../helpers/server.ts';

// A catalogue import survives kill -9 of the server: a spawned `svc serve`, a fake platform-C site
// over real HTTP, the process killed while a page is in flight, then started again on the same data.

const KEYS = { consumerKey: 'ck_crash', consumerSecret: 'cs_crash', currency: 'EUR' };
const PRODUCTS = 600; // six pages of 100
const servers = serversPerTest('svc-sync-crash-');

async function admin(server: SpawnedServer, key: string, method: string, route: string, body?: unknown): Promise<any> {
  const res = await fetch(`${server.url}${route}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return res.json();
}

test('kill -9 mid-import: after a restart the import resumes at the page in flight and completes, no product lost or held twice', async () => {
  const fake = startFakePlatformC(KEYS);
  try {
    for (let i = 0; i < PRODUCTS; i++) fake.products.set(7001 + i, { ...platformCProduct(7001 + i, fake.siteUrl, { name: `Set ${7001 + i}` }), slug: `set-${7001 + i}` });
    const key = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', servers.dataDir])).json.key as string;
    const first = await servers.start();
    // Page 4 is being asked for: the server dies before it gets an answer.
    let killed: Promise<number> | null = null;
    fake.pageHooks.beforeProductsPage = async (page) => {
      if (page !== 4 || killed) return;
      killed = first.stop('SIGKILL');
      await killed;
    };
    const created = await admin(first, key, 'POST', '/api/v1/admin/stores', { platform: 'platform-c', domain: 'crash.example.com', credentials: { siteUrl: fake.siteUrl, consumerKey: KEYS.consumerKey, consumerSecret: KEYS.consumerSecret } });
    const storeId = created.id as string;
    const deadline = Date.now() + 30_000;
    while (!killed && Date.now() < deadline) await Bun.sleep(20);
    expect(await killed!).toBe(137);
    fake.pageHooks.beforeProductsPage = null;
    // A start on SQLite frees the leases its dead predecessor left (the only instance). On PostgreSQL
    // a start never frees a lease another instance may hold: the dead one's ends when its time is up
    // (SVC_JOB_LEASE_SECONDS, test/job-leases.test.ts), brought forward here, as SQLite's start does.
    if (POSTGRES_MODE) await queryDataDir(servers.dataDir, "UPDATE jobs SET lease_until = ? WHERE status = 'running'", Date.now());

    const second = await servers.start();
    let sync: any;
    for (;;) {
      sync = (await admin(second, key, 'GET', `/api/v1/admin/stores/${storeId}`)).sync;
      if (sync.state !== 'running' || Date.now() > deadline + 30_000) break;
      await Bun.sleep(50);
    }
    expect(sync).toMatchObject({ state: 'idle', trigger: 'connect', error: null, kinds: { products: { state: 'idle', pages: 6, items: PRODUCTS } } });
    // Pages 1-3 were committed before the kill and never read again; page 4 is read again from the start.
    expect(fake.calls.productPages).toEqual([1, 2, 3, 4, 4, 5, 6]);

    const held: string[] = [];
    for (let cursor: string | null = null; ; ) {
      const page: { items: { productId: string }[]; nextCursor: string | null } = await admin(second, key, 'GET', `/api/v1/admin/stores/${storeId}/products?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
      held.push(...page.items.map((p) => p.productId));
      if (!(cursor = page.nextCursor)) break;
    }
    expect(held.length).toBe(PRODUCTS);
    expect(new Set(held)).toEqual(new Set([...fake.products.keys()].map(String)));

    expect(await second.stop()).toBe(0);
    expect(await queryDataDir(servers.dataDir, 'SELECT count(*) AS n, count(DISTINCT product_id) AS ids FROM products WHERE removed_at IS NULL')).toEqual([{ n: PRODUCTS, ids: PRODUCTS }]);
    expect(await queryDataDir(servers.dataDir, "SELECT status, count(*) AS n FROM jobs WHERE kind = 'catalog-sync.products' GROUP BY status")).toEqual([{ status: 'done', n: 1 }]);
  } finally {
    fake.stop();
  }
}, 120_000);
