import { afterEach, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { fixedClock } from '../src/lib/clock.ts';
import { writePause } from '../src/storage/sqlite/write-pause.ts';
import { createScanRetention } from '../src/scans/retention.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { testSqliteOnly } from './helpers/engine.ts';
import { scanCount as scansOf, scanPayload, signedInit } from './helpers/probe.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-03-01T12:00:00Z');
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const scanCount = () => scansOf(t);

async function seed(daysAgo: number[]) {
  const key = await t.keyWith('probe:scan');
  const scans = daysAgo.map((d, i) => scanPayload({ url: `https://shop.example.com/p/${i}`, scannedAt: new Date(NOW - d * DAY).toISOString() }));
  const response = await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans }), NOW));
  expect(response.status).toBe(200);
}

describe('scan retention (SVC_SCAN_RETENTION_DAYS)', () => {
  test('scans older than the retention are deleted, newer ones kept', async () => {
    const clock = fixedClock(NOW);
    t = await makeTestApp({ clock, env: { SVC_RATE_AGENT: '100000' } });
    await seed([1, 29, 31, 400]);
    const retention = createScanRetention(clock, 30, t.rollups());
    expect(await retention.runOnce()).toBe(2);
    expect(await scanCount()).toBe(2);
    clock.advance(2 * DAY); // the 29-day-old scan expires next
    expect(await retention.runOnce()).toBe(1);
    expect(await scanCount()).toBe(1);
  });

  test('whole UTC days: a scan is deleted once its day ended more than the retention ago', async () => {
    const clock = fixedClock(NOW); // 12:00 UTC
    t = await makeTestApp({ clock, env: { SVC_RATE_AGENT: '100000' } });
    // 30.4 days ago is 02:24 of the day 30 days ago (not over yet); 30.6 days ago is the evening before.
    await seed([30.4, 30.6]);
    const retention = createScanRetention(clock, 30, t.rollups());
    expect(await retention.runOnce()).toBe(1);
    expect(await scanCount()).toBe(1);
    clock.advance(DAY / 2); // midnight: that day has now ended more than 30 days ago
    expect(await retention.runOnce()).toBe(1);
    expect(await scanCount()).toBe(0);
  });

  test('0 keeps scans forever', async () => {
    const clock = fixedClock(NOW);
    t = await makeTestApp({ clock });
    await seed([10_000]);
    expect(await createScanRetention(clock, 0, t.rollups()).runOnce()).toBe(0);
    expect(await scanCount()).toBe(1);
  });

  test('deletes in small batches and lets ingestion commit between them', async () => {
    const clock = fixedClock(NOW);
    t = await makeTestApp({ clock, env: { SVC_RATE_AGENT: '100000' } });
    await seed(Array.from({ length: 500 }, (_, i) => 100 + (i % 200)));
    const retention = createScanRetention(clock, 30, t.rollups(), 5);
    const sweep = retention.runOnce();
    // The sweep runs beside the request thread (SQLite: in the roller's Worker), 5 scans per
    // transaction: a scan posted now commits between two of them, long before the sweep ends.
    await seed([0]);
    const afterIngest = await scanCount();
    expect(await sweep).toBe(500);
    expect(afterIngest).toBeGreaterThan(1);
    expect(await scanCount()).toBe(1);
  });

  testSqliteOnly('the WAL checkpointer and the rollups file are SQLite\'s', 'a sweep deletes no scan while the WAL checkpointer pauses background writes (the rollups, in their own file, may go)', async () => {
    const clock = fixedClock(NOW);
    t = await makeTestApp({ clock, env: { SVC_RATE_AGENT: '100000' } });
    await seed([100, 101, 102, 1]);
    const { sqlite } = t.database;
    const rollups = t.rollups();
    await rollups.runOnce();
    const rollupRows = () => (t.database.stats().query('SELECT count(*) AS n FROM rollups.scan_rollups').get() as { n: number }).n;
    const before = rollupRows();
    expect(before).toBeGreaterThan(0);
    // A commit during the pause keeps the next one from starting the WAL over (db/checkpoint.ts).
    // Another connection's data_version moves with any commit to the database.
    const other = new Database(t.database.file, { readonly: true });
    const dataVersion = () => (other.query('PRAGMA data_version').get() as { data_version: number }).data_version;
    const version = dataVersion();
    const pause = writePause(sqlite);
    pause.pause();
    const sweep = createScanRetention(clock, 30, rollups).runOnce();
    // The sweep under way: its first step (the expired days' rollups dropped) is seen, or a second
    // has passed (a busy machine); its deletions, which come next, would follow within the 20 ms.
    for (let waited = 0; rollupRows() === before && waited < 1000; waited += 5) await Bun.sleep(5);
    await Bun.sleep(20);
    expect(dataVersion()).toBe(version);
    expect(await scanCount()).toBe(4);
    other.close();
    pause.resume();
    expect(await sweep).toBe(3);
    expect(rollupRows()).toBeLessThan(before);
    expect(await scanCount()).toBe(1);
  });

  test('start() sweeps at once; stop() ends the sweep at its next step, and the next sweep finishes it', async () => {
    const clock = fixedClock(NOW);
    t = await makeTestApp({ clock });
    await seed([45]);
    const retention = createScanRetention(clock, 30, t.rollups());
    retention.start(60_000);
    await retention.stop();
    expect(await scanCount()).toBe(1);
    expect(await retention.runOnce()).toBe(1);
    expect(await scanCount()).toBe(0);
  });

  test('stop() ends a sweep under way (SQLite: in the roller\'s Worker) at its next step, and the next sweep finishes it', async () => {
    const clock = fixedClock(NOW);
    t = await makeTestApp({ clock, env: { SVC_RATE_AGENT: '100000' } });
    // (url, scannedAt) unique across the four requests: bulk skips duplicates.
    for (let i = 0; i < 4; i++) await seed(Array.from({ length: 500 }, (_, j) => 40 + ((i * 500 + j) % 300) + i / 10));
    expect(await scanCount()).toBe(2000);
    const retention = createScanRetention(clock, 30, t.rollups(), 2);
    retention.start(60_000);
    while ((await scanCount()) === 2000) await Bun.sleep(1);
    await retention.stop();
    const left = await scanCount();
    expect(left).toBeGreaterThan(0);
    await Bun.sleep(50);
    expect(await scanCount()).toBe(left); // stopped, not running on
    expect(await retention.runOnce()).toBe(left);
    expect(await scanCount()).toBe(0);
  });
});
