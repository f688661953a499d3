import { afterEach, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { bearer, makeTestApp, type TestApp } from './helpers/app.ts';
import { scanPayload, signedInit } from './helpers/probe.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const HOUR = 3_600_000;
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

interface Item {
  id: string;
  hostname: string;
  scannedAt: string;
  country: string | null;
  grade: string;
  pageType: string | null;
  platform: { platform: string } | null;
}
interface Page {
  items: Item[];
  nextCursor: string | null;
}

let n = 0;
/** A scan `hoursAgo` before NOW with overrides; every call gets its own url. */
const scan = (hoursAgo: number, overrides: Record<string, unknown> = {}) =>
  scanPayload({ url: `https://shop.example.com/p/${n++}`, scannedAt: new Date(NOW - hoursAgo * HOUR).toISOString(), ...overrides });

async function seed(scans: Record<string, unknown>[]) {
  const key = await t.keyWith('probe:scan');
  const response = await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans }), t.clock.now()));
  expect(response.status).toBe(200);
  expect(((await response.json()) as { inserted: number }).inserted).toBe(scans.length);
}

async function getJson<T>(path: string, key: string): Promise<T> {
  const response = await t.request(path, { headers: bearer(key) });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

async function setup() {
  t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_AGENT: '100000' } });
  return await t.keyWith('dashboard:read');
}

describe('dashboard scopes (DESIGN §5)', () => {
  test('401 without a key, 403 with a probe:scan-only key, 200 with dashboard:read or admin', async () => {
    const key = await setup();
    for (const path of ['/api/v1/dashboard/scans', '/api/v1/dashboard/stats?groupBy=day', '/api/v1/dashboard/scans/x']) {
      expect((await t.request(path)).status).toBe(401);
      expect((await t.request(path, { headers: bearer(await t.keyWith('probe:scan')) })).status).toBe(403);
    }
    expect((await t.request('/api/v1/dashboard/scans', { headers: bearer(key) })).status).toBe(200);
    expect((await t.request('/api/v1/dashboard/scans', { headers: bearer(await t.keyWith('admin')) })).status).toBe(200);
  });
});

describe('GET /api/v1/dashboard/hostnames (top hostnames)', () => {
  test('the hostnames with the most scans, ties by name, with their latest scan; filters and limit apply', async () => {
    const key = await setup();
    await seed([
      scan(1, { hostname: 'b.example.com' }),
      scan(2, { hostname: 'b.example.com', country: 'DE' }),
      scan(3, { hostname: 'a.example.com' }),
      scan(4, { hostname: 'a.example.com' }),
      scan(5, { hostname: 'c.example.com', country: 'DE' }),
    ]);
    const top = await getJson<{ items: unknown[] }>('/api/v1/dashboard/hostnames', key);
    expect(top.items).toEqual([
      { hostname: 'a.example.com', scans: 2, lastScannedAt: new Date(NOW - 3 * HOUR).toISOString() },
      { hostname: 'b.example.com', scans: 2, lastScannedAt: new Date(NOW - 1 * HOUR).toISOString() },
      { hostname: 'c.example.com', scans: 1, lastScannedAt: new Date(NOW - 5 * HOUR).toISOString() },
    ]);
    const de = await getJson<{ items: { hostname: string }[] }>('/api/v1/dashboard/hostnames?country=DE&limit=1', key);
    expect(de.items.map((i) => i.hostname)).toEqual(['b.example.com']);
    const bad = await t.request('/api/v1/dashboard/hostnames?limit=101', { headers: bearer(key) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toStartWith('limit:');
  });
});

describe('GET /api/v1/dashboard/scans', () => {
  test('lists newest first without data; GET /scans/:id gives the full record with data', async () => {
    const key = await setup();
    await seed([scan(3, { extra: 'kept' }), scan(1), scan(2)]);
    const page = await getJson<Page>('/api/v1/dashboard/scans', key);
    expect(page.items.map((i) => i.scannedAt)).toEqual([1, 2, 3].map((h) => new Date(NOW - h * HOUR).toISOString()));
    expect(page.nextCursor).toBeNull();
    expect(page.items[0]).not.toHaveProperty('data');
    const full = await getJson<Item & { data: unknown; signals: unknown; quality: unknown }>(`/api/v1/dashboard/scans/${page.items[2]!.id}`, key);
    expect(full.data).toEqual({ extra: 'kept' });
    expect(full.signals).toEqual({ title: { value: 'Shop', length: 4 } });
    expect(full.quality).toEqual({ grade: 'F', percentage: 0 });
  });

  test('an unknown scan id is 404', async () => {
    const key = await setup();
    const response = await t.request('/api/v1/dashboard/scans/0190ffff-0000-7000-8000-000000000000', { headers: bearer(key) });
    expect(response.status).toBe(404);
  });

  test('each filter narrows the list: hostname, country, platform, pageType, grade, from, to', async () => {
    const key = await setup();
    await seed([
      scan(1, { hostname: 'a.example.com', country: 'DE', platform: { platform: 'platform-a' }, pageType: 'product', quality: { grade: 'A', percentage: 95 } }),
      scan(2, { hostname: 'b.example.com', country: 'FR', platform: { platform: 'platform-b' }, pageType: 'home', quality: { grade: 'C', percentage: 60 } }),
      scan(30, { hostname: 'a.example.com', country: 'FR', platform: { platform: 'platform-b' }, pageType: 'product', quality: { grade: 'C', percentage: 55 } }),
    ]);
    const count = async (query: string) => (await getJson<Page>(`/api/v1/dashboard/scans?${query}`, key)).items.length;
    expect(await count('hostname=a.example.com')).toBe(2);
    expect(await count('hostname=A.Example.com')).toBe(2);
    expect(await count('country=fr')).toBe(2);
    expect(await count('platform=platform-a')).toBe(1);
    expect(await count('pageType=home')).toBe(1);
    expect(await count('grade=C')).toBe(2);
    expect(await count(`from=${new Date(NOW - 24 * HOUR).toISOString()}`)).toBe(2);
    expect(await count(`to=${new Date(NOW - 24 * HOUR).toISOString()}`)).toBe(1);
    expect(await count('from=2026-03-01&to=2026-03-01T10:30:00Z')).toBe(1);
    expect(await count('hostname=a.example.com&grade=C&country=FR')).toBe(1);
  });

  test('bad filters are 400 with a detail naming the parameter', async () => {
    const key = await setup();
    const cases: [string, string][] = [
      ['hostname=a b', 'hostname'],
      ['country=ZZ', 'country'],
      ['platform=wordpress', 'platform'],
      ['pageType=blog', 'pageType'],
      ['grade=G', 'grade'],
      ['from=yesterday', 'from'],
      ['to=2026-13-01', 'to'],
      ['from=2026-03-02&to=2026-03-01', 'to'],
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=ten', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
      ['sort=asc', 'sort'],
      ['grade=A&grade=B', 'grade'],
    ];
    for (const [query, parameter] of cases) {
      const response = await t.request(`/api/v1/dashboard/scans?${query}`, { headers: bearer(key) });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: string; detail: string };
      expect(body.error).toBe('invalid_query');
      expect(body.detail).toStartWith(`${parameter}:`);
    }
  });

  test('keyset pagination neither skips nor repeats rows while new scans arrive', async () => {
    const key = await setup();
    // Several scans share a scannedAt, so the id breaks ties.
    await seed(Array.from({ length: 25 }, (_, i) => scan(Math.floor(i / 3) + 1)));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `&cursor=${cursor}` : '';
      const page: Page = await getJson<Page>(`/api/v1/dashboard/scans?limit=4${query}`, key);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor;
      // New scans (newer than every listed row) land between pages.
      await seed([scan(0), scan(0.5)]);
      pages++;
    } while (cursor);
    expect(pages).toBe(7);
    expect(new Set(seen).size).toBe(seen.length);
    const original = ((await t.query('SELECT id FROM scans WHERE scanned_at < ? ORDER BY scanned_at DESC, id DESC', NOW - HOUR + 1)) as { id: string }[]).map((r) => r.id);
    expect(seen).toEqual(original);
  });

  test('limit defaults to 50 and may be up to 500', async () => {
    const key = await setup();
    await seed(Array.from({ length: 60 }, (_, i) => scan(i)));
    expect((await getJson<Page>('/api/v1/dashboard/scans', key)).items.length).toBe(50);
    const all = await getJson<Page>('/api/v1/dashboard/scans?limit=500', key);
    expect(all.items.length).toBe(60);
    expect(all.nextCursor).toBeNull();
  });
});

interface Stats {
  groupBy: string;
  groups: { key: string | null; scans: number; hostnames: number; averagePercentage: number; grades: Record<string, number>; presence: Record<string, number | null> }[];
}

describe('GET /api/v1/dashboard/stats', () => {
  async function seedStats() {
    await seed([
      scan(1, { hostname: 'a.example.com', country: 'DE', platform: { platform: 'platform-a' }, pageType: 'product', quality: { grade: 'A', percentage: 90 }, signalPresence: { title: true, jsonLd: false } }),
      scan(2, { hostname: 'a.example.com', country: 'DE', platform: { platform: 'platform-a' }, pageType: 'home', quality: { grade: 'B', percentage: 80 }, signalPresence: { title: true, jsonLd: true } }),
      scan(3, { hostname: 'b.example.com', country: 'FR', platform: { platform: 'platform-b' }, pageType: 'product', quality: { grade: 'A', percentage: 100 }, signalPresence: { title: false } }),
      scan(26, { hostname: 'c.example.com', country: 'FR', platform: { platform: 'platform-b' }, pageType: 'product', quality: { grade: 'F', percentage: 10 } }),
    ]);
  }

  test('groupBy=country: scans, distinct hostnames, average percentage, grade distribution, presence rates', async () => {
    const key = await setup();
    await seedStats();
    const stats = await getJson<Stats>('/api/v1/dashboard/stats?groupBy=country', key);
    expect(stats.groupBy).toBe('country');
    expect(stats.groups).toEqual([
      { key: 'DE', scans: 2, hostnames: 1, averagePercentage: 85, grades: { A: 1, B: 1, C: 0, D: 0, E: 0, F: 0 },
        presence: { title: 1, description: null, jsonLd: 0.5, openGraph: null, h1: null, canonical: null, robots: null } },
      { key: 'FR', scans: 2, hostnames: 2, averagePercentage: 55, grades: { A: 1, B: 0, C: 0, D: 0, E: 0, F: 1 },
        presence: { title: 0, description: null, jsonLd: null, openGraph: null, h1: null, canonical: null, robots: null } },
    ]);
  });

  test('groupBy=day, platform, pageType and grade', async () => {
    const key = await setup();
    await seedStats();
    const keysOf = async (groupBy: string) => (await getJson<Stats>(`/api/v1/dashboard/stats?groupBy=${groupBy}`, key)).groups.map((g) => [g.key, g.scans]);
    expect(await keysOf('day')).toEqual([['2026-02-28', 1], ['2026-03-01', 3]]);
    expect(await keysOf('platform')).toEqual([['platform-a', 2], ['platform-b', 2]]);
    expect(await keysOf('pageType')).toEqual([['home', 1], ['product', 3]]);
    expect(await keysOf('grade')).toEqual([['A', 2], ['B', 1], ['F', 1]]);
  });

  test('groupBy=month keys each UTC month as YYYY-MM', async () => {
    const key = await setup();
    await seed([scan(1), scan(13), scan(24 * 2), scan(24 * 40), scan(24 * 400)]);
    const stats = await getJson<Stats>('/api/v1/dashboard/stats?groupBy=month', key);
    expect(stats.groups.map((g) => [g.key, g.scans])).toEqual([['2025-01', 1], ['2026-01', 1], ['2026-02', 2], ['2026-03', 1]]);
  });

  test('stats take the same filters', async () => {
    const key = await setup();
    await seedStats();
    const stats = await getJson<Stats>('/api/v1/dashboard/stats?groupBy=grade&hostname=a.example.com&pageType=product', key);
    expect(stats.groups.map((g) => [g.key, g.scans])).toEqual([['A', 1]]);
    const since = await getJson<Stats>(`/api/v1/dashboard/stats?groupBy=grade&from=${new Date(NOW - 2.5 * HOUR).toISOString()}`, key);
    expect(since.groups.map((g) => [g.key, g.scans])).toEqual([['A', 1], ['B', 1]]);
  });

  test('without from, stats cover all time', async () => {
    const key = await setup();
    await seed([scan(1), scan(24 * 31), scan(24 * 400)]);
    const stats = await getJson<Stats>('/api/v1/dashboard/stats?groupBy=grade', key);
    expect(stats.groups.map((g) => g.scans)).toEqual([3]);
    const until = await getJson<Stats>(`/api/v1/dashboard/stats?groupBy=grade&to=${new Date(NOW - 24 * 30 * HOUR).toISOString()}`, key);
    expect(until.groups.map((g) => g.scans)).toEqual([2]);
  });

  test('a missing or unknown groupBy, or a bad filter, is 400 naming the parameter', async () => {
    const key = await setup();
    for (const [query, parameter] of [['', 'groupBy'], ['groupBy=week', 'groupBy'], ['groupBy=day&country=xx', 'country'], ['groupBy=day&cursor=x', 'cursor']]) {
      const response = await t.request(`/api/v1/dashboard/stats?${query}`, { headers: bearer(key) });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { detail: string }).detail).toStartWith(`${parameter}:`);
    }
  });
});
