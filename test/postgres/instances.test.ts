// Many instances, one service (issue 31 item 5): three spawned `svc serve` processes on one throwaway
// PostgreSQL and one redis-server, behind a round-robin proxy that is also their base URL (so the
// platforms' deliveries and pings spread over them too), used as scanners, platforms and an operator
// would: telemetry, bulk, webhooks of all three platforms, a store connect with its import, the
// console. One instance is killed with SIGKILL mid-load. Runs under `npm run test:postgres` with
// redis-server installed (CI installs both).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { startFakePlatformA, type FakePlatformA } from '../fakes/platform-a.ts';
import { startFakePlatformB, type FakePlatformB } from '../fakes/platform-b.ts';
import { startFakePlatformC, type FakePlatformC } from '../fakes/platform-c.ts';
import { peerOf } from '../fakes/http.ts';
import { platformAProduct, platformBProduct, platformCProduct } from '../fakes/payloads.ts';
import { tempDir } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { instanceId, roundRobinProxy, serverConnectedFrom, startInstances, type RoundRobinProxy } from '../helpers/cluster.ts';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/postgres.ts';
import { scanPayload, signedInit, TELEMETRY, tokenInit } from '../helpers/probe.ts';
import { REDIS_SERVER, startRedis, type TestRedis } from '../helpers/redis.ts';
import type { SpawnedServer } from '../helpers/server.ts';

const SHOP_A = 'many.myplatform-a.com';
const SHOP_A_SECRET = 'many-instances-a-secret';
const KEYS_C = { consumerKey: 'ck_many', consumerSecret: 'cs_many', currency: 'EUR' };
/** Six pages of 100: the import is several steps, any of which any instance may claim. */
const PRODUCTS_C = 600;
/** A lead token's scans a minute (SVC_RATE_AUTHED). */
const LEAD_PER_MINUTE = 10;

const ready = TEST_DATABASE_URL !== undefined && REDIS_SERVER !== null;
const describeInstances = ready ? describe : describe.skip;

describeInstances(`three instances on one PostgreSQL and one Redis${ready ? '' : ' [skipped: needs npm run test:postgres and redis-server]'}`, () => {
  let database: TestDatabase;
  let redis: TestRedis;
  let sql: SQL;
  let dir: ReturnType<typeof tempDir>;
  let proxy: RoundRobinProxy;
  let instances: SpawnedServer[];
  let fakeA: FakePlatformA;
  let fakeB: FakePlatformB;
  let fakeC: FakePlatformC;
  /** An admin key (created by the CLI on the shared database). */
  let admin: string;
  /** A key for signed telemetry and bulk, and the health details. */
  let probe: string;
  /** A lead's scanner token (X-Probe-Token). */
  let lead: string;
  /** The platform-A store the webhooks test connects. */
  let storeA: { id: string } | undefined;
  /** Leaders seen in each round of asking every live instance, the most at once. */
  const roles = { rounds: 0, mostLeaders: 0, sampling: true };
  let sampler: Promise<void>;

  const live = () => instances.filter((server) => server.proc.exitCode === null && server.proc.signalCode === null);
  const call = async (base: string, key: string, method: string, route: string, body?: unknown) => {
    const res = await fetch(`${base}${route}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', origin: proxy.url }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : res.json();
  };
  const details = async (server: SpawnedServer) => (await (await fetch(`${server.url}/healthz`, { headers: { authorization: `Bearer ${probe}` } })).json()).details;
  async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await Bun.sleep(50);
    }
  }

  beforeAll(async () => {
    [database, redis] = await Promise.all([createTestDatabase(), startRedis()]);
    sql = new SQL({ url: database.url, max: 2 });
    dir = tempDir('svc-instances-');
    fakeA = startFakePlatformA([{ domain: SHOP_A, accessToken: 'tok-many', clientSecret: SHOP_A_SECRET, currency: 'USD', products: [platformAProduct(1001)] }]);
    fakeB = startFakePlatformB({ storeHash: 'manyhash', accessToken: 'tok-many-b', currency: 'USD' });
    fakeB.products.set(42, platformBProduct(42));
    fakeC = startFakePlatformC(KEYS_C);
    for (let id = 7001; id < 7001 + PRODUCTS_C; id++) fakeC.products.set(id, { ...platformCProduct(id, fakeC.siteUrl, { name: `Set ${id}` }), slug: `set-${id}` });
    proxy = roundRobinProxy();
    const env = {
      SVC_DATABASE_URL: database.url,
      SVC_REDIS_URL: redis.url,
      // What every instance must share: the base URL (the proxy), the key credentials are encrypted with, the platforms' settings.
      SVC_BASE_URL: proxy.url,
      SVC_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      SVC_PLATFORM_A_API_BASE: fakeA.url,
      SVC_PLATFORM_B_API_BASE: fakeB.url,
      // The proxy is the one trusted hop: the client's address is the last X-Forwarded-For entry.
      SVC_TRUST_PROXY: '1',
      // The load below is one signed key's: its tier must not be what stops it.
      SVC_RATE_AGENT: '10000000',
      SVC_RATE_AUTHED: String(LEAD_PER_MINUTE),
      SVC_RATE_WEBHOOK: '10000000',
      // The killed instance's import is taken over when its lease ends: 10 s, not the default minute.
      SVC_JOB_LEASE_SECONDS: '10',
    };
    admin = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', dir.dir], { env: { SVC_DATABASE_URL: database.url } })).json.key;
    probe = (await runCli(['keys', 'create', '--scopes', 'probe:scan,dashboard:read,metrics:read', '--data-dir', dir.dir], { env: { SVC_DATABASE_URL: database.url } })).json.key;
    lead = (await runCli(['leads', 'create', '--email', 'many@example.com', '--data-dir', dir.dir], { env: { SVC_DATABASE_URL: database.url } })).json.apiToken;
    instances = await startInstances(3, dir.dir, env);
    proxy.upstreams.push(...instances);
    await until('one instance leads', async () => (await Promise.all(instances.map(details))).some((d) => d.instance.role === 'leader'), 15_000);
    sampler = (async () => {
      while (roles.sampling) {
        const answers = await Promise.all(live().map((server) => details(server).catch(() => null)));
        roles.mostLeaders = Math.max(roles.mostLeaders, answers.filter((d) => d?.instance.role === 'leader').length);
        roles.rounds++;
        await Bun.sleep(100);
      }
    })();
  }, 60_000);

  afterAll(async () => {
    roles.sampling = false;
    await sampler;
    for (const server of instances ?? []) await server.stop('SIGKILL');
    proxy?.stop();
    fakeA?.stop();
    fakeB?.stop();
    fakeC?.stop();
    await sql?.close();
    await redis?.remove();
    await database?.drop();
    dir?.remove();
  }, 30_000);

  test('each instance has its own id and reaches PostgreSQL and Redis', async () => {
    expect(new Set(instances.map(instanceId)).size).toBe(3);
    for (const server of instances) {
      expect(server.started).toMatchObject({ engine: 'postgres', rateLimits: expect.stringMatching(/^redis:\/\/127\.0\.0\.1:\d+\/0$/) });
      const seen = await details(server);
      expect(seen.instance.id).toBe(instanceId(server));
      expect(seen.rateLimits).toEqual({ backend: 'redis', redis: 'up' });
    }
  });

  test('a client limited to 10 a minute gets at most 10 in that minute across the instances', async () => {
    const answers: number[] = [];
    for (let n = 0; n < 3 * LEAD_PER_MINUTE; n++) {
      const res = await fetch(`${proxy.url}${TELEMETRY}`, tokenInit(lead, scanPayload({ url: `https://lead.example.com/p/${n}` }), { 'x-forwarded-for': '198.51.100.7' }));
      answers.push(res.status);
    }
    // Round robin: every instance answered a third of them, so each saw the client's whole minute.
    expect(answers).toEqual([...Array(LEAD_PER_MINUTE).fill(204), ...Array(2 * LEAD_PER_MINUTE).fill(429)]);
    // Another client is not held back by that one.
    expect((await fetch(`${proxy.url}${TELEMETRY}`, signedInit(probe, JSON.stringify(scanPayload()), Date.now()))).status).toBe(204);
  });

  test('a key revoked through one instance is refused by the others within 1 s', async () => {
    const [first, ...others] = live();
    const created = await call(first!.url, admin, 'POST', '/api/v1/admin/keys', { name: 'revoked across', scopes: ['dashboard:read'] });
    const dashboard = (server: SpawnedServer) => fetch(`${server.url}/api/v1/dashboard/scans?limit=1`, { headers: { authorization: `Bearer ${created.key}` } });
    // Used, and so remembered, by every other instance before the revocation.
    for (const server of others) for (let n = 0; n < 2; n++) expect((await dashboard(server)).status).toBe(200);
    await call(first!.url, admin, 'DELETE', `/api/v1/admin/keys/${created.id}`);
    await until('every other instance refuses the revoked key', async () => (await Promise.all(others.map(dashboard))).every((res) => res.status === 401), 1_000);
  });

  test('under round-robin load, SIGKILL of the instance running an import loses no acknowledged scan, and another instance finishes the import without duplicates', async () => {
    // Signed telemetry from 16 connections until told to stop; a 204 means committed.
    const acknowledged: string[] = [];
    let loading = true;
    let sequence = 0;
    const load = Array.from({ length: 16 }, async () => {
      while (loading) {
        const url = `https://load.example.com/p/${sequence++}`;
        const body = JSON.stringify(scanPayload({ url, hostname: 'load.example.com' }));
        const res = await fetch(`${proxy.url}${TELEMETRY}`, signedInit(probe, body, Date.now())).catch(() => null);
        if (res?.status === 204) acknowledged.push(url);
      }
    });

    // The store's import: killed is the instance that asks for its third page, while it waits for it.
    let victim: SpawnedServer | null = null;
    let lookup: Error | null = null;
    fakeC.pageHooks.beforeRequest = async (request, url) => {
      if (victim || lookup || !url.pathname.endsWith('/products') || url.searchParams.get('page') !== '3') return;
      victim = serverConnectedFrom(instances, peerOf(request)!.port, Number(url.port));
      if (!victim) throw (lookup = new Error('no instance holds the connection that asked for page 3'));
      await victim.stop('SIGKILL');
      return new Response(null, { status: 503 }); // to no one
    };
    let store: { id: string };
    try {
      store = await call(proxy.url, admin, 'POST', '/api/v1/admin/stores', { platform: 'platform-c', domain: 'many.example.com', credentials: { siteUrl: fakeC.siteUrl, consumerKey: KEYS_C.consumerKey, consumerSecret: KEYS_C.consumerSecret } });
      await until('the instance running the import is killed', () => {
        if (lookup) throw lookup;
        return victim !== null && victim.proc.signalCode === 'SIGKILL';
      }, 60_000);
      await Bun.sleep(1_000); // the load goes on against the two left
    } finally {
      // Whatever happened, the load ends with this test (it would go on through the next files).
      fakeC.pageHooks.beforeRequest = null;
      loading = false;
      await Promise.all(load);
    }
    expect(acknowledged.length).toBeGreaterThan(100);

    // Not one acknowledged scan is missing.
    const [{ held }] = await sql`SELECT count(*)::int AS held FROM scans WHERE url IN ${sql(acknowledged)}`;
    expect(held).toBe(acknowledged.length);

    // The import is taken over once the dead instance's lease ends, and completes: every product once.
    await until(
      'the import is finished by another instance',
      async () => (await call(proxy.url, admin, 'GET', `/api/v1/admin/stores/${store.id}`)).sync.state === 'idle',
      60_000,
    );
    const { sync } = await call(proxy.url, admin, 'GET', `/api/v1/admin/stores/${store.id}`);
    expect(sync).toMatchObject({ state: 'idle', error: null, kinds: { products: { state: 'idle', items: PRODUCTS_C } } });
    const [products] = await sql`SELECT count(*)::int AS n, count(DISTINCT product_id)::int AS ids FROM products WHERE store_id = ${store.id} AND removed_at IS NULL`;
    expect(products).toEqual({ n: PRODUCTS_C, ids: PRODUCTS_C });
    const jobs = await sql`SELECT status, count(*)::int AS n FROM jobs WHERE kind = 'catalog-sync.products' AND store_id = ${store.id} GROUP BY status`;
    expect([...jobs]).toEqual([{ status: 'done', n: 1 }]);
    // The pages before the kill were never read again: the one in flight (3) was, by its new runner.
    expect(fakeC.calls.productPages.filter((page) => page !== 3)).toEqual([1, 2, 4, 5, 6]);
  }, 240_000);

  test('bulk from two instances at once: the duplicates are skipped once, not twice', async () => {
    const now = Date.now();
    const scans = Array.from({ length: 50 }, (_, n) => scanPayload({ url: `https://bulk.example.com/p/${n}`, hostname: 'bulk.example.com', scannedAt: new Date(now - n * 1000).toISOString() }));
    const body = JSON.stringify({ scans });
    const answers = await Promise.all(live().map(async (server) => (await fetch(`${server.url}/api/v1/probe/scan-bulk`, signedInit(probe, body, now))).json()));
    expect(answers.reduce((sum, answer) => sum + answer.inserted, 0)).toBe(50);
    expect(answers.reduce((sum, answer) => sum + answer.skipped, 0)).toBe(50 * (answers.length - 1));
  });

  test('webhooks of all three platforms delivered round robin are each taken once', async () => {
    storeA = await call(proxy.url, admin, 'POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: SHOP_A, credentials: { clientSecret: SHOP_A_SECRET, accessToken: 'tok-many' } });
    const storeB = await call(proxy.url, admin, 'POST', '/api/v1/admin/stores', { platform: 'platform-b', domain: 'many-b.example.com', credentials: { storeHash: 'manyhash', accessToken: 'tok-many-b' } });
    const storeC = (await call(proxy.url, admin, 'GET', '/api/v1/admin/stores')).items.find((store: { platform: string }) => store.platform === 'platform-c');
    const statuses: number[] = [];
    for (let n = 0; n < 3; n++) {
      // Each a later edit of the product (a delivery older than what svc holds would be ignored).
      const editedAt = new Date(Date.now() + n * 1000).toISOString();
      statuses.push(...(await fakeA.deliver(SHOP_A, 'products/update', { ...platformAProduct(1001), title: `Tote ${n}`, updated_at: editedAt })).map((res) => res.status));
      // Distinct events (the platform's dedupe hash covers the event's second).
      const event = fakeB.event('store/product/updated', 42, Math.floor(Date.now() / 1000) + n);
      statuses.push(...(await Promise.all(fakeB.hooks.filter((hook) => hook.scope === event.scope).map((hook) => fakeB.send(hook.destination, event)))).map((res) => res.status));
      statuses.push(...(await fakeC.deliver('product.updated', { ...platformCProduct(7001, fakeC.siteUrl, { name: `Set ${n}`, modifiedGmt: editedAt.slice(0, 19) }), slug: 'set-7001' })).map((res) => res.status));
    }
    expect(statuses).toEqual(Array(9).fill(200));
    const logged = await sql`SELECT store_id, count(*)::int AS n FROM webhook_deliveries WHERE store_id IN ${sql([storeA!.id, storeB.id, storeC.id])} GROUP BY store_id`;
    expect(Object.fromEntries([...logged].map((row) => [row.store_id, row.n]))).toEqual({ [storeA!.id]: 3, [storeB.id]: 3, [storeC.id]: 3 });
    await until('the last delivery of each platform is applied', async () => {
      const a = await call(proxy.url, admin, 'GET', `/api/v1/admin/stores/${storeA!.id}/products/1001`).catch(() => null);
      const c = await call(proxy.url, admin, 'GET', `/api/v1/admin/stores/${storeC.id}/products/7001`).catch(() => null);
      return a?.title === 'Tote 2' && c?.title === 'Set 2';
    }, 15_000);
  }, 60_000);

  test('an FAQ approved through one instance is served by the public endpoint of the others within 1 s', async () => {
    expect(storeA).toBeDefined();
    const [first, ...others] = live();
    const widget = await call(first!.url, admin, 'POST', '/api/v1/admin/keys', { name: 'widget', scopes: ['products:read'], allowedDomains: ['www.many-shop.test'], storeId: storeA!.id });
    const faqs = (server: SpawnedServer) => fetch(`${server.url}/api/v1/public/faqs?type=product&ref=tote`, { headers: { 'X-Api-Key': widget.key, Origin: 'https://www.many-shop.test' } }).then((res) => res.json());
    // Answered, and so remembered, by the other instances while there is none.
    for (const server of others) expect((await faqs(server)).items).toEqual([]);
    await call(first!.url, admin, 'POST', '/api/v1/admin/faqs', { storeId: storeA!.id, entityType: 'product', entityRef: 'tote', question: 'Does it fit a laptop?', answer: 'Yes, a 15-inch one.', status: 'approved' });
    await until('every other instance serves the approved FAQ', async () => (await Promise.all(others.map(faqs))).every((answer) => answer.items?.[0]?.answer === 'Yes, a 15-inch one.'), 1_000);
  });

  test('a console session made on one instance is honoured by the others', async () => {
    const signedIn = await fetch(`${proxy.url}/api/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: proxy.url }, body: JSON.stringify({ key: admin }) });
    expect(signedIn.status).toBe(201);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    for (const server of live()) expect((await fetch(`${server.url}/api/v1/dashboard/scans?limit=1`, { headers: { cookie } })).status).toBe(200);
  });

  test('the rollups equal a recount of the scans: the roller never ran twice', async () => {
    await until('the backlog is folded', async () => (await details(live()[0]!)).rollupBacklog.scans === 0, 60_000);
    const [{ total }] = await sql`SELECT count(*)::int AS total FROM scans`;
    const cuboids = await sql`SELECT cuboid, sum(scans)::int AS scans FROM scan_rollups GROUP BY cuboid`;
    expect(cuboids.length).toBeGreaterThan(0);
    for (const cuboid of cuboids) expect({ cuboid: cuboid.cuboid, scans: cuboid.scans }).toEqual({ cuboid: cuboid.cuboid, scans: total });
    const byGrade = Object.fromEntries([...(await sql`SELECT grade, count(*)::int AS n FROM scans GROUP BY grade`)].map((row) => [row.grade, row.n]));
    const stats = await call(proxy.url, probe, 'GET', '/api/v1/dashboard/stats?groupBy=grade');
    expect(Object.fromEntries(stats.groups.map((group: { key: string; scans: number }) => [group.key, group.scans]))).toEqual(byGrade);
  }, 90_000);

  test('exactly one instance led at any time', async () => {
    await until('a leader among the instances left', async () => (await Promise.all(live().map(details))).filter((d) => d.instance.role === 'leader').length === 1, 15_000);
    expect(roles.rounds).toBeGreaterThan(10);
    expect(roles.mostLeaders).toBe(1);
  }, 30_000);
});
