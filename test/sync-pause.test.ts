import { afterEach, describe, expect, test } from 'bun:test';
import { MAX_SCHEDULE_BACKOFF_MS, scheduleWaitMs } from '../src/sync/service.ts';
import { platformAProduct } from './fakes/payloads.ts';
import { startFakePlatformA, type FakePlatformA } from './fakes/platform-a.ts';
import { bearer, closeAppAndFakes, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { createStore, rows } from './helpers/stores.ts';
import { getStore, runSync } from './helpers/sync.ts';

// A store's catalogue sync paused and resumed by the operator, and a sync that keeps failing backing
// off: a page's retries, the schedule after failed passes, and what Sync now does meanwhile.

const SHOP = 'pause.myplatform-a.com';
const CREDENTIALS = { clientSecret: 'pause-secret', accessToken: 'tok-pause' };
const HOUR = 3_600_000;

let fake: FakePlatformA;
let t: TestApp;
let offset = 0;
afterEach(() => closeAppAndFakes(t, [() => fake.stop()]));

/** A store of 30 products (three pages) whose connect import has run; `queue` sets how failed steps are retried. */
async function setup(queue: { baseDelayMs?: number; maxAttempts?: number } = { baseDelayMs: 1 }, apiTimeoutMs?: number) {
  offset = 0;
  fake = startFakePlatformA([{ domain: SHOP, ...CREDENTIALS, currency: 'EUR', products: Array.from({ length: 30 }, (_, i) => ({ ...platformAProduct(5001 + i), handle: `p-${i}` })) }]);
  Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
  t = await makeTestApp({ listen: true, clock: { now: () => Date.now() + offset }, env: { SVC_PLATFORM_A_API_BASE: fake.url, SVC_SYNC_INTERVAL_HOURS: '1' }, webhooks: { queue, apiTimeoutMs } });
  const storeId = (await createStore(t, { platform: 'platform-a', domain: SHOP, credentials: CREDENTIALS })).store.id as string;
  expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', kinds: { products: { items: 30 } } });
  fake.stats.productPages.length = 0;
  return storeId;
}

const post = async (path: string, body?: unknown) => {
  const res = await t.request(path, body === undefined ? { method: 'POST', headers: bearer(await t.keyWith('admin')) } : jsonRequest('POST', body, bearer(await t.keyWith('admin'))));
  return { status: res.status, body: (await res.json()) as any };
};
const unfinishedSyncJobs = async (storeId: string) => (await rows(t, 'jobs')).filter((job) => job.store_id === storeId && job.kind.startsWith('catalog-sync.') && (job.status === 'queued' || job.status === 'running'));

describe('pausing a store’s sync', () => {
  test('a paused store runs no scheduled or manual pass until resumed; the pause shows on the store record', async () => {
    const storeId = await setup();
    const paused = await post(`/api/v1/admin/stores/${storeId}/sync/pause`);
    expect(paused.status).toBe(200);
    const pausedAt: string = paused.body.sync.pausedAt;
    expect(Date.parse(pausedAt)).toBeGreaterThan(0);
    expect(paused.body.sync).toMatchObject({ state: 'paused', nextScheduledAt: null });
    expect((await getStore(t, storeId)).sync.pausedAt).toBe(pausedAt);
    // Pausing again keeps the first pause's time.
    expect((await post(`/api/v1/admin/stores/${storeId}/sync/pause`)).body.sync.pausedAt).toBe(pausedAt);

    const manual = await post(`/api/v1/admin/stores/${storeId}/sync`);
    expect([manual.status, manual.body.error]).toEqual([409, 'sync_paused']);
    expect(manual.body.detail).toContain(`/api/v1/admin/stores/${storeId}/sync/resume`);
    offset = 48 * HOUR;
    expect(await t.webhooks.sync.reconcileDue()).toBe(0);
    // New credentials begin a pass, which waits for the resume.
    expect((await t.request(`/api/v1/admin/stores/${storeId}/credentials`, jsonRequest('PUT', { credentials: CREDENTIALS }, bearer(await t.keyWith('admin'))))).status).toBe(200);
    await t.webhooks.runner.runDueJobs();
    expect(fake.stats.productPages).toEqual([]);
    expect(await unfinishedSyncJobs(storeId)).toEqual([]);
    expect((await getStore(t, storeId)).sync).toMatchObject({ state: 'paused', trigger: 'credentials', kinds: { products: { state: 'paused' } } });

    const resumed = await post(`/api/v1/admin/stores/${storeId}/sync/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.sync).toMatchObject({ state: 'running', pausedAt: null });
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'credentials', kinds: { products: { items: 30 } } });
    expect(fake.stats.productPages).toHaveLength(3);
  });

  test('pausing stops the step in flight and drops the queued sync jobs; resuming goes on from the page the pass had reached', async () => {
    // The call in flight would not time out during the test: only the pause can end it.
    const storeId = await setup(undefined, 120_000);
    let held = false;
    let release = () => {};
    fake.hooks.beforeProductsPage = ({ offset: at }) => {
      if (at !== 10 || held) return;
      held = true;
      return new Promise<Response>((resolve) => (release = () => resolve(new Response('{}', { status: 500 }))));
    };
    await post(`/api/v1/admin/stores/${storeId}/sync`);
    const drained = t.webhooks.runner.runDueJobs();
    while (!held) await Bun.sleep(5);
    // The pause answers while the platform still holds the page: the step in flight was stopped.
    const paused = await post(`/api/v1/admin/stores/${storeId}/sync/pause`);
    expect(paused.body.sync).toMatchObject({ state: 'paused', kinds: { products: { state: 'paused', pages: 1, items: 10 } } });
    expect(await unfinishedSyncJobs(storeId)).toEqual([]);
    // The runner is free again while the platform still holds the page.
    await drained;
    release();
    expect(t.logLines().filter((line) => line.msg === 'job failed')).toEqual([]);
    await t.webhooks.runner.runDueJobs();
    expect(fake.stats.productPages).toHaveLength(1);

    await post(`/api/v1/admin/stores/${storeId}/sync/resume`);
    expect(await runSync(t, storeId)).toMatchObject({ state: 'idle', trigger: 'manual', kinds: { products: { pages: 3, items: 30 } } });
    // Page one was read once; the pass went on with the page it was stopped at.
    expect(fake.stats.productPages.filter((after) => after === null)).toHaveLength(1);
    expect(fake.stats.productPages).toHaveLength(3);
  });

  test('404 for an unknown store', async () => {
    await setup();
    for (const action of ['pause', 'resume']) expect((await post(`/api/v1/admin/stores/st_unknown/sync/${action}`)).status).toBe(404);
  });
});

describe('a sync that keeps failing backs off', () => {
  test('a failing page waits for its next attempt, shown on the store; Sync now does not ask the platform sooner', async () => {
    const storeId = await setup({ baseDelayMs: 60_000, maxAttempts: 3 });
    fake.outage.status = 503;
    await post(`/api/v1/admin/stores/${storeId}/sync`);
    await t.webhooks.runner.runDueJobs();
    const waiting = (await getStore(t, storeId)).sync;
    expect(waiting).toMatchObject({ state: 'running', retry: { failedAttempts: 1, maxAttempts: 3 }, error: expect.stringContaining('answered 503') });
    const next = Date.parse(waiting.retry.nextAttemptAt) - t.clock.now();
    expect(next).toBeGreaterThan(25_000);
    expect(next).toBeLessThanOrEqual(60_000);

    const asked = fake.stats.queries;
    const again = await post(`/api/v1/admin/stores/${storeId}/sync`);
    expect(again.status).toBe(202);
    expect(again.body.sync.retry).toEqual(waiting.retry);
    await t.webhooks.runner.runDueJobs();
    expect(fake.stats.queries).toBe(asked);
  });

  test('after a failed pass the schedule waits twice its interval, four times after two; the store shows when', async () => {
    const storeId = await setup({ baseDelayMs: 1, maxAttempts: 1 });
    fake.outage.status = 503;
    offset = HOUR;
    expect(await t.webhooks.sync.reconcileDue()).toBe(1);
    const failed = await runSync(t, storeId);
    expect(failed).toMatchObject({ state: 'failed', failedPasses: 1, retry: null });
    // From the latest start of the pass's kinds (begun in one transaction, within a millisecond or two).
    const scheduledAfter = (sync: any) => Date.parse(sync.nextScheduledAt) - Date.parse(sync.startedAt);
    expect(scheduledAfter(failed) - 2 * HOUR).toBeWithin(0, 1_000);
    offset += HOUR + 60_000;
    expect(await t.webhooks.sync.reconcileDue()).toBe(0);
    offset += HOUR;
    expect(await t.webhooks.sync.reconcileDue()).toBe(1);
    expect(await runSync(t, storeId)).toMatchObject({ state: 'failed', failedPasses: 2 });
    expect(scheduledAfter((await getStore(t, storeId)).sync) - 4 * HOUR).toBeWithin(0, 1_000);

    // A pass that completes ends the streak: back to the interval.
    fake.outage.status = null;
    await post(`/api/v1/admin/stores/${storeId}/sync`);
    const completed = await runSync(t, storeId);
    expect(completed).toMatchObject({ state: 'idle', failedPasses: 0 });
    expect(scheduledAfter(completed) - HOUR).toBeWithin(0, 1_000);
  });

  test('the schedule’s wait doubles with each failed pass in a row, up to a week (or the interval, if longer)', () => {
    expect([0, 1, 2, 3].map((n) => scheduleWaitMs(HOUR, n) / HOUR)).toEqual([1, 2, 4, 8]);
    expect(scheduleWaitMs(24 * HOUR, 5)).toBe(MAX_SCHEDULE_BACKOFF_MS);
    expect(scheduleWaitMs(HOUR, 1000)).toBe(MAX_SCHEDULE_BACKOFF_MS);
    expect(scheduleWaitMs(30 * 24 * HOUR, 3)).toBe(30 * 24 * HOUR);
  });
});
