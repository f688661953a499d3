// The contract of the scans records (src/storage/scans.ts), held on every engine under test: the
// group commit (answered after COMMIT, a refused request refused alone), bulk duplicates skipped
// (also between two writers racing), the dashboard's reads (filters, keyset paging order, one scan,
// hostnames, stats), the badge, the rollups (stats are the rollups plus the rows not folded yet, the
// watermark never skipping a row whose transaction commits late), retention and the backlog. Each
// test opens a migrated, empty engine.
import { afterEach, describe, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { EntryFailed, groupSlice, type GroupSlice } from '../../src/lib/group-commit.ts';
import { DAY_MS } from '../../src/lib/time.ts';
import { PRESENCE_KEYS } from '../../src/scans/vocabulary.ts';
import type { ScanStorage, ScansToWrite } from '../../src/storage/scans.ts';
import { postgresScanStorage } from '../../src/storage/postgres/scans.ts';
import { sqliteScanStorage } from '../../src/storage/sqlite/scans.ts';
import type { NormalizedScan } from '../../src/telemetry/payload.ts';
import { createScanWriter } from '../../src/telemetry/writer.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { ENGINES, query, type OpenedEngine } from '../helpers/storage.ts';

/** 2026-06-10T00:00:00Z: scans are dated around it. */
const T0 = Date.UTC(2026, 5, 10);

function scan(overrides: Partial<NormalizedScan> = {}): NormalizedScan {
  return {
    hostname: 'shop.example.com',
    url: 'https://shop.example.com/',
    scannedAt: T0,
    country: 'DE',
    platform: 'platform-a',
    platformConfidence: 0.9,
    pageType: 'product',
    grade: 'B',
    percentage: 70,
    svcDetected: true,
    svcVersion: '1.2.3',
    vertical: 'fashion',
    presence: Object.fromEntries(PRESENCE_KEYS.map((key, i) => [key, i % 3 === 0 ? null : i % 3 === 1])) as NormalizedScan['presence'],
    signals: { title: { value: 'Shop' } },
    quality: { grade: 'B', percentage: 70 },
    data: { extra: 1 },
    trust: 0,
    ...overrides,
  };
}

/** A slice that takes every request of a group. */
function everything(): GroupSlice {
  const slice = groupSlice();
  slice.floor = Number.MAX_SAFE_INTEGER;
  return slice;
}

const telemetry = (scans: NormalizedScan[], receivedAt = T0): ScansToWrite => ({ scans, receivedAt, skipDuplicates: false });
const bulk = (scans: NormalizedScan[], receivedAt = T0): ScansToWrite => ({ scans, receivedAt, skipDuplicates: true });

describe.each(ENGINES)('scans records on $name', (engine) => {
  let opened: OpenedEngine;
  /** What each PostgreSQL write announced to the change feed. */
  let announced: string[][];
  let storage: ScanStorage;
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function open(): Promise<ScanStorage> {
    opened = await engine.open();
    closers.push(() => opened.close());
    announced = [];
    storage = storageOn(opened);
    return storage;
  }

  /** Another storage of the same engine on the same database (another instance, or the CLI). */
  function storageOn(on: OpenedEngine): ScanStorage {
    return on.kind === 'sqlite' ? sqliteScanStorage(on.database) : postgresScanStorage(on.client, { wrote: (tables) => void announced.push([...tables]) });
  }

  const count = async (where = '', ...params: (string | number)[]) => Number((await query(opened, `SELECT count(*) AS n FROM scans ${where}`, ...params))[0]!.n);
  const write = (...group: ScansToWrite[]) => storage.writes.commitGroup(group, everything());
  const roller = () => {
    const rollups = storage.roller();
    closers.push(() => rollups.stop());
    return rollups;
  };

  test('a group commits in one transaction and answers after COMMIT, with each request\'s rows inserted', async () => {
    await open();
    const answer = write(telemetry([scan()]), bulk([scan({ url: 'https://shop.example.com/a' }), scan({ url: 'https://shop.example.com/b' })]));
    expect(await answer).toEqual([1, 2]);
    // Another connection sees every row as soon as the group answered.
    if (opened.kind === 'postgres') {
      const other = new SQL({ url: opened.url, max: 1 });
      closers.push(() => other.close());
      expect(Number((await other`SELECT count(*) AS n FROM scans`)[0].n)).toBe(3);
      expect(announced).toContainEqual(['scans']);
    } else expect(await count()).toBe(3);
    // What was written reads back as given.
    const [first] = (await storage.dashboard().list({ hostname: 'shop.example.com', platform: 'platform-a' }, null, 10)).items;
    expect(first).toMatchObject({ hostname: 'shop.example.com', country: 'DE', platform: { platform: 'platform-a', confidence: 0.9 }, pageType: 'product', grade: 'B', percentage: 70, svc: { detected: true, version: '1.2.3' }, vertical: 'fashion' });
    expect(first!.signalPresence).toEqual(scan().presence);
  });

  test('a slice that stops the group commits the requests before it; the rest are left', async () => {
    await open();
    let left = 2;
    const twoRequests: GroupSlice = { floor: 0, start: () => {}, takes: () => left-- > 0 };
    const answered = await storage.writes.commitGroup([telemetry([scan()]), telemetry([scan()]), telemetry([scan()])], twoRequests);
    expect(answered).toEqual([1, 1]);
    expect(await count()).toBe(2);
  });

  test('the group-commit writer over records that answer with a promise commits one group at a time, in order, each answered after its COMMIT; close() waits for the last', async () => {
    await open();
    let inFlight = 0;
    let most = 0;
    const groups: number[] = [];
    const writer = createScanWriter(
      {
        async commitGroup(group, slice) {
          most = Math.max(most, ++inFlight);
          try {
            return await storage.writes.commitGroup(group, slice);
          } finally {
            inFlight--;
          }
        },
      },
      8,
      { onCommit: (rows) => groups.push(rows) },
    );
    const committed: number[] = [];
    const written = Array.from({ length: 40 }, (_, i) => writer.write(scan({ url: `https://shop.example.com/${i}` }), T0 + i).then(() => committed.push(i)));
    const bulkWritten = writer.writeBulk([scan({ url: 'https://shop.example.com/0' }), scan({ url: 'https://shop.example.com/new' })], T0);
    await writer.close();
    // Everything queued before close() is committed once it resolves, and nothing is taken after.
    expect(await count()).toBe(41);
    expect(await Promise.all(written)).toHaveLength(40);
    expect(await bulkWritten).toBe(1);
    expect(committed).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(most).toBe(1);
    expect(groups.length).toBeGreaterThan(1);
    expect(groups.reduce((sum, rows) => sum + rows, 0)).toBe(42);
    await expect(writer.write(scan(), T0)).rejects.toThrow();
  });

  test('a request whose rows the database refuses is refused alone (EntryFailed with its index): nothing of the group is kept', async () => {
    await open();
    if (opened.kind === 'sqlite') opened.database.sqlite.run("CREATE TRIGGER refuse BEFORE INSERT ON scans WHEN NEW.hostname = 'refused.example.com' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    else await opened.client.sql`ALTER TABLE scans ADD CONSTRAINT refuse CHECK (hostname <> 'refused.example.com')`;
    const failure = await write(telemetry([scan()]), bulk([scan({ url: 'https://shop.example.com/x' }), scan({ hostname: 'refused.example.com', url: 'https://refused.example.com/' })]), telemetry([scan()])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EntryFailed);
    expect((failure as EntryFailed).index).toBe(1);
    expect(await count()).toBe(0);
    expect(await write(telemetry([scan()]), telemetry([scan()]))).toEqual([1, 1]);
  });

  test('a group of telemetry alone whose one request the database refuses: that request is refused alone, nothing of the group is kept', async () => {
    await open();
    if (opened.kind === 'sqlite') opened.database.sqlite.run("CREATE TRIGGER refuse BEFORE INSERT ON scans WHEN NEW.hostname = 'refused.example.com' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    else await opened.client.sql`ALTER TABLE scans ADD CONSTRAINT refuse CHECK (hostname <> 'refused.example.com')`;
    const failure = await write(telemetry([scan()]), telemetry([scan({ hostname: 'refused.example.com' })]), telemetry([scan()])).catch((error: unknown) => error);
    expect((failure as EntryFailed).index).toBe(1);
    expect(await count()).toBe(0);
  });

  test('text is stored as given whatever it holds (quotes, backslashes, escapes, any script, a lone surrogate as U+FFFD), and JSON as JSON.stringify wrote it', async () => {
    await open();
    const odd = 'q"uo\\te \\u00e9 \u00e9\u4e2d 🛒 \t\n end';
    const cases = [
      { svcVersion: odd, vertical: odd, signals: { [odd]: [odd, 1.5, -0, 1e21], nested: { b: null, a: true } }, data: {} },
      // A lone surrogate, and text that looks like its escape.
      { svcVersion: 'text \\ud800', vertical: 'lone \ud800 surrogate', signals: { lone: 'x\udc00y' }, data: { text: '\\udc00' } },
    ];
    for (const [i, given] of cases.entries()) {
      await write(telemetry([scan({ ...given, url: `https://shop.example.com/${i}` })]), bulk([scan({ ...given, url: `https://shop.example.com/${i}/bulk` })]));
      const rows = await query(opened, 'SELECT svc_version, vertical, signals, data FROM scans WHERE url LIKE ? ORDER BY url', `https://shop.example.com/${i}%`);
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(row).toEqual({ svc_version: given.svcVersion, vertical: given.vertical.toWellFormed(), signals: JSON.stringify(given.signals), data: JSON.stringify(given.data) });
      }
    }
  });

  test('bulk skips a (url, scannedAt) pair stored already, written earlier in the group (by any endpoint) or earlier in the request; telemetry never skips', async () => {
    await open();
    const at = (url: string, scannedAt: number) => scan({ url: `https://shop.example.com/${url}`, scannedAt });
    expect(await write(telemetry([at('a', T0)]))).toEqual([1]);
    expect(
      await write(
        bulk([at('a', T0), at('a', T0 + 1), at('b', T0), at('b', T0)]),
        telemetry([at('c', T0), at('a', T0)]),
        bulk([at('c', T0), at('b', T0), at('d', T0)]),
      ),
    ).toEqual([2, 2, 1]);
    expect(await count()).toBe(6);
    expect(await count('WHERE url = ? AND scanned_at = ?', 'https://shop.example.com/a', T0)).toBe(2);
    expect(await count('WHERE url = ? AND scanned_at = ?', 'https://shop.example.com/b', T0)).toBe(1);
  });

  test('two writers racing with the same bulk scans store each (url, scannedAt) pair once', async () => {
    await open();
    const other = opened.kind === 'sqlite' ? storage : postgresScanStorage(opened.client, { wrote: () => {} });
    let expected = 0;
    for (let round = 0; round < 8; round++) {
      const scans = Array.from({ length: 40 }, (_, i) => scan({ url: `https://shop.example.com/${round}/${i}`, scannedAt: T0 + i }));
      const [a, b] = await Promise.all([storage.writes.commitGroup([bulk(scans)], everything()), other.writes.commitGroup([bulk([...scans].reverse())], everything())]);
      expect(a[0]! + b[0]!).toBe(40);
      expected += 40;
    }
    expect(await count()).toBe(expected);
  });

  test('the list is newest first (scannedAt, then id, descending), filtered, and pages by keyset without a gap or a repeat', async () => {
    await open();
    const hosts = ['a.example.com', 'b.example.com'];
    const group = Array.from({ length: 24 }, (_, i) =>
      telemetry([scan({ hostname: hosts[i % 2]!, url: `https://${hosts[i % 2]}/${i}`, scannedAt: T0 + Math.floor(i / 3) * 60_000, country: i % 4 === 0 ? 'FR' : 'DE', grade: i % 5 === 0 ? 'A' : 'C' })]),
    );
    await write(...group);
    const dashboard = storage.dashboard();
    closers.push(() => dashboard.close());
    const all = await dashboard.list({}, null, 100);
    expect(all.items).toHaveLength(24);
    expect(all.next).toBeNull();
    const order = all.items.map((item) => [Date.parse(item.scannedAt), item.id] as const);
    const sorted = [...order].sort((x, y) => y[0] - x[0] || (x[1] < y[1] ? 1 : x[1] > y[1] ? -1 : 0));
    expect(order).toEqual(sorted);
    // Pages of 5, ties on scannedAt among them, cover the list once.
    for (const filters of [{}, { hostname: 'a.example.com' }, { country: 'FR' }, { grade: 'C', from: T0 + 60_000, to: T0 + 6 * 60_000 }]) {
      const expected = (await dashboard.list(filters, null, 100)).items.map((item) => item.id);
      const paged: string[] = [];
      let cursor = null;
      do {
        const page: Awaited<ReturnType<typeof dashboard.list>> = await dashboard.list(filters, cursor, 5);
        paged.push(...page.items.map((item) => item.id));
        cursor = page.next;
      } while (cursor);
      expect(paged).toEqual(expected);
    }
    const byCountry = (await dashboard.list({ country: 'FR' }, null, 100)).items;
    expect(byCountry.length).toBe(6);
    expect(byCountry.every((item) => item.country === 'FR')).toBe(true);
    const inRange = (await dashboard.list({ from: T0 + 60_000, to: T0 + 3 * 60_000 }, null, 100)).items;
    expect(inRange.map((item) => Date.parse(item.scannedAt)).every((at) => at >= T0 + 60_000 && at < T0 + 3 * 60_000)).toBe(true);
    expect(inRange).toHaveLength(6);
  });

  test('one scan in full by its id, its JSON as written; null for an unknown id', async () => {
    await open();
    await write(telemetry([scan({ signals: { b: 1, a: [true, null] }, data: { z: 'x' } })]));
    const dashboard = storage.dashboard();
    const [item] = (await dashboard.list({}, null, 1)).items;
    const detail = await dashboard.get(item!.id);
    expect(detail).toEqual({ ...item!, signals: { b: 1, a: [true, null] }, quality: { grade: 'B', percentage: 70 }, data: { z: 'x' } });
    expect(JSON.stringify(detail!.signals)).toBe('{"b":1,"a":[true,null]}');
    expect(await dashboard.get('0190b7c0-0000-7000-8000-000000000000')).toBeNull();
  });

  test("the badge shows a hostname's most trusted scan, then the latest received, then the last written; null for a hostname never scanned", async () => {
    await open();
    expect(await storage.reads.badge('shop.example.com')).toBeNull();
    await write(telemetry([scan({ grade: 'A', percentage: 95, trust: 2 })], T0));
    await write(telemetry([scan({ grade: 'F', percentage: 5, trust: 0 })], T0 + 10));
    expect(await storage.reads.badge('shop.example.com')).toEqual({ grade: 'A', percentage: 95 });
    await write(bulk([scan({ url: 'https://shop.example.com/1', grade: 'C', percentage: 50, trust: 2 }), scan({ url: 'https://shop.example.com/2', grade: 'D', percentage: 40, trust: 2 })], T0 + 20));
    expect(await storage.reads.badge('shop.example.com')).toEqual({ grade: 'D', percentage: 40 });
    expect(await storage.reads.badge('other.example.com')).toBeNull();
  });

  /** Scans over a few days and hostnames, with every dimension varied and some nulls. */
  function spread(count: number, receivedAt: number): ScansToWrite[] {
    const countries = ['DE', 'FR', null];
    const platforms = ['platform-a', 'platform-b', null];
    return Array.from({ length: count }, (_, i) =>
      telemetry(
        [
          scan({
            hostname: `h${i % 7}.example.com`,
            url: `https://h${i % 7}.example.com/${i}`,
            scannedAt: T0 - (i % 9) * DAY_MS + (i % 5) * 3_600_000,
            country: countries[i % 3]!,
            platform: platforms[i % 4 === 3 ? 2 : i % 2]!,
            pageType: i % 2 ? 'product' : 'home',
            grade: 'ABCDF'[i % 5]!,
            percentage: (i * 7) % 100,
          }),
        ],
        receivedAt + i,
      ),
    );
  }

  const statsOf = async (dashboard: ReturnType<ScanStorage['dashboard']>) => {
    const answers: unknown[] = [];
    for (const groupBy of ['day', 'month', 'country', 'platform', 'pageType', 'grade'] as const) {
      for (const filters of [{}, { country: 'DE' }, { platform: 'platform-a', grade: 'C' }, { from: T0 - 4 * DAY_MS + 3_600_000, to: T0 + 2 * 3_600_000 }, { hostname: 'h3.example.com' }]) {
        answers.push(await dashboard.stats(filters, groupBy));
      }
    }
    for (const filters of [{}, { country: 'FR' }, { grade: 'A' }, { country: 'DE', pageType: 'home' }]) answers.push(await dashboard.topHostnames(filters, 5));
    return answers;
  };

  test('stats and hostnames are the same before the fold (rows), after it (rollups), and with rows added after it (both); the backlog says what waits', async () => {
    await open();
    await write(...spread(60, T0));
    expect(await storage.reads.backlog()).toEqual({ scans: 60, oldestReceivedAt: T0 });
    const dashboard = storage.dashboard();
    closers.push(() => dashboard.close());
    const before = await statsOf(dashboard);
    const [all] = await dashboard.stats({}, 'grade').then((groups) => [groups.reduce((sum, group) => sum + group.scans, 0)]);
    expect(all).toBe(60);
    const rollups = roller();
    expect(await rollups.runOnce()).toBe(60);
    expect(await storage.reads.backlog()).toEqual({ scans: 0, oldestReceivedAt: null });
    expect(await statsOf(dashboard)).toEqual(before);
    // Half folded, half not: the same as all of them read raw.
    await write(...spread(30, T0 + 1000).map((entry) => ({ ...entry, scans: entry.scans.map((s) => ({ ...s, url: `${s.url}/again` })) })));
    const mixed = await statsOf(dashboard);
    expect(await rollups.runOnce()).toBe(30);
    expect(await statsOf(dashboard)).toEqual(mixed);
    expect(mixed).not.toEqual(before);
    expect(await rollups.runOnce()).toBe(0);
  });

  test('retention drops the rollups of the expired days, then their scans, in batches; the stats and hostnames never count a deleted scan', async () => {
    await open();
    await write(...spread(60, T0));
    const rollups = roller();
    await rollups.runOnce();
    const firstKeptDay = Math.floor(T0 / DAY_MS) - 4;
    const kept = await count('WHERE scanned_at >= ?', firstKeptDay * DAY_MS);
    expect(kept).toBeLessThan(60);
    expect(await rollups.retain(firstKeptDay, new AbortController().signal, 7)).toBe(60 - kept);
    expect(await count()).toBe(kept);
    const dashboard = storage.dashboard();
    closers.push(() => dashboard.close());
    const scansIn = async (filters: object) => (await dashboard.stats(filters, 'day')).reduce((sum, group) => sum + group.scans, 0);
    expect(await scansIn({})).toBe(kept);
    expect(await scansIn({ country: 'DE' })).toBe(await count("WHERE country = 'DE'"));
    const hostnames = await dashboard.topHostnames({}, 10);
    expect(hostnames.reduce((sum, row) => sum + row.scans, 0)).toBe(kept);
    // A late scan of an expired day, folded before the next sweep, leaves nothing behind.
    await write(telemetry([scan({ url: 'https://late.example.com/', hostname: 'late.example.com', scannedAt: (firstKeptDay - 2) * DAY_MS })]));
    await rollups.runOnce();
    await rollups.retain(firstKeptDay, new AbortController().signal);
    expect(await scansIn({})).toBe(kept);
    expect((await dashboard.topHostnames({}, 10)).map((row) => row.hostname)).not.toContain('late.example.com');
    if (opened.kind === 'postgres') expect(announced).toContainEqual(['scans', 'scan_rollups', 'scan_hostname_rollups', 'scan_rollup_state']);
  });

  test('retention stopped by its signal deletes nothing more', async () => {
    await open();
    await write(...spread(20, T0));
    const stop = new AbortController();
    stop.abort();
    expect(await roller().retain(Math.floor(T0 / DAY_MS) + 1, stop.signal)).toBe(0);
    expect(await count()).toBe(20);
  });

  test.skipIf(engine.name !== 'postgres')('the watermark never skips a row whose transaction wrote first and commits last: it is folded by the next fold, and counted once', async () => {
    await open();
    if (opened.kind !== 'postgres') throw new Error('unreachable');
    const late = await opened.client.sql.reserve();
    closers.push(async () => late.release());
    // A transaction that writes first (its id is the lowest) and stays open.
    await late`BEGIN`;
    await late`INSERT INTO scans (id, hostname, url, scanned_at, received_at, grade, percentage, signals, quality, data) VALUES ('late-1', 'late.example.com', 'https://late.example.com/', ${T0}, ${T0}, 'A', 90, '{}', '{}', '{}')`;
    await write(...spread(10, T0));
    const rollups = roller();
    const dashboard = storage.dashboard();
    const total = async () => (await dashboard.stats({}, 'grade')).reduce((sum, group) => sum + group.scans, 0);
    // The later transactions committed, but the open one holds the watermark below them: nothing folds past it.
    expect(await rollups.runOnce()).toBe(0);
    expect(await total()).toBe(10);
    expect((await storage.reads.backlog()).scans).toBe(10);
    await late`COMMIT`;
    expect(await total()).toBe(11);
    expect(await rollups.runOnce()).toBe(11);
    expect(await total()).toBe(11);
    expect((await dashboard.topHostnames({}, 10)).find((row) => row.hostname === 'late.example.com')?.scans).toBe(1);
    expect(await storage.reads.backlog()).toEqual({ scans: 0, oldestReceivedAt: null });
    expect(await rollups.runOnce()).toBe(0);
    expect(await total()).toBe(11);
  });

  test.skipIf(engine.name !== 'postgres')("a transaction open in another database of the server (another application's) does not hold the fold back; one open in this database does", async () => {
    await open();
    if (opened.kind !== 'postgres') throw new Error('unreachable');
    // Transaction ids are the server's: this one, begun first and left open, is older than every scan.
    const other = await createTestDatabase();
    const elsewhere = new SQL({ url: other.url, max: 1 });
    const session = await elsewhere.reserve();
    closers.push(async () => {
      session.release();
      await elsewhere.close();
      await other.drop();
    });
    await session`BEGIN`;
    await session`SELECT pg_current_xact_id()`;
    await write(...spread(10, T0));
    expect(await roller().runOnce()).toBe(10);
    // The same in this database (a session that took an id and wrote nothing yet) holds it back.
    const here = await opened.client.sql.reserve();
    closers.push(async () => here.release());
    await here`BEGIN`;
    await here`SELECT pg_current_xact_id()`;
    await write(...spread(5, T0 + 1000));
    expect(await roller().runOnce()).toBe(0);
    await here`COMMIT`;
    expect(await roller().runOnce()).toBe(5);
    await session`COMMIT`;
  });

  test('a fold stops at a transaction boundary once a batch is full, and the next batch goes on from there', async () => {
    await open();
    await write(...spread(12, T0).slice(0, 6));
    await write(...spread(12, T0).slice(6));
    const small = storage.roller(4);
    closers.push(() => small.stop());
    expect(await small.runOnce()).toBe(12);
    expect(await storage.reads.backlog()).toEqual({ scans: 0, oldestReceivedAt: null });
    const dashboard = storage.dashboard();
    expect((await dashboard.stats({}, 'grade')).reduce((sum, group) => sum + group.scans, 0)).toBe(12);
  });
});
