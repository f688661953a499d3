import { afterEach, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MIGRATIONS_FOLDER } from '../src/storage/sqlite/db/index.ts';
import { removeRollupsFile, rollupsFileOf } from '../src/storage/sqlite/db/rollups-file.ts';
import { PRESENCE_COLUMNS } from '../src/scans/presence-columns.ts';
import { GRADES, PAGE_TYPES, PRESENCE_KEYS } from '../src/scans/vocabulary.ts';
import { fixedClock } from '../src/lib/clock.ts';
import { createScanRetention } from '../src/scans/retention.ts';
import { bearer, makeTestApp, tempDir, type TestApp } from './helpers/app.ts';
import { testSqliteOnly } from './helpers/engine.ts';
import { scanCount, scanPayload, signedInit } from './helpers/probe.ts';
import { readInTransactions } from './helpers/readers.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const NOW = Date.parse('2026-03-10T15:00:00Z');
const COUNTRIES = ['DE', 'FR', 'US', null] as const;
const PLATFORMS = ['platform-a', 'platform-b', 'custom', null] as const;
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

interface Group {
  key: string | null;
  scans: number;
  hostnames: number;
  averagePercentage: number;
  grades: Record<string, number>;
  presence: Record<string, number | null>;
}

// Deterministic pseudo-random scans over the `days` before NOW (several months, so month rollups are used).
let seed = 7;
const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
let urls = 0;
function randomScan(days: number) {
  const country = pick(COUNTRIES);
  const platform = pick(PLATFORMS);
  const presence = Object.fromEntries(PRESENCE_KEYS.filter(() => rand() < 0.8).map((k) => [k, rand() < 0.6]));
  return scanPayload({
    hostname: `shop-${Math.floor(rand() * 80)}.example.com`,
    url: `https://shop.example.com/p/${urls++}`,
    scannedAt: new Date(NOW - Math.floor(rand() * days * DAY)).toISOString(),
    ...(country ? { country } : {}),
    ...(platform ? { platform: { platform } } : {}),
    ...(rand() < 0.9 ? { pageType: pick(PAGE_TYPES) } : {}),
    quality: { grade: pick(GRADES), percentage: Math.floor(rand() * 101) },
    signalPresence: presence,
  });
}

async function ingest(count: number, days = 120) {
  const key = await t.keyWith('probe:scan');
  for (let done = 0; done < count; done += 1000) {
    const scans = Array.from({ length: Math.min(1000, count - done) }, () => randomScan(days));
    const response = await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans }), t.clock.now()));
    expect(response.status).toBe(200);
  }
}

/** The straightforward answer: one SQL aggregate over the raw rows, exact distinct hostnames. */
const COLUMNS: Record<string, string> = { hostname: 'hostname', country: 'country', platform: 'platform', pageType: 'page_type', grade: 'grade' };

/** The WHERE clause of the query's filters, written out plainly. */
function rawWhere(query: URLSearchParams): { where: string; params: (string | number)[] } {
  const clauses: string[] = [];
  const params: (string | number)[] = [];
  for (const [name, value] of query) {
    if (COLUMNS[name]) clauses.push(`${COLUMNS[name]} = ?`) && params.push(value);
    if (name === 'from') clauses.push('scanned_at >= ?') && params.push(Date.parse(value));
    if (name === 'to') clauses.push('scanned_at < ?') && params.push(Date.parse(value));
  }
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

/** What the raw queries write differently on each engine: a UTC day or month of epoch ms, a presence flag as 1 or 0, and text in byte order. */
const dialect = () =>
  t.config.postgres
    ? { utc: (format: string) => `to_char(to_timestamp(scanned_at / 1000) AT TIME ZONE 'UTC', '${format}')`, day: 'YYYY-MM-DD', month: 'YYYY-MM', flag: (column: string) => `${column}::int`, bytes: ' COLLATE "C"' }
    : { utc: (format: string) => `strftime('${format}', scanned_at / 1000, 'unixepoch')`, day: '%Y-%m-%d', month: '%Y-%m', flag: (column: string) => column, bytes: '' };

async function rawStats(query: URLSearchParams): Promise<Group[]> {
  const { where, params } = rawWhere(query);
  const groupBy = query.get('groupBy')!;
  const { utc, day, month, flag, bytes } = dialect();
  const key = groupBy === 'day' ? utc(day) : groupBy === 'month' ? utc(month) : COLUMNS[groupBy];
  const sql =
    `SELECT ${key}${bytes} AS key, count(*) AS scans, count(DISTINCT hostname) AS hostnames, avg(percentage) AS average, ` +
    GRADES.map((g) => `sum(CASE WHEN grade = '${g}' THEN 1 ELSE 0 END) AS "grade_${g}"`).join(', ') + ', ' +
    PRESENCE_KEYS.map((k) => `sum(${flag(PRESENCE_COLUMNS[k])}) AS "present_${k}", count(${PRESENCE_COLUMNS[k]}) AS "reported_${k}"`).join(', ') +
    ` FROM scans ${where} GROUP BY 1 ORDER BY 1 NULLS FIRST`;
  // PostgreSQL answers an average and a sum of counts as numeric (text): every figure is read as a number.
  const number = (value: unknown) => Number(value);
  return (await t.query(sql, ...params)).map((row) => ({
    key: row.key as string | null,
    scans: number(row.scans),
    hostnames: number(row.hostnames),
    averagePercentage: Math.round(number(row.average) * 100) / 100,
    grades: Object.fromEntries(GRADES.map((g) => [g, number(row[`grade_${g}`])])),
    presence: Object.fromEntries(
      PRESENCE_KEYS.map((k) => [k, number(row[`reported_${k}`]) === 0 ? null : Math.round((number(row[`present_${k}`]) / number(row[`reported_${k}`])) * 10_000) / 10_000]),
    ),
  }));
}

async function stats(query: URLSearchParams): Promise<Group[]> {
  const response = await t.request(`/api/v1/dashboard/stats?${query}`, { headers: bearer(await t.keyWith('dashboard:read')) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { groups: Group[] }).groups;
}

/** Every measure equal to the raw computation; distinct hostnames exact with a hostname filter, else within the sketch's error. */
async function expectSameAsRaw(query: URLSearchParams) {
  const expected = await rawStats(query);
  const actual = await stats(query);
  expect(actual.map(({ hostnames: _, ...rest }) => rest), `${query}`).toEqual(expected.map(({ hostnames: _, ...rest }) => rest));
  actual.forEach((group, i) => {
    const exact = expected[i]!.hostnames;
    if (query.has('hostname')) expect(group.hostnames).toBe(exact);
    else expect(Math.abs(group.hostnames - exact), `${query} ${group.key}`).toBeLessThanOrEqual(Math.max(1, exact * 0.05));
  });
}

const at = (ms: number) => new Date(ms).toISOString();
const FILTERS: Record<string, string>[] = [
  {},
  { country: 'DE' },
  { platform: 'platform-a' },
  { pageType: 'product' },
  { grade: 'B' },
  { country: 'FR', platform: 'custom', pageType: 'home', grade: 'A' },
  { hostname: 'shop-3.example.com' },
  { from: at(NOW - 47.3 * DAY) }, // mid-day edge, months after it
  { to: at(NOW - 3.6 * DAY) },
  { from: at(NOW - 95.2 * DAY), to: at(NOW - 20.7 * DAY), country: 'US' },
  { from: at(NOW - 10.4 * DAY), to: at(NOW - 10.1 * DAY) }, // inside one day
  { from: '2026-01-01', to: '2026-03-01' }, // whole months
];

async function expectAllSameAsRaw() {
  for (const groupBy of ['day', 'month', 'country', 'platform', 'pageType', 'grade']) {
    for (const filters of FILTERS) await expectSameAsRaw(new URLSearchParams({ groupBy, ...filters }));
  }
}

async function setup() {
  t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_AGENT: '1000000' } });
}

/**
 * Plain SQL over the rollup tables and the scans, on either engine: SQLite keeps the rollups in a
 * file of their own, which its stats connection attaches (read-only); PostgreSQL in the database.
 */
const queryRollups = async (sql: string, ...params: (string | number)[]) =>
  t.config.postgres ? t.query(sql, ...params) : t.database.stats().query<Record<string, unknown>, (string | number)[]>(sql).all(...params);

/** The rollup watermark: SQLite's is the rowid of the last scan folded; PostgreSQL's a transaction id, below which every scan is folded. */
const watermark = async () => Number((await queryRollups('SELECT watermark FROM scan_rollup_state'))[0]!.watermark);

/** Whether a scan is folded into the rollups: at or below the watermark (SQLite's rowid), or written below it (PostgreSQL's transaction id). */
const FOLDED = () => (t.config.postgres ? 'xact < (SELECT watermark FROM scan_rollup_state)' : 'rowid <= (SELECT watermark FROM scan_rollup_state)');

/** Every rollup row, sums rounded (float addition order differs), sketches as bytes. */
const rollupRows = () =>
  queryRollups(
    `SELECT *, round(${t.config.postgres ? 'percentage_sum::numeric' : 'percentage_sum'}, 6) AS percentage_sum, ${t.config.postgres ? "encode(hostnames, 'hex')" : 'hex(hostnames)'} AS hostnames ` +
      'FROM scan_rollups ORDER BY cuboid, country, platform, page_type, grade, day',
  );

/** A writing connection to the rollups file, as only the roller's Worker has one. */
function withRollupsFile<T>(fn: (rollups: Database) => T): T {
  const rollups = new Database(rollupsFileOf(t.database.file));
  try {
    return fn(rollups);
  } finally {
    rollups.close();
  }
}

/** Every rollup and the watermark gone, as before any fold (SQLite: through a writing connection to the rollups file). */
async function forgetRollups() {
  const statements = ['DELETE FROM scan_rollups', 'DELETE FROM scan_hostname_rollups', 'UPDATE scan_rollup_state SET watermark = 0'];
  if (t.config.postgres) for (const statement of statements) await t.query(statement);
  else withRollupsFile((rollups) => rollups.exec(statements.join('; ')));
}

/** The ids of the scans folded into the rollups. */
const foldedIds = async () => (await queryRollups(`SELECT id FROM scans WHERE ${FOLDED()} ORDER BY id`)).map((row) => row.id);

/** The rollups folded so far are the rows one fresh pass over the same scans builds (in one batch), of the same scans. */
async function expectSameAsFreshPass() {
  const folded = await rollupRows();
  const scans = await foldedIds();
  await forgetRollups();
  expect(await t.rollups().runOnce()).toBeGreaterThan(0);
  expect(await foldedIds()).toEqual(scans);
  expect(folded).toEqual(await rollupRows());
}

describe('stats from rollups (issue 4: < 200 ms on 1M scans)', () => {
  test('stats from rollups plus rows above the watermark equal stats from raw rows, for every groupBy and filter', async () => {
    await setup();
    await ingest(2500);
    const rollups = t.rollups(300);
    expect(await rollups.runOnce()).toBe(2500);
    await ingest(700); // above the watermark
    await expectAllSameAsRaw();
    expect(await rollups.runOnce()).toBe(700); // all rolled up
    await expectAllSameAsRaw();
  }, 30_000); // 144 stats queries, each beside its raw aggregate: ~5 s when the cores are shared (~11 s on PostgreSQL)

  testSqliteOnly('the stats connection and the rollups file are SQLite\'s', 'the stats connection only reads: a write through it is refused, so it never takes the rollups file from the roller', async () => {
    await setup();
    expect(() => t.database.stats().exec('UPDATE rollups.scan_rollup_state SET watermark = 5')).toThrow();
    expect(() => t.database.stats().exec('DELETE FROM scans')).toThrow();
    expect(await watermark()).toBe(0);
  });

  test('before any roll-up, stats come from raw rows alone', async () => {
    await setup();
    await ingest(400);
    await expectSameAsRaw(new URLSearchParams({ groupBy: 'country' }));
  });

  test('the watermark persists: a restarted roller folds only the scans stored since', async () => {
    await setup();
    await ingest(500);
    expect(await t.rollups().runOnce()).toBe(500);
    const restarted = t.rollups();
    expect(await restarted.runOnce()).toBe(0);
    await ingest(120);
    expect(await restarted.runOnce()).toBe(120);
    await expectSameAsRaw(new URLSearchParams({ groupBy: 'platform' }));
  });

  test('retention keeps the rollups consistent: deleted scans leave the stats, later scans still count', async () => {
    await setup();
    await ingest(2000);
    const rollups = t.rollups(250);
    await rollups.runOnce();
    expect(await createScanRetention(t.clock, 40, rollups, 97).runOnce()).toBeGreaterThan(1000);
    await expectAllSameAsRaw();
    await ingest(600, 30);
    await rollups.runOnce();
    await expectAllSameAsRaw();
  }, 30_000);

  test('a late scan for an expired day, rolled up while retention sweeps, leaves no rollup behind', async () => {
    await setup();
    await ingest(300, 60);
    const rollups = t.rollups();
    await rollups.runOnce();
    const key = await t.keyWith('probe:scan');
    const late = (name: string) => scanPayload({ url: `https://shop.example.com/${name}`, scannedAt: at(NOW - 50 * DAY) });
    const post = async (name: string) => expect((await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans: [late(name)] }), NOW))).status).toBe(200);
    const count = () => scanCount(t);
    const sweep = createScanRetention(t.clock, 30, rollups, 5).runOnce();
    // While the sweep deletes scans (their days' rollups already dropped), a scan for an expired
    // day arrives (the sweep deletes it if it has not passed its day yet); another arrives once the
    // sweep has ended. The roller folds what is left of them.
    while ((await count()) === 300) await new Promise((resolve) => setImmediate(resolve));
    await post('late');
    await sweep;
    await post('later');
    await rollups.runOnce();
    const [oldest] = await queryRollups('SELECT min(day) AS day FROM scan_rollups WHERE cuboid < 8');
    expect(oldest!.day).toBeGreaterThanOrEqual(Math.floor((NOW - 30 * DAY) / DAY));
    // The next sweep deletes what the last one left of them.
    await createScanRetention(t.clock, 30, rollups).runOnce();
    expect(await count()).toBeLessThan(300);
    await expectAllSameAsRaw();
  }, 30_000);

  test('cells folded batch by batch (small batches, across another roller and retention) are the rows one fresh pass builds in one batch', async () => {
    await setup();
    await ingest(1500);
    const rollups = t.rollups(40);
    await rollups.runOnce();
    await ingest(400, 30);
    expect(await t.rollups(37).runOnce()).toBe(400); // another roller
    await ingest(300, 30);
    expect(await rollups.runOnce()).toBe(300);
    await expectSameAsFreshPass();
    await createScanRetention(t.clock, 60, rollups, 97).runOnce();
    await ingest(300, 30);
    expect(await rollups.runOnce()).toBe(300);
    await expectSameAsFreshPass();
    await expectAllSameAsRaw();
  }, 30_000);

  test('every stats answer equals a recount after random inserts, backfills, retention and restarts', async () => {
    const dir = tempDir();
    const open = async () => (t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_AGENT: '1000000' }, dataDir: dir.dir }));
    try {
      await open();
      let retentionDays = 150;
      // A fixed order of every kind of step, twice, each followed by a fold of whatever it left.
      const steps = ['insert', 'backfill', 'fold', 'retention', 'restart', 'backfill', 'insert', 'restart', 'retention', 'insert'] as const;
      for (const step of steps) {
        if (step === 'insert') await ingest(200 + Math.floor(rand() * 400), 20); // live scans, the last days
        // Anywhere in the folded past that retention keeps (a late scan for a day retention has
        // dropped is folded into no cell, and deleted by the next sweep).
        if (step === 'backfill') await ingest(300 + Math.floor(rand() * 300), retentionDays - 1);
        if (step === 'retention') await createScanRetention(t.clock, (retentionDays -= 25 + Math.floor(rand() * 20)), t.rollups(), 53).runOnce();
        if (step === 'restart') {
          await t.close();
          await open();
        }
        // Half the folds run in small batches: cells written again batch after batch.
        if (step !== 'restart') await t.rollups(rand() < 0.5 ? 97 : undefined).runOnce();
        await expectSameAsRaw(new URLSearchParams({ groupBy: 'day' }));
      }
      await expectAllSameAsRaw();
    } finally {
      await t.close();
      dir.remove();
    }
  }, 60_000);

  testSqliteOnly('the rollups file and its write-ahead log are SQLite\'s', "the rollups file's log starts over after every batch, even while stats read the file all along", async () => {
    await setup();
    await ingest(3000, 365);
    const walBytes = () => (existsSync(`${rollupsFileOf(t.database.file)}-wal`) ? statSync(`${rollupsFileOf(t.database.file)}-wal`).size : 0);
    // Stats queries back to back, each holding a snapshot for 50 ms: a checkpoint that does not
    // wait for them never copies the whole log, so it never starts over.
    const reader = new Database(rollupsFileOf(t.database.file), { readonly: true });
    const reads = readInTransactions(reader, 'SELECT count(*) FROM scan_rollups', 50);
    const rollups = t.rollups(100);
    expect(await rollups.runOnce()).toBe(3000);
    const after30Batches = walBytes();
    await ingest(3000, 365);
    expect(await rollups.runOnce()).toBe(3000);
    await reads.stop();
    reader.close();
    // Started over after each batch, the file is as large as the largest batch, whatever their number.
    expect(walBytes()).toBeLessThan(1.5 * after30Batches);
  }, 30_000);

  test('retention deleting the newest row: the watermark comes down, so a reused rowid is still counted (PostgreSQL\'s transaction ids are never reused: its watermark stays)', async () => {
    await setup();
    await ingest(50, 10);
    const key = await t.keyWith('probe:scan');
    const old = scanPayload({ url: 'https://shop.example.com/old', scannedAt: at(NOW - 100 * DAY) });
    expect((await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans: [old] }), NOW))).status).toBe(200);
    const rollups = t.rollups();
    await rollups.runOnce();
    const before = await watermark();
    await createScanRetention(t.clock, 30, rollups).runOnce();
    expect(await watermark()).toBe(t.config.postgres ? before : before - 1);
    await ingest(1, 1); // takes the deleted row's rowid
    await expectSameAsRaw(new URLSearchParams({ groupBy: 'grade' }));
    expect(await rollups.runOnce()).toBe(1);
    await expectSameAsRaw(new URLSearchParams({ groupBy: 'grade' }));
  });
});

/** Every page of the dashboard list, followed cursor by cursor: the ids in order. */
async function listIds(query: URLSearchParams): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = new URLSearchParams(query);
    if (cursor) page.set('cursor', cursor);
    const response = await t.request(`/api/v1/dashboard/scans?${page}`, { headers: bearer(await t.keyWith('dashboard:read')) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { items: { id: string }[]; nextCursor: string | null };
    ids.push(...body.items.map((item) => item.id));
    cursor = body.nextCursor;
  } while (cursor);
  return ids;
}

/** The straightforward list: every matching row, newest first, ties by id (in byte order). */
async function rawIds(query: URLSearchParams): Promise<string[]> {
  const { where, params } = rawWhere(query);
  return (await t.query(`SELECT id FROM scans ${where} ORDER BY scanned_at DESC, id${dialect().bytes} DESC`, ...params)).map((row) => row.id as string);
}

const LIST_FILTERS: Record<string, string>[] = [
  { country: 'DE' },
  { platform: 'custom', grade: 'F' },
  { country: 'FR', platform: 'custom', grade: 'A' }, // a handful of rows over months
  { country: 'US', pageType: 'cart', from: at(NOW - 61.5 * DAY), to: at(NOW - 2.2 * DAY) }, // mid-day bounds
  { grade: 'C', from: '2026-01-01', to: '2026-02-01' },
  { hostname: 'shop-3.example.com', grade: 'B' },
];

describe('scan list guided by the day rollups (issue 12: index diet)', () => {
  test('a filtered scan list pages through exactly the matching rows, whether they are rolled up or not', async () => {
    await setup();
    await ingest(1500);
    const rollups = t.rollups(400);
    const expectSameAsRaw = async () => {
      for (const filters of LIST_FILTERS) {
        for (const limit of ['3', '50']) {
          const query = new URLSearchParams({ ...filters, limit });
          const expected = await rawIds(query);
          expect(expected.length, `${query}`).toBeGreaterThan(0);
          expect(await listIds(query), `${query}`).toEqual(expected);
        }
      }
    };
    await expectSameAsRaw(); // nothing rolled up
    await rollups.runOnce();
    await ingest(300); // above the watermark, anywhere in time
    await expectSameAsRaw();
    await createScanRetention(t.clock, 80, rollups, 97).runOnce();
    await expectSameAsRaw();
  }, 30_000);
});

/** The single filters the hostnames list reads from the per-hostname rollups, none, and two (read from the scans). */
const HOSTNAME_FILTERS: Record<string, string>[] = [{}, { country: 'DE' }, { platform: 'platform-b' }, { pageType: 'product' }, { grade: 'C' }, { country: 'DE', grade: 'C' }];
const FILTER_COLUMN: Record<string, string> = { country: 'country', platform: 'platform', pageType: 'page_type', grade: 'grade' };

/** The top hostnames as the dashboard lists them (all 80 of the test data), without a filter or with one. */
async function hostnamesList(filter: Record<string, string> = {}): Promise<unknown[]> {
  const response = await t.request(`/api/v1/dashboard/hostnames?${new URLSearchParams({ ...filter, limit: '100' })}`, { headers: bearer(await t.keyWith('dashboard:read')) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: unknown[] }).items;
}

/** The straightforward list: counted over every (matching) row, ties by hostname in byte order. */
async function rawHostnames(filter: Record<string, string> = {}): Promise<unknown[]> {
  const clauses = Object.keys(filter).map((name) => `${FILTER_COLUMN[name]} = ?`);
  const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
  const sql = `SELECT hostname, count(*) AS scans, max(scanned_at) AS last FROM scans ${where} GROUP BY hostname ORDER BY scans DESC, hostname${dialect().bytes} LIMIT 100`;
  return (await t.query(sql, ...Object.values(filter))).map((row) => ({ hostname: row.hostname, scans: row.scans, lastScannedAt: at(row.last as number) }));
}

/** Every hostnames list the rollups serve equals its raw count. */
async function expectHostnamesListsAsRaw() {
  for (const filter of HOSTNAME_FILTERS) {
    const expected = await rawHostnames(filter);
    expect(expected.length, JSON.stringify(filter)).toBeGreaterThan(0);
    expect(await hostnamesList(filter), JSON.stringify(filter)).toEqual(expected);
  }
}

/**
 * The per-hostname rollups hold exactly the scans up to the watermark, over all scans and per value
 * of each dimension (no row for a hostname with none, none for a null value).
 */
async function expectHostnameRollupsOfFoldedScans() {
  const folded = (select: string, where = '') =>
    `SELECT ${select} AS dimension, hostname, count(*) AS scans, max(scanned_at) AS last FROM scans WHERE ${FOLDED()} ${where} GROUP BY 1, hostname`;
  const expected = await queryRollups(
    `SELECT * FROM (${[folded("''"), ...Object.values(FILTER_COLUMN).map((column) => folded(`'${column}' || ':' || ${column}`, `AND ${column} IS NOT NULL`))].join(' UNION ALL ')}) AS folded ` +
      'ORDER BY dimension, hostname',
  );
  const stored = await queryRollups(
    "SELECT CASE dimension WHEN '' THEN '' ELSE dimension || ':' || value END AS dimension, hostname, scans, last_scanned_at AS last FROM scan_hostname_rollups ORDER BY 1, hostname",
  );
  expect(stored.length).toBeGreaterThan(400);
  expect(stored).toEqual(expected);
}

describe('hostnames list from per-hostname rollups (issue 12: dashboard on 1M scans)', () => {
  test('the hostnames list without filters or with one on country, platform, page type or grade, from the per-hostname rollups plus the scans above the watermark, equals the raw list (as with two filters, read from the scans), across retention', async () => {
    await setup();
    const key = await t.keyWith('probe:scan');
    // Hostnames whose scans all expire: one folded, one above the watermark when retention runs.
    const old = (hostname: string, days: number) => scanPayload({ hostname, url: `https://${hostname}/p/${days}`, scannedAt: at(NOW - days * DAY) });
    const bulk = async (scans: unknown[]) => expect((await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans }), NOW))).status).toBe(200);
    await bulk([old('gone.example.com', 90), old('gone.example.com', 80)]);
    await ingest(1500);
    await expectHostnamesListsAsRaw(); // nothing folded yet
    const rollups = t.rollups(300);
    await rollups.runOnce();
    await ingest(300); // above the watermark
    await bulk([old('late.example.com', 70)]);
    await expectHostnamesListsAsRaw();
    await expectHostnameRollupsOfFoldedScans();
    // Retention deletes folded scans and scans above the watermark alike.
    expect(await createScanRetention(t.clock, 40, rollups, 97).runOnce()).toBeGreaterThan(1000);
    await expectHostnamesListsAsRaw();
    await expectHostnameRollupsOfFoldedScans();
    expect(await queryRollups("SELECT count(*) AS n FROM scan_hostname_rollups WHERE hostname LIKE '%gone%' OR hostname LIKE '%late%'")).toEqual([{ n: 0 }]);
    await ingest(200, 30);
    await rollups.runOnce();
    await expectHostnamesListsAsRaw();
    await expectHostnameRollupsOfFoldedScans();
  }, 30_000);

  testSqliteOnly('the rollups file is SQLite\'s (PostgreSQL keeps the rollups in the database)', 'a database without its rollups file (an upgrade, a restore, a file deleted or of another layout) gets every scan folded again', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-rollups-file-'));
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_AGENT: '1000000' }, dataDir });
    await ingest(600);
    expect(await t.rollups().runOnce()).toBe(600);
    const reopen = async () => {
      await t.close();
      t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_AGENT: '1000000' }, dataDir });
    };
    // Same file, same layout: nothing to fold again.
    await reopen();
    expect(await t.rollups().runOnce()).toBe(0);
    // Another layout: started afresh.
    withRollupsFile((rollups) => rollups.exec('PRAGMA user_version = 0'));
    await reopen();
    expect(await watermark()).toBe(0);
    await expectSameAsRaw(new URLSearchParams({ groupBy: 'country' })); // all raw meanwhile
    expect(await t.rollups().runOnce()).toBe(600);
    await expectSameAsRaw(new URLSearchParams({ groupBy: 'country' }));
    // Deleted.
    await t.close();
    removeRollupsFile(t.database.file);
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_AGENT: '1000000' }, dataDir });
    expect(await t.rollups().runOnce()).toBe(600);
    await expectHostnameRollupsOfFoldedScans();
    rmSync(dataDir, { recursive: true, force: true });
  });

  testSqliteOnly('earlier releases kept the rollups in the SQLite database file; PostgreSQL\'s schema holds them from its first migration', 'the rollups left in the database by an earlier release are dropped when it is migrated', async () => {
    await setup();
    const tables = () => t.database.sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE name IN ('scan_rollups', 'scan_hostname_rollups', 'scan_rollup_state')").all().map((row) => row.name);
    expect(tables()).toEqual([]);
    // The migration that moved them out names each of them.
    const journal = (await Bun.file(`${MIGRATIONS_FOLDER}/meta/_journal.json`).json()) as { entries: { tag: string }[] };
    const moved = journal.entries.find((entry) => entry.tag.endsWith('_rollups_in_own_file'))!;
    const sql = await Bun.file(`${MIGRATIONS_FOLDER}/${moved.tag}.sql`).text();
    for (const table of ['scan_rollups', 'scan_hostname_rollups', 'scan_rollup_state']) expect(sql).toContain(`DROP TABLE \`${table}\``);
  });
});
