// The signal GETs over a storage that answers with promises, as PostgreSQL's does (SQLite's signal
// reads answer at once: test/hot-paths.test.ts): a cached signal still answers without a promise,
// one read from storage answers once storage has, the same bytes and validators, refusals as
// their JSON errors, and a storage failure as the app answers any unexpected error.
import { afterEach, describe, expect, test } from 'bun:test';
import type { Storage } from '../src/storage/index.ts';
import type { DiscoveryRecords, SignalRecords } from '../src/storage/signals.ts';
import { promised } from '../src/storage/sqlite/promised.ts';
import type { Synchronous } from '../src/storage/synchronous.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { enrich, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';

const SHOP = 'late.myplatform-a.com';
let t: TestApp | null = null;
afterEach(() => t?.close());

/** When set, every signal and discovery read fails as a lost connection would. */
let broken: Error | null = null;
const failing = <Records extends object>(records: Records): Records =>
  Object.fromEntries(
    Object.entries(records).map(([name, method]) => [name, (...args: unknown[]) => (broken ? Promise.reject(broken) : (method as (...a: unknown[]) => unknown)(...args))]),
  ) as Records;

/** SQLite's storage with its signal reads answered as PostgreSQL's are: with a promise. */
const answeringLate = (sqlite: Storage): Storage => ({
  ...sqlite,
  hot: {
    ...sqlite.hot,
    signals: failing(promised<SignalRecords>(sqlite.hot.signals as Synchronous<SignalRecords>)),
    discovery: failing(promised<DiscoveryRecords>(sqlite.hot.discovery as Synchronous<DiscoveryRecords>)),
  },
});

async function lateApp(): Promise<{ app: TestApp; storeId: string }> {
  broken = null;
  const app = await makeTestApp({ storage: answeringLate });
  t = app;
  const storeId = await seedStore(app, 'platform-a', SHOP);
  await syncProduct(app, storeId, realisticProduct('platform-a', 4242, SHOP));
  expect((await enrich(app, storeId, '4242')).status).toBe(200);
  // On PostgreSQL the seeding's own notifications would empty the caches the tests fill.
  await app.changesHeard();
  return { app, storeId };
}

const fetchNow = (app: TestApp, path: string, headers: Record<string, string> = {}) => app.app.fetch(new Request(`http://localhost${path}`, { headers }));

describe('signal GETs over a storage that answers late', () => {
  test('a signal read from storage is answered once storage has; a cached one without a promise, with the same bytes and validators', async () => {
    const { app, storeId } = await lateApp();
    const paths = ['/api/v1/platform-a/products/4242.md', `/api/v1/platform-a/stores/${storeId}/products/4242.jsonld`, `/api/v1/platform-a/stores/${storeId}/llms.txt`, `/api/v1/platform-a/stores/${storeId}/sitemap.xml`, '/robots.txt'];
    for (const path of paths) {
      const late = fetchNow(app, path);
      expect(late).toBeInstanceOf(Promise);
      const first = await late;
      expect(first.status).toBe(200);
      const cached = fetchNow(app, path);
      expect(cached instanceof Promise ? 'a promise' : 'a response').toBe('a response');
      const again = await cached;
      expect([again.status, again.headers.get('etag'), again.headers.get('content-type')]).toEqual([200, first.headers.get('etag'), first.headers.get('content-type')]);
      expect(await again.text()).toBe(await first.text());
      expect((await fetchNow(app, path, { 'if-none-match': first.headers.get('etag')! })).status).toBe(304);
    }
    expect(await (await app.request('/api/v1/platform-a/products/4242.md')).text()).toContain('# ');
  });

  test('a refusal read from storage is answered as its JSON error (404 unknown product and store, 410 withdrawn)', async () => {
    const { app, storeId } = await lateApp();
    const unknown = await app.request('/api/v1/platform-a/products/999.md');
    expect([unknown.status, ((await unknown.json()) as { error: string }).error]).toEqual([404, 'not_found']);
    const noStore = await app.request('/api/v1/platform-a/stores/nope/llms.txt');
    expect([noStore.status, ((await noStore.json()) as { error: string }).error]).toEqual([404, 'not_found']);
    await app.webhooks.stores.deactivate(storeId); // app/uninstalled
    const withdrawn = await app.request('/api/v1/platform-a/products/4242.md');
    expect([withdrawn.status, ((await withdrawn.json()) as { error: string }).error]).toEqual([410, 'signals_withdrawn']);
  });

  test('a storage failure while a signal is read is answered 500 internal_error and logged, for every signal GET', async () => {
    const { app, storeId } = await lateApp();
    broken = new Error('connection to the database lost');
    for (const path of ['/api/v1/platform-a/products/4242.md', `/api/v1/platform-a/stores/${storeId}/products/4242.llm`, `/api/v1/platform-a/stores/${storeId}/llms.txt`, '/robots.txt']) {
      const res = await app.request(path);
      expect([path, res.status, ((await res.json()) as { error: string }).error]).toEqual([path, 500, 'internal_error']);
    }
    expect(app.logLines().filter((line) => line.msg === 'unhandled error')).toHaveLength(4);
  });
});
