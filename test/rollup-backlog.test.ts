import { afterEach, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { createScanRetention } from '../src/scans/retention.ts';
import { bearer, makeTestApp, type TestApp } from './helpers/app.ts';
import { failWritesTo } from './helpers/failing-commits.ts';
import { scanPayload, signedInit, TELEMETRY } from './helpers/probe.ts';

// Issue 29 item 5: the rollup backlog (scans accepted but not yet folded into the dashboard rollups)
// is visible in /metrics, in /healthz details and to the dashboard, with a fixed clock. Scans arrive
// through the HTTP surface; the roller runs only when a test runs it (makeTestApp starts none).

const T0 = Date.parse('2026-03-01T12:00:00Z');
const DAY = 86_400_000;
let t: TestApp;
let clock: ReturnType<typeof fixedClock>;
afterEach(async () => {
  await t?.close();
});

async function start(): Promise<void> {
  clock = fixedClock(T0);
  t = await makeTestApp({ clock, env: { SVC_RATE_AGENT: '1000000' } });
}

let urls = 0;
const scan = (overrides: Record<string, unknown> = {}) => scanPayload({ url: `https://shop.example.com/p/${urls++}`, ...overrides });

/** `count` scans through bulk (1000 a request), received now. */
async function ingest(count: number, overrides: Record<string, unknown> = {}): Promise<void> {
  const key = await t.keyWith('probe:scan');
  for (let done = 0; done < count; done += 1000) {
    const scans = Array.from({ length: Math.min(1000, count - done) }, () => scan(overrides));
    const response = await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans }), clock.now()));
    expect(await response.json()).toMatchObject({ inserted: scans.length });
  }
}

/** The backlog's samples in a /metrics scrape, and the lines that announce them. */
async function scrapeBacklog() {
  const text = await (await t.request('/metrics', { headers: bearer(await t.keyWith('metrics:read')) })).text();
  const value = (name: string) => {
    const lines = text.split('\n').filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`));
    expect(lines).toHaveLength(1); // one global series: nothing labelled per client
    return Number(lines[0]!.slice(name.length + 1));
  };
  for (const name of ['svc_rollup_backlog_scans', 'svc_rollup_backlog_age_seconds']) {
    expect(text).toContain(`# TYPE ${name} gauge\n`);
    expect(text).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
  }
  return { scans: value('svc_rollup_backlog_scans'), ageSeconds: value('svc_rollup_backlog_age_seconds') };
}

const dashboardBacklog = async () => (await t.request('/api/v1/dashboard/rollup-backlog', { headers: bearer(await t.keyWith('dashboard:read')) })).json();

describe('the rollup backlog in /metrics: the scans above the watermark and the age of the oldest', () => {
  test('metrics report the backlog and the age of its oldest scan, and go to 0 after roll-up', async () => {
    await start();
    expect(await scrapeBacklog()).toEqual({ scans: 0, ageSeconds: 0 });

    await ingest(3);
    clock.advance(5_000);
    const agent = await t.keyWith('probe:scan');
    const one = JSON.stringify(scan());
    expect((await t.request(TELEMETRY, signedInit(agent, one, clock.now()))).status).toBe(204);
    clock.advance(7_500);
    expect(await scrapeBacklog()).toEqual({ scans: 4, ageSeconds: 12.5 });

    const rollups = t.rollups();
    expect(await rollups.runOnce()).toBe(4);
    expect(await scrapeBacklog()).toEqual({ scans: 0, ageSeconds: 0 });

    // Scans that arrive after a roll-up: the age is that of the oldest not rolled up, not of the oldest scan.
    clock.advance(60_000);
    await ingest(2);
    clock.advance(2_000);
    await ingest(1);
    clock.advance(1_250);
    expect(await scrapeBacklog()).toEqual({ scans: 3, ageSeconds: 3.25 });
    await rollups.runOnce();
    expect(await scrapeBacklog()).toEqual({ scans: 0, ageSeconds: 0 });
  });

  test('a clock set back before the oldest scan reports age 0, not a negative age', async () => {
    await start();
    await ingest(1);
    clock.set(T0 - 60_000);
    expect(await scrapeBacklog()).toEqual({ scans: 1, ageSeconds: 0 });
  });

  test('the backlog counts from its first remaining scan: scans deleted at its front do not count; deleted within it, it is over by them (never under) until the roller passes them (PostgreSQL counts them exactly)', async () => {
    await start();
    const expired = { scannedAt: new Date(T0 - 100 * DAY).toISOString() };
    // A backfill of expired scans, then fresh ones: retention deletes the expired ones before the roller ran.
    await ingest(2, expired);
    await ingest(3);
    const rollups = t.rollups();
    const retention = createScanRetention(clock, 30, rollups);
    expect(await retention.runOnce()).toBe(2);
    expect((await scrapeBacklog()).scans).toBe(3);

    // Expired scans between fresh ones: 2 remain of 4. SQLite's count says 4 (it spans the rowids
    // from the first to the last, and the hole in the middle counts); PostgreSQL counts the rows.
    await rollups.runOnce();
    await ingest(1);
    await ingest(2, expired);
    await ingest(1);
    expect(await retention.runOnce()).toBe(2);
    expect((await scrapeBacklog()).scans).toBe(t.config.postgres ? 2 : 4);
    expect(await rollups.runOnce()).toBe(2);
    expect((await scrapeBacklog()).scans).toBe(0);
  });
});

describe('/healthz details: the same figures, for the key /metrics takes', () => {
  test('healthz reports the backlog and its age to a metrics:read or admin key, and goes to 0 after roll-up; without a key no details', async () => {
    await start();
    await ingest(2);
    clock.advance(4_000);
    const anonymous = await (await t.request('/healthz')).json();
    expect(anonymous.status).toBe('ok');
    expect(anonymous).not.toHaveProperty('details');

    // Without --redis-url the rate limits are each instance's own (test/ratelimit-redis.test.ts has the other backend).
    // The database's own figures: SQLite's file and WAL, or PostgreSQL's pool.
    const jobs = { queued: 0, running: 0, done: 0, dead: 0 };
    const database = t.config.postgres
      ? { engine: 'postgres', jobs, pool: { max: expect.any(Number), open: expect.any(Number), busy: expect.any(Number) } }
      : { engine: 'sqlite', jobs, databaseBytes: expect.any(Number), walBytes: expect.any(Number) };
    const expected = { instance: { id: expect.any(String), role: 'leader' }, database, rollupBacklog: { scans: 2, oldestReceivedAt: new Date(T0).toISOString(), ageSeconds: 4, slowsDashboard: false }, rateLimits: { backend: 'in-process' } };
    for (const key of [await t.keyWith('metrics:read'), await t.keyWith('admin')]) {
      const answer = await t.request('/healthz', { headers: bearer(key) });
      expect(answer.status).toBe(200);
      expect((await answer.json()).details).toEqual(expected);
    }

    await t.rollups().runOnce();
    const rolled = await (await t.request('/healthz', { headers: bearer(await t.keyWith('metrics:read')) })).json();
    expect(rolled.details).toEqual({ instance: { id: expect.any(String), role: 'leader' }, database, rollupBacklog: { scans: 0, oldestReceivedAt: null, ageSeconds: 0, slowsDashboard: false }, rateLimits: { backend: 'in-process' } });
  });

  test('healthz refuses a key that is not valid (401) or lacks metrics:read (403), as /metrics does, rather than hide the details', async () => {
    await start();
    const unknown = await t.request('/healthz', { headers: bearer(`sk_live_${'x'.repeat(43)}`) });
    expect(unknown.status).toBe(401);
    expect((await unknown.json()).error).toBe('invalid_api_key');
    const dashboard = await t.request('/healthz', { headers: bearer(await t.keyWith('dashboard:read')) });
    expect(dashboard.status).toBe(403);
    expect((await dashboard.json()).error).toBe('insufficient_scope');
  });

  test('healthz details come with a degraded answer too (reads still work)', async () => {
    await start();
    await ingest(1);
    const key = await t.keyWith('metrics:read');
    await failWritesTo(t, 'health_probe', 'database or disk is full');
    const degraded = await t.request('/healthz', { headers: bearer(key) });
    expect(degraded.status).toBe(503);
    expect(await degraded.json()).toMatchObject({ status: 'degraded', error: 'database_not_writable', details: { rollupBacklog: { scans: 1 } } });
  });
});

describe('the dashboard: the backlog slows it past 10,000 scans or 10 s', () => {
  test('slowsDashboard once the oldest scan has waited more than 10 s, not at 10 s', async () => {
    await start();
    await ingest(5);
    clock.advance(10_000);
    expect(await dashboardBacklog()).toEqual({ scans: 5, oldestReceivedAt: new Date(T0).toISOString(), ageSeconds: 10, slowsDashboard: false });
    clock.advance(1);
    expect(await dashboardBacklog()).toMatchObject({ scans: 5, ageSeconds: 10.001, slowsDashboard: true });
    await t.rollups().runOnce();
    expect(await dashboardBacklog()).toEqual({ scans: 0, oldestReceivedAt: null, ageSeconds: 0, slowsDashboard: false });
  });

  test('slowsDashboard past 10,000 scans however new, not at 10,000', async () => {
    await start();
    await ingest(10_000);
    expect(await dashboardBacklog()).toMatchObject({ scans: 10_000, ageSeconds: 0, slowsDashboard: false });
    await ingest(1);
    expect(await dashboardBacklog()).toMatchObject({ scans: 10_001, ageSeconds: 0, slowsDashboard: true });
  }, 30_000);

  test('the backlog route is for dashboard:read (or admin): 401 without a key, 403 for another scope', async () => {
    await start();
    expect((await t.request('/api/v1/dashboard/rollup-backlog')).status).toBe(401);
    expect((await t.request('/api/v1/dashboard/rollup-backlog', { headers: bearer(await t.keyWith('metrics:read')) })).status).toBe(403);
    expect((await t.request('/api/v1/dashboard/rollup-backlog', { headers: bearer(await t.keyWith('admin')) })).status).toBe(200);
  });
});
