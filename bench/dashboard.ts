#!/usr/bin/env bun
// Dashboard and badge read benchmark (README "Benchmarks"): generates a 1,000,000-scan database in a
// temp directory (prepared INSERTs, 50,000 rows per transaction, scannedAt rising over a year as
// scans arrive), folds them into the stats rollups with the server's roller (timed), adds 2,000 more
// scans left above the rollup watermark (as between two roller runs), then times every dashboard
// query (each list filter combination, each stats groupBy, the hostnames list, scan by id) and the
// badge through the app's HTTP surface (app.handle). Prints the median and p95 of each and the worst.
// With --postgres, the rolled-up database is first moved to PostgreSQL as `svc migrate-to` does
// (timed; a throwaway server from the system's binaries, or --database-url), every query is asked of
// both engines and their answers compared (the same data: before the 2,000 late scans), and
// PostgreSQL's times are printed beside SQLite's.
// Goal: p95 < 100 ms for every one, on each engine. Figures, not assertions.
// Usage: bun bench/dashboard.ts [--scans 1000000] [--runs 9] [--postgres [--database-url URL]]
import { loadConsolePage } from '../src/console/routes.ts';
import { loadLandingPage } from '../src/landing/routes.ts';
import { rmSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createApp } from '../src/app.ts';
import { createKeyStore } from '../src/auth/keys.ts';
import { systemClock } from '../src/lib/clock.ts';
import { sqliteAuthRecords } from '../src/storage/sqlite/auth.ts';
import { sqliteChangeFeed } from '../src/storage/sqlite/changes.ts';
import { sqliteStorage } from '../src/storage/sqlite/index.ts';
import { loadConfig } from '../src/config.ts';
import { GROUP_BYS } from '../src/scans/filters.ts';
import { migrateDatabase, openDatabase } from '../src/storage/sqlite/db/index.ts';
import { loadGeo } from '../src/geo/lookup.ts';
import { createScanRollups } from '../src/storage/sqlite/scan-rollups.ts';
import { DAY_MS } from '../src/lib/time.ts';
import { buildWidget } from '../src/widget/bundle.ts';
import { openEngine } from '../src/storage/open.ts';
import { moveToPostgres } from '../src/storage/postgres/copy-from-sqlite.ts';
import { newDatabase, postgresServer } from './lib/engine-setup.ts';
import { scanGenerator } from './lib/scans.ts';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { scans: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '9' }, postgres: { type: 'boolean', default: false }, 'database-url': { type: 'string' } },
});
const SCANS = Number(values.scans);
const RUNS = Number(values.runs);
const GOAL_MS = 100;
const NOW = Date.now();

const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-dashboard-'));
try {
  const config = loadConfig({ 'data-dir': dir }, {});
  const database = openDatabase(config.databaseFile);
  migrateDatabase(database);

  const generate = scanGenerator(database.sqlite, SCANS, NOW);
  let started = performance.now();
  for (let done = 0; done < SCANS; done += 50_000) generate(Math.min(50_000, SCANS - done), done);
  console.log(`generated ${SCANS.toLocaleString('en')} scans in ${((performance.now() - started) / 1000).toFixed(1)} s (${dir})`);
  started = performance.now();
  // In the server's Worker; bench/roller.ts measures the fold's CPU.
  const rollups = createScanRollups(database);
  const rolled = await rollups.runOnce();
  await rollups.stop();
  const rollSeconds = (performance.now() - started) / 1000;
  const cells = (database.stats().query('SELECT count(*) AS n FROM rollups.scan_rollups').get() as { n: number }).n;
  console.log(
    `rolled up ${rolled.toLocaleString('en')} scans in ${rollSeconds.toFixed(1)} s (${Math.round(rolled / rollSeconds).toLocaleString('en')} scans/s; ${cells.toLocaleString('en')} rollup rows)`,
  );
  // Created before any move to PostgreSQL, so it moves too.
  const key = (await createKeyStore(sqliteAuthRecords(database), sqliteChangeFeed(database), systemClock).create({ name: 'bench', scopes: ['dashboard:read'] })).key;
  const auth = { authorization: `Bearer ${key}` };
  const pages = { landing: await loadLandingPage(), console: await loadConsolePage() };
  const parts = { widget: await buildWidget(), geo: await loadGeo(null), pages };
  const app = createApp({ config, storage: sqliteStorage(database), ...parts });
  const get = (p: string, headers: Record<string, string> = auth) => app.handle(new Request(`http://localhost${p}`, { headers }));

  /** The same app on PostgreSQL, holding what `svc migrate-to` moved there (its rollups too). */
  let postgres: { get: typeof get; close(): Promise<void> } | null = null;
  if (values.postgres) {
    const { adminUrl } = postgresServer(values['database-url']);
    const url = await newDatabase(adminUrl);
    started = performance.now();
    const moved = await moveToPostgres(database, { url });
    console.log(`moved to PostgreSQL (svc migrate-to) in ${((performance.now() - started) / 1000).toFixed(1)} s: ${moved.rows.toLocaleString('en')} rows, rollups ${moved.rollups}`);
    const pgConfig = loadConfig({ 'data-dir': path.join(dir, 'pg') }, { SVC_DATABASE_URL: url });
    const engine = await openEngine(pgConfig, 'svc bench');
    const pgApp = createApp({ config: pgConfig, storage: engine.storage, ...parts });
    postgres = { get: (p, headers = auth) => pgApp.handle(new Request(`http://localhost${p}`, { headers })), close: () => engine.close() };
  }

  const sample = database.sqlite.query('SELECT id, hostname FROM scans ORDER BY random() LIMIT 1').get() as { id: string; hostname: string };
  const firstPage = (await (await get('/api/v1/dashboard/scans?limit=500')).json()) as { nextCursor: string };
  const week = `from=${new Date(NOW - 7 * DAY_MS).toISOString().slice(0, 10)}&to=${new Date(NOW).toISOString()}`;
  const midDay = (daysAgo: number) => new Date(NOW - daysAgo * DAY_MS - 5 * 3_600_000).toISOString();
  // Every combination of the list filters (rare values, so a page needs many rows read), plus a
  // cursor page; every stats groupBy without filter, with each single filter, with every filter
  // but the hostname, and with a mid-day from/to; the hostnames list with each filter.
  const FILTERS: [string, string][] = [
    ['hostname', `hostname=${sample.hostname}`],
    ['country', 'country=JP'],
    ['platform', 'platform=custom'],
    ['pageType', 'pageType=cart'],
    ['grade', 'grade=E'],
    ['from/to', week],
  ];
  const subsets = Array.from({ length: 2 ** FILTERS.length }, (_, mask) => FILTERS.filter((_, i) => mask & (1 << i)));
  const query = (filters: [string, string][], extra: string[] = []) => [...filters.map(([, q]) => q), ...extra].join('&');
  const named = (filters: [string, string][]) => (filters.length ? filters.map(([name]) => name).join('+') : 'no filter');
  const stats = (groupBy: string, filters: [string, string][]): [string, string] => [`stats groupBy=${groupBy}, ${named(filters)}`, `/api/v1/dashboard/stats?${query(filters, [`groupBy=${groupBy}`])}`];
  const cases: [string, string, Record<string, string>?][] = [
    ...subsets.map((filters): [string, string] => [`list, ${named(filters)}`, `/api/v1/dashboard/scans?${query(filters)}`]),
    ['list, limit=500', '/api/v1/dashboard/scans?limit=500'],
    ['list, next page (cursor)', `/api/v1/dashboard/scans?limit=500&cursor=${firstPage.nextCursor}`],
    ['scan by id', `/api/v1/dashboard/scans/${sample.id}`],
    ...GROUP_BYS.flatMap((groupBy): [string, string][] => [
      stats(groupBy, []),
      ...FILTERS.map((filter) => stats(groupBy, [filter])),
      stats(groupBy, FILTERS.slice(1)),
      [`stats groupBy=${groupBy}, mid-day from/to`, `/api/v1/dashboard/stats?groupBy=${groupBy}&from=${midDay(200)}&to=${midDay(3)}`],
    ]),
    ...[[], ...FILTERS.map((filter) => [filter]), FILTERS.slice(1)].map((filters): [string, string] => [`hostnames, ${named(filters)}`, `/api/v1/dashboard/hostnames?${query(filters)}`]),
    ['badge svg', `/api/v1/public/probe/badge?domain=${sample.hostname}`, {}],
    ['badge json', `/api/v1/public/probe/badge?domain=${sample.hostname}&format=json`, {}],
    ['badge, not scanned', '/api/v1/public/probe/badge?domain=never.example.org', {}],
  ];
  /** Times `url` (two warm-up runs, then RUNS): median and p95 in ms, and the last answer's body. */
  async function timed(ask: typeof get, name: string, url: string, headers: Record<string, string>): Promise<{ median: number; p95: number; body: string }> {
    const times: number[] = [];
    let body = '';
    for (let run = 0; run < RUNS + 2; run++) {
      started = performance.now();
      const response = await ask(url, headers);
      body = await response.text();
      if (response.status !== 200) throw new Error(`${name}: ${response.status} ${body}`);
      if (run >= 2) times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return { median: times[Math.floor(times.length / 2)]!, p95: times[Math.min(times.length - 1, Math.ceil(times.length * 0.95) - 1)]!, body };
  }

  // PostgreSQL first, on the very data SQLite holds now: its answers must equal SQLite's.
  const onPostgres = new Map<string, { median: number; p95: number }>();
  if (postgres) {
    const differ: string[] = [];
    for (const [name, url, headers] of cases) {
      const pg = await timed(postgres.get, name, url, headers ?? auth);
      const lite = await (await get(url, headers ?? auth)).text();
      if (pg.body !== lite && !name.startsWith('badge svg')) differ.push(name);
      onPostgres.set(name, pg);
    }
    console.log(`answers: ${cases.length - differ.length} of ${cases.length} the same on both engines${differ.length ? `; different: ${differ.join(', ')}` : ''}`);
    await postgres.close();
  }

  generate(2_000, SCANS); // above the watermark: stats read these raw
  database.sqlite.exec('ANALYZE');
  const side = (figures: { median: number; p95: number } | undefined) =>
    figures ? `${figures.median.toFixed(2).padStart(10)} ${figures.p95.toFixed(2).padStart(10)}  ${figures.p95 < GOAL_MS ? 'ok  ' : 'OVER'}` : '';
  console.log(`\n${'query'.padEnd(64)} ${'median ms'.padStart(10)} ${'p95 ms'.padStart(10)}  goal${postgres ? ` ${'PostgreSQL:'.padStart(10)} ${'p95 ms'.padStart(10)}  goal` : ''}`);
  const worst: Record<string, { name: string; p95: number }> = { SQLite: { name: '', p95: 0 }, PostgreSQL: { name: '', p95: 0 } };
  for (const [name, url, headers] of cases) {
    const lite = await timed(get, name, url, headers ?? auth);
    const pg = onPostgres.get(name);
    if (lite.p95 > worst.SQLite!.p95) worst.SQLite = { name, p95: lite.p95 };
    if (pg && pg.p95 > worst.PostgreSQL!.p95) worst.PostgreSQL = { name, p95: pg.p95 };
    console.log(`${name.padEnd(64)} ${side(lite)} ${side(pg)}`);
  }
  for (const [engine, { name, p95 }] of Object.entries(worst)) {
    if (engine === 'PostgreSQL' && !postgres) continue;
    console.log(`worst on ${engine}: ${name}, p95 ${p95.toFixed(2)} ms (goal < ${GOAL_MS} ms for every query: ${p95 < GOAL_MS ? 'met' : 'NOT met'})`);
  }
  console.log('(SQLite with 2,000 scans above the rollup watermark; PostgreSQL as migrate-to left it, none)');
  database.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
