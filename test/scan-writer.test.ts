import { afterEach, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { loadConfig } from '../src/config.ts';
import { migrateDatabase, openDatabase, type AppDatabase } from '../src/db/index.ts';
import { ApiError } from '../src/lib/errors.ts';
import { writePause } from '../src/storage/sqlite/write-pause.ts';
import { startServer } from '../src/server.ts';
import { normalizeScan, type NormalizedScan } from '../src/telemetry/payload.ts';
import { createScanWriter } from '../src/telemetry/writer.ts';
import { sqliteScanWriteRecordsSync } from '../src/storage/sqlite/scans.ts';
import { sqliteAuthRecords } from '../src/storage/sqlite/auth.ts';
import { sqliteChangeFeed } from '../src/storage/sqlite/changes.ts';
import { makeTestApp, tempDir, type TestApp } from './helpers/app.ts';
import { failCommits } from './helpers/failing-commits.ts';
import { TELEMETRY, scanPayload, signedInit } from './helpers/probe.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function scan(hostname = 'shop.example.com'): NormalizedScan {
  const result = normalizeScan({ hostname, signals: {} }, Date.now());
  if (!result.ok) throw new Error(result.detail);
  return result.scan;
}

function freshDatabase(): AppDatabase {
  const dir = tempDir();
  const database = openDatabase(`${dir.dir}/svc.db`);
  migrateDatabase(database);
  cleanups.push(() => dir.remove(), () => database.close());
  return database;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Makes every scan row take a few ms to insert (longer than a group's backlog slice). */
function slowRows(sqlite: Database): void {
  sqlite.run('CREATE TRIGGER slow_row AFTER INSERT ON scans BEGIN SELECT sum(x) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) SELECT x FROM c); END');
}

const rows = (database: AppDatabase) => (database.sqlite.query('SELECT count(*) AS n FROM scans').get() as { n: number }).n;

describe('group-commit writer (DESIGN §6)', () => {
  test('concurrent scans are committed together and each is answered after COMMIT', async () => {
    const database = freshDatabase();
    const writer = createScanWriter(sqliteScanWriteRecordsSync(database));
    await Promise.all(Array.from({ length: 50 }, (_, i) => writer.write(scan(`h${i}.example.com`), Date.now())));
    // A second connection sees every row: they are committed, not just queued.
    const reader = new Database(database.file, { readonly: true });
    expect((reader.query('SELECT count(*) AS n FROM scans').get() as { n: number }).n).toBe(50);
    reader.close();
  });

  test('a full batch is written at once without waiting for the end of the tick', async () => {
    const database = freshDatabase();
    const writer = createScanWriter(sqliteScanWriteRecordsSync(database), 3);
    const written = Array.from({ length: 7 }, () => writer.write(scan(), Date.now()));
    expect(rows(database)).toBe(6); // two full batches written synchronously; one row still queued
    await Promise.all(written);
    expect(rows(database)).toBe(7);
  });

  test('while the WAL checkpointer pauses writes, rows wait; then they are committed in batches of at most the batch size', async () => {
    const database = freshDatabase();
    const commits: number[] = [];
    const writer = createScanWriter(sqliteScanWriteRecordsSync(database), 3, { onCommit: (n) => commits.push(n) });
    const pause = writePause(database.sqlite);
    pause.pause();
    const written = Array.from({ length: 7 }, () => writer.write(scan(), Date.now()));
    await Bun.sleep(5);
    expect(rows(database)).toBe(0);
    pause.resume();
    await Promise.all(written);
    expect(rows(database)).toBe(7);
    // Slices of the backlog: never more than the batch size (fewer when a slice's time runs out first).
    expect(commits.length).toBeGreaterThanOrEqual(3);
    expect(commits.every((n) => n <= 3)).toBe(true);
  });

  test('a backlog left by a write pause is written in slices of about 2 ms, one group per turn of the event loop, in the order queued', async () => {
    const database = freshDatabase();
    slowRows(database.sqlite);
    const events: string[] = [];
    const writer = createScanWriter(sqliteScanWriteRecordsSync(database), undefined, { onCommit: (n) => events.push(`commit ${n}`) });
    const pause = writePause(database.sqlite);
    pause.pause();
    const hosts = Array.from({ length: 12 }, (_, i) => `h${i}.example.com`);
    const written = Promise.all(hosts.map((host) => writer.write(scan(host), Date.now())));
    await nextTurn();
    let ticking = true;
    const tick = () => {
      if (events.at(-1) !== 'turn') events.push('turn');
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    pause.resume();
    await written;
    ticking = false;
    const commits = events.filter((e) => e !== 'turn').map((e) => Number(e.split(' ')[1]));
    // Each row takes longer than a slice here, so the backlog goes out in several groups...
    expect(commits.length).toBeGreaterThan(1);
    expect(commits.reduce((a, b) => a + b, 0)).toBe(hosts.length);
    // ...each in a turn of its own, other work running in between.
    expect(events.join(',')).not.toMatch(/commit \d+,commit/);
    const stored = database.sqlite.query('SELECT hostname FROM scans ORDER BY rowid').all() as { hostname: string }[];
    expect(stored.map((row) => row.hostname)).toEqual(hosts);
  });

  test('while a backlog is written, each group also writes at least the rows that arrived during the turn before it (the writer keeps up), in the order queued', async () => {
    const database = freshDatabase();
    slowRows(database.sqlite);
    let committed = 0;
    // A small batch size: a group considers only part of the queue, and leaves part of that part.
    const writer = createScanWriter(sqliteScanWriteRecordsSync(database), 4, { onCommit: (n) => (committed += n) });
    const pause = writePause(database.sqlite);
    pause.pause();
    const sent = Array.from({ length: 6 }, (_, i) => `backlog${i}.example.com`);
    const backlog = sent.map((host) => writer.write(scan(host), Date.now()));
    await nextTurn();
    pause.resume();
    const arriving: Promise<void>[] = [];
    for (let turn = 0; turn < 10; turn++) {
      for (let i = 0; i < 3; i++) {
        sent.push(`t${turn}-${i}.example.com`);
        arriving.push(writer.write(scan(sent.at(-1)), Date.now()));
      }
      await nextTurn();
    }
    await nextTurn();
    // One slow backlog row per turn would leave most of the 30 arrivals queued by now.
    expect(committed).toBeGreaterThanOrEqual(arriving.length);
    await Promise.all([...backlog, ...arriving]);
    const stored = database.sqlite.query('SELECT hostname FROM scans ORDER BY rowid').all() as { hostname: string }[];
    expect(stored.map((row) => row.hostname)).toEqual(sent); // the backlog first, then each turn's rows
  });

  test('close() commits the rows still queued, even during a pause, and refuses new ones', async () => {
    const database = freshDatabase();
    const writer = createScanWriter(sqliteScanWriteRecordsSync(database));
    writePause(database.sqlite).pause();
    const pending = [writer.write(scan(), Date.now()), writer.write(scan(), Date.now())];
    writer.close();
    expect(rows(database)).toBe(2);
    await Promise.all(pending);
    await expect(writer.write(scan(), Date.now())).rejects.toBeInstanceOf(ApiError);
  });

  test('a scan whose row the database refuses fails alone: the rest of its batch is committed', async () => {
    const database = freshDatabase();
    database.sqlite.run("CREATE TRIGGER refuse BEFORE INSERT ON scans WHEN NEW.hostname = 'bad.example.com' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    const failures: number[] = [];
    const commits: number[] = [];
    const writer = createScanWriter(sqliteScanWriteRecordsSync(database), undefined, { onCommit: (n) => commits.push(n), onFailure: (n) => failures.push(n) });
    const results = await Promise.allSettled([
      writer.write(scan('a.example.com'), Date.now()),
      writer.write(scan('bad.example.com'), Date.now()),
      writer.writeBulk([scan('b.example.com'), scan('bad.example.com')], Date.now()),
      writer.write(scan('c.example.com'), Date.now()),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(results.map((r) => r.status === 'rejected' && (r.reason as ApiError).code)).toEqual([false, 'persistence_failed', 'persistence_failed', false]);
    // One transaction for the rows that stayed; a refused bulk request keeps none of its rows.
    expect(commits).toEqual([2]);
    expect(failures).toEqual([1, 2]);
    const hosts = database.sqlite.query('SELECT hostname FROM scans ORDER BY hostname').all() as { hostname: string }[];
    expect(hosts.map((h) => h.hostname)).toEqual(['a.example.com', 'c.example.com']);
    await writer.write(scan(), Date.now()); // the next batch is unaffected
    expect(rows(database)).toBe(3);
  });

  test('through HTTP: one telemetry request refused by the database in a group of concurrent ones gets 500, the others 204', async () => {
    const t = await makeTestApp();
    cleanups.push(() => t.close());
    t.database.sqlite.run("CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.scans WHEN NEW.hostname = 'bad.example.com' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    const key = await t.keyWith('probe:scan');
    const hosts = ['one.example.com', 'bad.example.com', 'two.example.com', 'three.example.com'];
    const responses = await Promise.all(hosts.map((hostname) => t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload({ hostname })), Date.now()))));
    expect(responses.map((r) => r.status)).toEqual([204, 500, 204, 204]);
    expect(((await responses[1]!.json()) as { error: string }).error).toBe('persistence_failed');
    const reader = committedReader(t.database.file);
    expect(hosts.map(reader)).toEqual([1, 0, 1, 1]);
  });
});

/** A second connection: what it sees is committed. */
function committedReader(file: string) {
  const reader = new Database(file, { readonly: true });
  cleanups.push(() => reader.close());
  const byHost = reader.query<{ n: number }, [string]>('SELECT count(*) AS n FROM scans WHERE hostname = ?');
  return (hostname: string) => byHost.get(hostname)!.n;
}

describe('acknowledgement after COMMIT (DESIGN §6: a 204/200 means the data is committed)', () => {
  test('at the moment each write resolves, another connection already sees its row', async () => {
    const database = freshDatabase();
    const writer = createScanWriter(sqliteScanWriteRecordsSync(database), 3);
    const seen = committedReader(database.file);
    const hosts = Array.from({ length: 8 }, (_, i) => `h${i}.example.com`);
    const visibleAtAck = await Promise.all(hosts.map((host) => writer.write(scan(host), Date.now()).then(() => seen(host))));
    expect(visibleAtAck).toEqual(hosts.map(() => 1));
    const bulk = await writer.writeBulk([scan('bulk.example.com')], Date.now()).then(() => seen('bulk.example.com'));
    expect(bulk).toBe(1);
  });

  test('a COMMIT that fails is never acknowledged: every waiter of the batch is rejected and nothing is stored', async () => {
    const database = freshDatabase();
    const restore = failCommits(database.sqlite, 'scans');
    const writer = createScanWriter(sqliteScanWriteRecordsSync(database));
    const results = await Promise.allSettled([writer.write(scan('a.example.com'), Date.now()), writer.writeBulk([scan('b.example.com')], Date.now())]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as ApiError).code : r.status))).toEqual(['persistence_failed', 'persistence_failed']);
    expect(rows(database)).toBe(0);
    restore();
    await writer.write(scan(), Date.now());
    expect(rows(database)).toBe(1);
  });

  test('a COMMIT that fails after one request of the batch was refused reports each failed row once', async () => {
    const database = freshDatabase();
    database.sqlite.run("CREATE TRIGGER refuse BEFORE INSERT ON scans WHEN NEW.hostname = 'bad.example.com' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    failCommits(database.sqlite, 'scans');
    const failures: number[] = [];
    const writer = createScanWriter(sqliteScanWriteRecordsSync(database), undefined, { onFailure: (n) => failures.push(n) });
    const results = await Promise.allSettled([
      writer.write(scan('a.example.com'), Date.now()),
      writer.write(scan('bad.example.com'), Date.now()),
      writer.writeBulk([scan('b.example.com'), scan('c.example.com')], Date.now()),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    // The refused request's row, then the three rows of the failed COMMIT: four rows sent, four reported.
    expect(failures).toEqual([1, 3]);
    expect(rows(database)).toBe(0);
  });

  test('through HTTP: telemetry 204 and bulk 200 come only after their rows are visible to another connection', async () => {
    const t = await makeTestApp();
    cleanups.push(() => t.close());
    const key = await t.keyWith('probe:scan');
    const seen = committedReader(t.config.databaseFile);
    const single = await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload({ hostname: 'one.example.com' })), Date.now())).then((r) => [r.status, seen('one.example.com')]);
    expect(single).toEqual([204, 1]);
    const body = JSON.stringify({ scans: [scanPayload({ hostname: 'bulk.example.com' })] });
    const bulk = await t.request('/api/v1/probe/scan-bulk', signedInit(key, body, Date.now())).then((r) => [r.status, seen('bulk.example.com')]);
    expect(bulk).toEqual([200, 1]);
  });

  test('through HTTP: when the COMMIT fails after one request of the group was refused, the log counts each failed scan once', async () => {
    const t = await makeTestApp();
    cleanups.push(() => t.close());
    t.database.sqlite.run("CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.scans WHEN NEW.hostname = 'bad.example.com' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    failCommits(t.database.sqlite, 'scans');
    const key = await t.keyWith('probe:scan');
    const hosts = ['one.example.com', 'bad.example.com', 'two.example.com'];
    const responses = await Promise.all(hosts.map((hostname) => t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload({ hostname })), Date.now()))));
    expect(responses.map((r) => r.status)).toEqual([500, 500, 500]);
    // However the requests were grouped, the failed scans add up to the scans sent.
    const failed = t.logLines().filter((line) => line.msg === 'scan batch failed');
    expect(failed.reduce((sum, line) => sum + (line.rows as number), 0)).toBe(hosts.length);
  });

  test('through HTTP: when the COMMIT fails, telemetry and bulk answer 500 persistence_failed, never 204/200', async () => {
    const t = await makeTestApp();
    cleanups.push(() => t.close());
    failCommits(t.database.sqlite, 'scans');
    const key = await t.keyWith('probe:scan');
    const single = await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload()), Date.now()));
    const bulk = await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans: [scanPayload()] }), Date.now()));
    for (const response of [single, bulk]) {
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ error: 'persistence_failed' });
    }
    expect(rows(t.database)).toBe(0);
  });
});

describe('spec §7 persistence failure', () => {
  let t: TestApp;
  afterEach(() => t?.close());

  test('500 persistence_failed with error and detail when the database refuses the write', async () => {
    t = await makeTestApp();
    t.database.sqlite.run("CREATE TRIGGER refuse BEFORE INSERT ON scans BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    const key = await t.keyWith('probe:scan');
    const response = await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload()), Date.now()));
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: string; detail: string };
    expect(body.error).toBe('persistence_failed');
    expect(body.detail.length).toBeGreaterThan(0);
    expect(body.detail).not.toContain('disk says no');
    // The cause goes to the (line-budgeted) process log, with the failed request's line after it.
    expect(t.logLines().map((line) => [line.level, line.msg, line.rows ?? line.error])).toEqual([
      ['error', 'scan batch failed', 1],
      ['error', 'request', 'persistence_failed'],
    ]);
  });
});

describe('graceful shutdown (DESIGN §5 operations)', () => {
  test('shutdown flushes queued scans before closing the database', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const config = loadConfig({ http: '127.0.0.1:0', 'data-dir': dir.dir }, {});
    const setup = openDatabase(config.databaseFile);
    migrateDatabase(setup);
    const key = (await (await import('../src/auth/keys.ts')).createKeyStore(sqliteAuthRecords(setup), sqliteChangeFeed(setup), { now: () => Date.now() }).create({ scopes: ['probe:scan'] })).key;
    setup.close();

    const server = await startServer(config);
    const body = JSON.stringify(scanPayload());
    const sent = Array.from({ length: 20 }, () => fetch(`${server.url}${TELEMETRY}`, signedInit(key, body, Date.now())));
    const statuses = await Promise.all(sent.map(async (r) => (await r).status));
    await server.shutdown();
    expect(statuses.every((s) => s === 204)).toBe(true);
    const check = new Database(config.databaseFile, { readonly: true });
    expect((check.query('SELECT count(*) AS n FROM scans').get() as { n: number }).n).toBe(20);
    check.close();
  });
});
