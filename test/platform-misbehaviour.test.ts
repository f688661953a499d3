import { afterEach, describe, expect, test } from 'bun:test';
import { startFakePlatformA, type FakePlatformA } from './fakes/platform-a.ts';
import { startFakePlatformB, type FakePlatformB } from './fakes/platform-b.ts';
import { startFakePlatformC, type FakePlatformC } from './fakes/platform-c.ts';
import { platformAProduct, platformBCategory, platformCProduct } from './fakes/payloads.ts';
import { closeAppAndFakes, makeTestApp, type TestApp, type TestAppOptions } from './helpers/app.ts';
import { createStore, rows } from './helpers/stores.ts';
import { getStore, runSync } from './helpers/sync.ts';

// Remote platform APIs are untrusted input (issue 27, item 3): every call is bounded in size, item
// count, retries and time, whatever the platform does. Each test plays one misbehaving platform and
// asserts what svc did about it (calls bounded, the pass failed with its reason, the admin call
// answered, the other store's sync ran, no call after a stop), never how long it took.

const SHOP = 'misbehaving.myplatform-a.com';
const OTHER_SHOP = 'wellbehaved.myplatform-a.com';
const CREDENTIALS = { clientSecret: 'misbehaving-secret', accessToken: 'tok-misbehaving' };
const OTHER_CREDENTIALS = { clientSecret: 'wellbehaved-secret', accessToken: 'tok-wellbehaved' };
const C_KEYS = { consumerKey: 'ck_mis', consumerSecret: 'cs_mis' };
const MiB = 1024 * 1024;

let t: TestApp | null = null;
const stops: (() => void)[] = [];
afterEach(async () => {
  await closeAppAndFakes(t, stops);
  t = null;
});

async function app(options: TestAppOptions): Promise<TestApp> {
  t = await makeTestApp({ listen: true, ...options, webhooks: { queue: { baseDelayMs: 1, maxAttempts: 3 }, retry: { baseMs: 5, maxMs: 20, attempts: 4 }, ...options.webhooks } });
  return t;
}

function fakeA(): FakePlatformA {
  const fake = startFakePlatformA([
    { domain: SHOP, ...CREDENTIALS, currency: 'EUR' },
    { domain: OTHER_SHOP, ...OTHER_CREDENTIALS, currency: 'EUR', products: Array.from({ length: 20 }, (_, i) => ({ ...platformAProduct(4001 + i), handle: `other-${i}` })) },
  ]);
  Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
  stops.push(fake.stop);
  return fake;
}

function fakeC(): FakePlatformC {
  const fake = startFakePlatformC({ ...C_KEYS, currency: 'EUR' });
  stops.push(fake.stop);
  return fake;
}

/** Polls `read` until `done` holds (the test's own timeout bounds it). */
async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await Bun.sleep(10);
  }
}

const connectA = async (shop = SHOP, credentials = CREDENTIALS) => {
  const created = await createStore(t!, { platform: 'platform-a', domain: shop, currency: 'EUR', credentials });
  expect(created.status).toBe(201);
  return created.store.id as string;
};
const connectC = async (fake: FakePlatformC, domain = 'misbehaving.example.com') => {
  const created = await createStore(t!, { platform: 'platform-c', domain, currency: 'EUR', credentials: { siteUrl: fake.siteUrl, ...C_KEYS } });
  expect(created.status).toBe(201);
  return created.store.id as string;
};

/** A GraphQL answer refusing the query as throttled, with no cost information at all. */
const throttledWithoutCost = () => Response.json({ errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }] });

/** A minimal GraphQL product node with an id and no variants. */
const productNode = (id: number) => ({
  id: `gid://platform-a/Product/${id}`,
  handle: `p-${id}`,
  title: `Product ${id}`,
  descriptionHtml: '',
  vendor: 'V',
  updatedAt: '2026-01-01T00:00:00Z',
  options: [],
  images: { nodes: [] },
  variants: { pageInfo: { hasNextPage: false, endCursor: null }, nodes: [] },
});
const productsPage = (ids: number[], hasNextPage: boolean, endCursor: string) => Response.json({ data: { products: { pageInfo: { hasNextPage, endCursor }, nodes: ids.map(productNode) } } });

describe('a platform that throttles everything', () => {
  test('always THROTTLED with no cost information: POST /api/v1/admin/stores answers at once; registration retries with backoff a bounded number of times and fails saying why', async () => {
    const fake = fakeA();
    fake.hooks.beforeQuery = throttledWithoutCost;
    await app({ env: { SVC_PLATFORM_A_API_BASE: fake.url }, webhooks: { connectAnswerMs: 20, retry: { baseMs: 50, maxMs: 200, attempts: 4 } } });
    const created = await createStore(t!, { platform: 'platform-a', domain: SHOP, currency: 'EUR', credentials: CREDENTIALS });
    // Answered while the registration still runs: its state is on the store record.
    expect(created.status).toBe(201);
    expect(created.store.hooks).toMatchObject({ status: 'registering', error: null });
    const store = await until(() => getStore(t!, created.store.id), (s) => s.hooks.status !== 'registering');
    expect(store.hooks).toMatchObject({ status: 'failed', error: expect.stringContaining('throttled 4 times in a row') });
    // Four refusals of the hooks list, then it gave up.
    expect(fake.stats.queries).toBe(4);
  });

  test('always THROTTLED with no cost information: each sync kind is asked again with backoff up to the job\'s attempts, then the pass fails with the reason', async () => {
    const fake = fakeA();
    await app({ env: { SVC_PLATFORM_A_API_BASE: fake.url } });
    const storeId = await connectA();
    fake.hooks.beforeQuery = throttledWithoutCost;
    const queriesBefore = fake.stats.queries;
    const sync = await runSync(t!, storeId);
    expect(sync).toMatchObject({ state: 'failed', kinds: { products: { state: 'failed' }, categories: { state: 'failed' }, pages: { state: 'failed' } } });
    expect(sync.error).toContain('refused 3 calls in a row for its rate limit');
    // Three kinds, three attempts each (the queue's maxAttempts in this suite): no more.
    expect(fake.stats.queries - queriesBefore).toBe(9);
    await t!.webhooks.runner.runDueJobs();
    expect(fake.stats.queries - queriesBefore).toBe(9);
  });

  test('platform B: a 429 without quota headers is asked again with backoff, never at once, and the pass fails after the job\'s attempts', async () => {
    const fake: FakePlatformB = startFakePlatformB({ storeHash: 'throttled', accessToken: 'tok-b', currency: 'EUR' });
    stops.push(fake.stop);
    await app({ env: { SVC_PLATFORM_B_API_BASE: fake.url } });
    const created = await createStore(t!, { platform: 'platform-b', domain: 'b.example.com', credentials: { storeHash: 'throttled', accessToken: 'tok-b' } });
    Object.assign(fake.rateLimit, { quota: 0, sendHeaders: false });
    const sync = await runSync(t!, created.store.id);
    expect(sync.state).toBe('failed');
    expect(sync.kinds.products.error).toContain('refused 3 calls in a row for its rate limit');
    expect(fake.calls.overQuota).toBe(9);
  });
});

describe('what a platform says about waiting is honoured, within bounds', () => {
  /** How long until each sync job of the store is due again, as scheduled in the queue. */
  const dueIn = async (storeId: string) =>
    ((await t!.query("SELECT run_at FROM jobs WHERE store_id = ? AND kind LIKE 'catalog-sync.%'", storeId)) as { run_at: number }[]).map((job) => job.run_at - Date.now());

  test('a 429 that says nothing of when (no quota headers) is asked again only after a backoff, never at once', async () => {
    const fake = startFakePlatformB({ storeHash: 'silent', accessToken: 'tok-b', currency: 'EUR' });
    stops.push(fake.stop);
    await app({ env: { SVC_PLATFORM_B_API_BASE: fake.url }, webhooks: { retry: { baseMs: 60_000, maxMs: 600_000, attempts: 4 } } });
    const created = await createStore(t!, { platform: 'platform-b', domain: 'b.example.com', credentials: { storeHash: 'silent', accessToken: 'tok-b' } });
    Object.assign(fake.rateLimit, { quota: 0, sendHeaders: false });
    await t!.webhooks.runner.runDueJobs();
    expect(fake.calls.overQuota).toBe(3);
    // The first backoff: between half and all of the 60 s base, for each kind.
    const waits = await dueIn(created.store.id);
    expect(waits).toHaveLength(3);
    for (const wait of waits) expect(wait).toBeGreaterThan(25_000);
  });

  test('a Retry-After far in the future is read as 15 minutes at most', async () => {
    const fake = fakeC();
    fake.throttle.next = 3;
    fake.throttle.retryAfterSeconds = 10 * 365 * 86_400;
    await app({});
    const storeId = await connectC(fake);
    await t!.webhooks.runner.runDueJobs();
    const waits = await dueIn(storeId);
    expect(waits.length).toBeGreaterThan(0);
    for (const wait of waits) expect(wait).toBeLessThanOrEqual(15 * 60_000);
    expect(Math.max(...waits)).toBeGreaterThan(14 * 60_000);
  });
});

describe('pages that do not advance', () => {
  test('variant pages always empty with hasNextPage true: the pass fails at once saying so, and another store\'s sync runs to its end', async () => {
    const fake = fakeA();
    const big = platformAProduct(3001);
    big.variants = Array.from({ length: 30 }, (_, n) => ({ ...big.variants[0]!, id: 30010 + n, title: `Size ${n}`, option1: `Size ${n}`, image_id: null }));
    big.options = [{ ...big.options[0]!, name: 'Size', values: big.variants.map((v) => v.option1!) }];
    fake.productsOf(SHOP).push(big);
    let variantQueries = 0;
    fake.hooks.beforeQuery = ({ shop, query }) => {
      if (shop !== SHOP || !query.includes('SyncVariants')) return;
      variantQueries++;
      return Response.json({ data: { product: { variants: { pageInfo: { hasNextPage: true, endCursor: `c${variantQueries}` }, nodes: [] } } } });
    };
    await app({ env: { SVC_PLATFORM_A_API_BASE: fake.url } });
    const storeId = await connectA();
    const otherId = await connectA(OTHER_SHOP, OTHER_CREDENTIALS);
    expect(await runSync(t!, otherId)).toMatchObject({ state: 'idle', error: null, kinds: { products: { items: 20 } } });
    const sync = await runSync(t!, storeId);
    expect(sync.kinds.products).toMatchObject({ state: 'failed', error: expect.stringContaining('does not advance') });
    // One empty page was enough: no retry of a broken answer.
    expect(variantQueries).toBe(1);
    expect((await rows(t!, 'products')).filter((p) => p.store_id === storeId)).toHaveLength(0);
  });

  test('a products page that says more follow but has no items, or gives the same cursor again, or comes back to ids already read: the pass fails at once', async () => {
    const cases: [string, (after: string | null) => Response, string][] = [
      ['an empty page with hasNextPage', () => productsPage([], true, 'next'), 'page without items that says more follow'],
      ['the same cursor again', (after) => productsPage([after === null ? 1 : 2], true, 'same'), 'same next-page cursor again'],
      ['a new cursor over the same ids', (after) => productsPage([1, 2, 3], true, `${after ?? ''}x`), 'not beyond the page before'],
    ];
    for (const [name, answer, reason] of cases) {
      const fake = fakeA();
      let pages = 0;
      fake.hooks.beforeQuery = ({ query, variables }) => {
        if (!query.includes('products(')) return;
        pages++;
        return answer(variables?.after ?? null);
      };
      await app({ env: { SVC_PLATFORM_A_API_BASE: fake.url } });
      const storeId = await connectA();
      const sync = await runSync(t!, storeId);
      expect(sync.kinds.products, name).toMatchObject({ state: 'failed', error: expect.stringContaining(reason) });
      expect(pages, name).toBeLessThanOrEqual(2);
      await t!.close();
      t = null;
    }
  });

  test('platform B categories (not in id order): the page before answered again ends the pass', async () => {
    const fake = startFakePlatformB({ storeHash: 'loops', accessToken: 'tok-b', currency: 'EUR' });
    stops.push(fake.stop);
    const same = [platformBCategory(11), platformBCategory(12)];
    let pages = 0;
    fake.pageHooks.beforeEntriesPage = (kind) => {
      if (kind !== 'category') return;
      pages++;
      return Response.json({ data: same, meta: { pagination: { total: 2000, count: 2, per_page: 100, current_page: pages, total_pages: 1000 } } });
    };
    await app({ env: { SVC_PLATFORM_B_API_BASE: fake.url } });
    const created = await createStore(t!, { platform: 'platform-b', domain: 'b.example.com', credentials: { storeHash: 'loops', accessToken: 'tok-b' } });
    const sync = await runSync(t!, created.store.id);
    expect(sync.kinds.categories).toMatchObject({ state: 'failed', error: expect.stringContaining('answered the page before again') });
    expect(pages).toBe(2);
  });
});

describe('answers larger than asked for', () => {
  test('one page of far more items than asked for (250 products for 100): the pass fails at once, nothing of the page is written', async () => {
    const fake = fakeC();
    let asked = 0;
    fake.pageHooks.beforeProductsPage = () => {
      asked++;
      return Response.json(
        Array.from({ length: 250 }, (_, i) => platformCProduct(8001 + i, fake.siteUrl)),
        { headers: { 'x-wp-totalpages': '1' } },
      );
    };
    await app({});
    const storeId = await connectC(fake);
    const sync = await runSync(t!, storeId);
    expect(sync.kinds.products).toMatchObject({ state: 'failed', error: expect.stringContaining('answered 250 items, more than the 100 asked for') });
    expect(asked).toBe(1);
    expect((await rows(t!, 'products'))).toHaveLength(0);
  });

  test('a huge body, streamed: svc stops reading past 8 MiB (it never holds the whole body) and the pass fails saying so', async () => {
    const fake = fakeC();
    let produced = 0;
    let asked = 0;
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    fake.pageHooks.beforeProductsPage = () => {
      asked++;
      // A body of up to 600 MiB, produced only as svc reads it.
      return new Response(
        new ReadableStream({
          pull(controller) {
            produced += chunk.byteLength;
            if (produced > 600 * MiB) controller.close();
            else controller.enqueue(chunk);
          },
        }),
        { headers: { 'content-type': 'application/json' } },
      );
    };
    await app({});
    const storeId = await connectC(fake);
    const sync = await runSync(t!, storeId);
    expect(sync.kinds.products).toMatchObject({ state: 'failed', error: expect.stringContaining(`a body of more than ${8 * MiB} bytes`) });
    expect(asked).toBe(1);
    // What was produced before svc cancelled: 8 MiB and what the sockets buffered, far from the whole.
    expect(produced).toBeLessThan(32 * MiB);
  });

  test('a huge body, declared: an answer whose Content-Length is over 8 MiB is refused before any of it is read', async () => {
    // A raw HTTP server that declares 600 MiB and sends one byte of it.
    let requests = 0;
    const server = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data(socket) {
          requests++;
          socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${600 * MiB}\r\n\r\n[`);
        },
      },
    });
    stops.push(() => server.stop(true));
    // Far longer than the refusal takes: waiting for the body would end in a timeout instead.
    await app({ webhooks: { apiTimeoutMs: 5_000 } });
    const created = await createStore(t!, { platform: 'platform-c', domain: 'huge.example.com', currency: 'EUR', credentials: { siteUrl: `http://127.0.0.1:${server.port}`, ...C_KEYS } });
    expect(created.store.hooks).toMatchObject({ status: 'failed', error: expect.stringContaining(`answered a body of more than ${8 * MiB} bytes`) });
    expect(requests).toBe(1);
  });
});

describe('answers that never end', () => {
  /** A products page whose body trickles a byte at a time and never ends. */
  function trickle(fake: FakePlatformC, started: { count: number; cancelled: number }) {
    fake.pageHooks.beforeProductsPage = () => {
      started.count++;
      let timer: ReturnType<typeof setInterval> | undefined;
      return new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('['));
            timer = setInterval(() => controller.enqueue(new TextEncoder().encode(' ')), 20);
          },
          cancel() {
            clearInterval(timer);
            started.cancelled++;
          },
        }),
        { headers: { 'content-type': 'application/json', 'x-wp-totalpages': '1' } },
      );
    };
  }

  test('a body that trickles: the call times out, is retried a bounded number of times, the pass fails saying why, and another store\'s sync runs to its end', async () => {
    const slow = fakeC();
    const good = fakeC();
    for (let i = 0; i < 30; i++) good.products.set(6001 + i, platformCProduct(6001 + i, good.siteUrl));
    const started = { count: 0, cancelled: 0 };
    trickle(slow, started);
    await app({ webhooks: { apiTimeoutMs: 300 } });
    const storeId = await connectC(slow);
    const otherId = await connectC(good, 'good.example.com');
    const [sync, other] = await Promise.all([runSync(t!, storeId), runSync(t!, otherId)]);
    expect(other).toMatchObject({ state: 'idle', error: null, kinds: { products: { items: 30 } } });
    expect(sync.kinds.products).toMatchObject({ state: 'failed', error: expect.stringContaining('timed out after 300 ms') });
    expect(started.count).toBe(3);
  });

  test('each job has a time budget: a step that outlasts it is stopped (its call aborted) and counted as a failed attempt', async () => {
    const slow = fakeC();
    const started = { count: 0, cancelled: 0 };
    trickle(slow, started);
    await app({ webhooks: { apiTimeoutMs: 60_000, jobBudgetMs: 300 } });
    const storeId = await connectC(slow);
    const sync = await runSync(t!, storeId);
    expect(sync.kinds.products).toMatchObject({ state: 'failed', error: expect.stringContaining("the job's time budget of 300 ms ran out") });
    expect(started.count).toBe(3);
    await until(() => started.cancelled, (n) => n === 3);
  });

  test('stopping the runner (SIGTERM) aborts the call in flight and starts none after it; the pass is left to the next start', async () => {
    const slow = fakeC();
    const started = { count: 0, cancelled: 0 };
    trickle(slow, started);
    await app({ webhooks: { apiTimeoutMs: 60_000, jobBudgetMs: 60_000 } });
    const storeId = await connectC(slow);
    t!.webhooks.runner.start(10);
    await until(() => started.count, (n) => n === 1);
    await t!.webhooks.runner.stop();
    // The fake sees the cancellation a moment after svc aborted the call.
    await until(() => started.cancelled, (n) => n === 1);
    const requests = slow.calls.requests;
    await Bun.sleep(100);
    expect(slow.calls.requests).toBe(requests);
    // Not failed: still running, as the next start takes it up.
    expect((await t!.webhooks.sync.view(storeId)).kinds.products).toMatchObject({ state: 'running', error: null });
    expect((await rows(t!, 'jobs')).find((job) => job.kind === 'catalog-sync.products')).toMatchObject({ status: 'running', last_error: null });
  });
});
