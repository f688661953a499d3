import { afterEach, describe, expect, test } from 'bun:test';
import { createDashboardQueries } from '../src/storage/sqlite/scan-dashboard-workers.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { scanPayload, signedInit } from './helpers/probe.ts';
import { testSqliteOnly } from './helpers/engine.ts';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

/** `count` scans over the last 60 days, through bulk; no roller runs, so every one is read raw by the stats. */
async function ingest(count: number) {
  const key = await t.keyWith('probe:scan');
  const now = t.clock.now();
  for (let done = 0; done < count; done += 1000) {
    const scans = Array.from({ length: Math.min(1000, count - done) }, (_, i) =>
      scanPayload({
        hostname: `shop-${(done + i) % 300}.example.com`,
        url: `https://shop.example.com/p/${done + i}`,
        scannedAt: new Date(now - ((done + i) % 60) * 86_400_000).toISOString(),
      }),
    );
    const response = await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans }), now));
    expect(response.status).toBe(200);
  }
}

/** Event-loop turns the request thread takes while `work` is pending: none when the work runs on it in one go. */
async function turnsDuring<T>(work: Promise<T>): Promise<{ turns: number; result: T }> {
  let turns = 0;
  let waiting = true;
  const turn = () => {
    if (!waiting) return;
    turns++;
    setImmediate(turn);
  };
  setImmediate(turn);
  const result = await work;
  waiting = false;
  return { turns, result };
}

describe('dashboard reads run in Workers of their own', () => {
  test('the request thread keeps turning while the stats of 5,000 scans are read and merged', async () => {
    t = await makeTestApp({ env: { SVC_RATE_AGENT: '1000000' } });
    await ingest(5000);
    const admin = await t.keyWith('dashboard:read');
    const { turns, result } = await turnsDuring(t.request('/api/v1/dashboard/stats?groupBy=day', { headers: { authorization: `Bearer ${admin}` } }));
    expect(result.status).toBe(200);
    const body = (await result.json()) as { groups: { scans: number }[] };
    expect(body.groups.reduce((sum, group) => sum + group.scans, 0)).toBe(5000);
    // Read on the request thread, the whole read would run between two turns (0 or 1 of them).
    expect(turns).toBeGreaterThan(20);
  });

  test('the list, a scan, the hostnames and the stats are all answered by the Workers, the same as before', async () => {
    t = await makeTestApp({ env: { SVC_RATE_AGENT: '1000000' } });
    await ingest(50);
    const headers = { authorization: `Bearer ${await t.keyWith('dashboard:read')}` };
    const list = (await (await t.request('/api/v1/dashboard/scans?limit=5', { headers })).json()) as { items: { id: string }[] };
    expect(list.items).toHaveLength(5);
    const scan = await t.request(`/api/v1/dashboard/scans/${list.items[0]!.id}`, { headers });
    expect(((await scan.json()) as { id: string }).id).toBe(list.items[0]!.id);
    expect((await t.request('/api/v1/dashboard/scans/nope', { headers })).status).toBe(404);
    const hostnames = (await (await t.request('/api/v1/dashboard/hostnames?limit=3', { headers })).json()) as { items: unknown[] };
    expect(hostnames.items).toHaveLength(3);
  });

  testSqliteOnly('the Workers read SQLite\'s file; PostgreSQL answers the dashboard with queries of its pool, no Worker', 'closing answers the reads already given, then refuses the next', async () => {
    t = await makeTestApp({ env: { SVC_RATE_AGENT: '1000000' } });
    await ingest(10);
    const queries = createDashboardQueries(t.database.file);
    const given = queries.stats({}, 'country');
    const closing = queries.close();
    expect((await given).reduce((sum, group) => sum + group.scans, 0)).toBe(10);
    await closing;
    await expect(queries.stats({}, 'country')).rejects.toThrow('dashboard reader: closed');
  });
});
