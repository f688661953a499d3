import { afterEach, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import { createKeyStore } from '../src/auth/keys.ts';
import { loadConfig } from '../src/config.ts';
import { ApiError } from '../src/lib/errors.ts';
import { startServer } from '../src/server.ts';
import { openEngine } from '../src/storage/open.ts';
import { writePause } from '../src/storage/sqlite/write-pause.ts';
import { normalizeScan, type NormalizedScan } from '../src/telemetry/payload.ts';
import { createScanWriter, type WriterHooks } from '../src/telemetry/writer.ts';
import { makeTestApp, tempDir, type TestApp } from './helpers/app.ts';
import { engineEnv, queryDataDir, testSqliteOnly } from './helpers/engine.ts';
import { failCommitsOf, failInsertsWhen, failWritesTo } from './helpers/failing-commits.ts';
import { TELEMETRY, scanCount, scanPayload, signedInit } from './helpers/probe.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A test app on this run's engine, closed after the test: its scan write records are what the writer commits to. */
async function testApp(): Promise<TestApp> {
  const t = await makeTestApp();
  cleanups.push(() => t.close());
  return t;
}

/** A writer over the test app's scan write records (SQLite's synchronous ones, with their write pause; PostgreSQL's). */
const writerOf = (t: TestApp, maxBatchRows?: number, hooks?: WriterHooks) => createScanWriter(t.storage.hot.scanWrites, maxBatchRows, hooks);

/** The pause of SQLite's writes (the WAL checkpointer's), shared by the connection's writers. */
const pauseOf = (t: TestApp) => writePause(t.database.sqlite);

const BAD_HOST = "NEW.hostname = 'bad.example.com'";

function scan(hostname = 'shop.example.com'): NormalizedScan {
  const result = normalizeScan({ hostname, signals: {} }, Date.now());
  if (!result.ok) throw new Error(result.detail);
  return result.scan;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Makes every scan row take a few ms to insert (longer than a group's backlog slice). */
function slowRows(sqlite: Database): void {
  sqlite.run('CREATE TRIGGER slow_row AFTER INSERT ON scans BEGIN SELECT sum(x) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) SELECT x FROM c); END');
}

const WRITE_PAUSE = "the WAL checkpointer's write pause is SQLite's (PostgreSQL checkpoints without pausing writes)";

describe('group-commit writer (DESIGN §6)', () => {
  test('concurrent scans are committed together and each is answered after COMMIT', async () => {
    const t = await testApp();
    const writer = writerOf(t);
    const hosts = Array.from({ length: 50 }, (_, i) => `h${i}.example.com`);
    await Promise.all(hosts.map((host) => writer.write(scan(host), Date.now())));
    // A second connection sees every row: they are committed, not just queued.
    const seen = await committedReader(t);
    expect(await Promise.all(hosts.map(seen))).toEqual(hosts.map(() => 1));
  });

  test('a full batch is written at once without waiting for the end of the tick', async () => {
    const t = await testApp();
    const records = t.storage.hot.scanWrites;
    const groups: number[] = [];
    const writer = createScanWriter({ commitGroup: (group, slice) => (groups.push(group.length), records.commitGroup(group, slice)) }, 3);
    const written = Array.from({ length: 7 }, () => writer.write(scan(), Date.now()));
    // Within the turn, a full batch went to storage without waiting for its end: on SQLite both,
    // committed at once (counted before the turn ends; one row still queued); on PostgreSQL the
    // first, the second waiting for its commit (groups commit one at a time).
    expect(groups).toEqual(t.config.postgres ? [3] : [3, 3]);
    if (!t.config.postgres) expect(await scanCount(t)).toBe(6);
    await Promise.all(written);
    expect(await scanCount(t)).toBe(7);
  });

  testSqliteOnly(WRITE_PAUSE, 'while the WAL checkpointer pauses writes, rows wait; then they are committed in batches of at most the batch size', async () => {
    const t = await testApp();
    const commits: number[] = [];
    const writer = writerOf(t, 3, { onCommit: (n) => commits.push(n) });
    const pause = pauseOf(t);
    pause.pause();
    const written = Array.from({ length: 7 }, () => writer.write(scan(), Date.now()));
    await Bun.sleep(5);
    expect(await scanCount(t)).toBe(0);
    pause.resume();
    await Promise.all(written);
    expect(await scanCount(t)).toBe(7);
    // Slices of the backlog: never more than the batch size (fewer when a slice's time runs out first).
    expect(commits.length).toBeGreaterThanOrEqual(3);
    expect(commits.every((n) => n <= 3)).toBe(true);
  });

  testSqliteOnly(WRITE_PAUSE, 'a backlog left by a write pause is written in slices of about 2 ms, one group per turn of the event loop, in the order queued', async () => {
    const t = await testApp();
    const database = t.database;
    slowRows(database.sqlite);
    const events: string[] = [];
    const writer = writerOf(t, undefined, { onCommit: (n) => events.push(`commit ${n}`) });
    const pause = pauseOf(t);
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

  testSqliteOnly(WRITE_PAUSE, 'while a backlog is written, each group also writes at least the rows that arrived during the turn before it (the writer keeps up), in the order queued', async () => {
    const t = await testApp();
    const database = t.database;
    slowRows(database.sqlite);
    let committed = 0;
    // A small batch size: a group considers only part of the queue, and leaves part of that part.
    const writer = writerOf(t, 4, { onCommit: (n) => (committed += n) });
    const pause = pauseOf(t);
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

  test('close() commits the rows still queued (on SQLite at once, even during a write pause) and refuses new ones', async () => {
    const t = await testApp();
    const writer = writerOf(t);
    if (!t.config.postgres) pauseOf(t).pause();
    const pending = [writer.write(scan(), Date.now()), writer.write(scan(), Date.now())];
    const closed = writer.close();
    // SQLite's records commit within the call; PostgreSQL's once close() resolves.
    if (!t.config.postgres) expect(await scanCount(t)).toBe(2);
    await closed;
    expect(await scanCount(t)).toBe(2);
    await Promise.all(pending);
    await expect(writer.write(scan(), Date.now())).rejects.toBeInstanceOf(ApiError);
  });

  test('a scan whose row the database refuses fails alone: the rest of its batch is committed', async () => {
    const t = await testApp();
    await failInsertsWhen(t, 'scans', BAD_HOST);
    const failures: number[] = [];
    const commits: number[] = [];
    const writer = writerOf(t, undefined, { onCommit: (n) => commits.push(n), onFailure: (n) => failures.push(n) });
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
    const hosts = await t.query('SELECT hostname FROM scans ORDER BY hostname');
    expect(hosts.map((h) => h.hostname)).toEqual(['a.example.com', 'c.example.com']);
    await writer.write(scan(), Date.now()); // the next batch is unaffected
    expect(await scanCount(t)).toBe(3);
  });

  test('through HTTP: one telemetry request refused by the database in a group of concurrent ones gets 500, the others 204', async () => {
    const t = await testApp();
    await failInsertsWhen(t, 'scans', BAD_HOST);
    const key = await t.keyWith('probe:scan');
    const hosts = ['one.example.com', 'bad.example.com', 'two.example.com', 'three.example.com'];
    const responses = await Promise.all(hosts.map((hostname) => t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload({ hostname })), Date.now()))));
    expect(responses.map((r) => r.status)).toEqual([204, 500, 204, 204]);
    expect(((await responses[1]!.json()) as { error: string }).error).toBe('persistence_failed');
    const reader = await committedReader(t);
    expect(await Promise.all(hosts.map(reader))).toEqual([1, 0, 1, 1]);
  });
});

/** A second connection to the test app's database, closed after the test: what it sees of a hostname's scans is committed. */
async function committedReader(t: TestApp): Promise<(hostname: string) => Promise<number>> {
  if (t.config.postgres) {
    const reader = new SQL({ url: t.config.postgres.url, max: 1 });
    cleanups.push(() => reader.close());
    return async (hostname) => Number((await reader`SELECT count(*) AS n FROM scans WHERE hostname = ${hostname}`)[0].n);
  }
  const reader = new Database(t.config.databaseFile, { readonly: true });
  cleanups.push(() => reader.close());
  const byHost = reader.query<{ n: number }, [string]>('SELECT count(*) AS n FROM scans WHERE hostname = ?');
  return async (hostname) => byHost.get(hostname)!.n;
}

describe('acknowledgement after COMMIT (DESIGN §6: a 204/200 means the data is committed)', () => {
  test('at the moment each write resolves, another connection already sees its row', async () => {
    const t = await testApp();
    const writer = writerOf(t, 3);
    const seen = await committedReader(t);
    const hosts = Array.from({ length: 8 }, (_, i) => `h${i}.example.com`);
    const visibleAtAck = await Promise.all(hosts.map((host) => writer.write(scan(host), Date.now()).then(() => seen(host))));
    expect(visibleAtAck).toEqual(hosts.map(() => 1));
    const bulk = await writer.writeBulk([scan('bulk.example.com')], Date.now()).then(() => seen('bulk.example.com'));
    expect(bulk).toBe(1);
  });

  test('a COMMIT that fails is never acknowledged: every waiter of the batch is rejected and nothing is stored', async () => {
    const t = await testApp();
    const restore = await failCommitsOf(t, 'scans');
    const writer = writerOf(t);
    const results = await Promise.allSettled([writer.write(scan('a.example.com'), Date.now()), writer.writeBulk([scan('b.example.com')], Date.now())]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as ApiError).code : r.status))).toEqual(['persistence_failed', 'persistence_failed']);
    expect(await scanCount(t)).toBe(0);
    await restore();
    await writer.write(scan(), Date.now());
    expect(await scanCount(t)).toBe(1);
  });

  test('a COMMIT that fails after one request of the batch was refused reports each failed row once', async () => {
    const t = await testApp();
    await failInsertsWhen(t, 'scans', BAD_HOST);
    await failCommitsOf(t, 'scans');
    const failures: number[] = [];
    const writer = writerOf(t, undefined, { onFailure: (n) => failures.push(n) });
    const results = await Promise.allSettled([
      writer.write(scan('a.example.com'), Date.now()),
      writer.write(scan('bad.example.com'), Date.now()),
      writer.writeBulk([scan('b.example.com'), scan('c.example.com')], Date.now()),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    // The refused request's row, then the three rows of the failed COMMIT: four rows sent, four reported.
    expect(failures).toEqual([1, 3]);
    expect(await scanCount(t)).toBe(0);
  });

  test('through HTTP: telemetry 204 and bulk 200 come only after their rows are visible to another connection', async () => {
    const t = await testApp();
    const key = await t.keyWith('probe:scan');
    const seen = await committedReader(t);
    const single = await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload({ hostname: 'one.example.com' })), Date.now())).then(async (r) => [r.status, await seen('one.example.com')]);
    expect(single).toEqual([204, 1]);
    const body = JSON.stringify({ scans: [scanPayload({ hostname: 'bulk.example.com' })] });
    const bulk = await t.request('/api/v1/probe/scan-bulk', signedInit(key, body, Date.now())).then(async (r) => [r.status, await seen('bulk.example.com')]);
    expect(bulk).toEqual([200, 1]);
  });

  test('through HTTP: when the COMMIT fails after one request of the group was refused, the log counts each failed scan once', async () => {
    const t = await testApp();
    await failInsertsWhen(t, 'scans', BAD_HOST);
    await failCommitsOf(t, 'scans');
    const key = await t.keyWith('probe:scan');
    const hosts = ['one.example.com', 'bad.example.com', 'two.example.com'];
    const responses = await Promise.all(hosts.map((hostname) => t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload({ hostname })), Date.now()))));
    expect(responses.map((r) => r.status)).toEqual([500, 500, 500]);
    // However the requests were grouped, the failed scans add up to the scans sent.
    const failed = t.logLines().filter((line) => line.msg === 'scan batch failed');
    expect(failed.reduce((sum, line) => sum + (line.rows as number), 0)).toBe(hosts.length);
  });

  test('through HTTP: when the COMMIT fails, telemetry and bulk answer 500 persistence_failed, never 204/200', async () => {
    const t = await testApp();
    await failCommitsOf(t, 'scans');
    const key = await t.keyWith('probe:scan');
    const single = await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload()), Date.now()));
    const bulk = await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans: [scanPayload()] }), Date.now()));
    for (const response of [single, bulk]) {
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ error: 'persistence_failed' });
    }
    expect(await scanCount(t)).toBe(0);
  });
});

describe('spec §7 persistence failure', () => {
  test('500 persistence_failed with error and detail when the database refuses the write', async () => {
    const t = await testApp();
    await failWritesTo(t, 'scans', 'disk says no');
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
    // On PostgreSQL the data directory's database (test/helpers/engine.ts), as the CLI and server naming it share.
    const config = loadConfig({ http: '127.0.0.1:0', 'data-dir': dir.dir }, await engineEnv(dir.dir));
    const setup = await openEngine(config, 'svc-test');
    const key = (await createKeyStore(setup.storage.auth, setup.storage.changes, { now: () => Date.now() }).create({ scopes: ['probe:scan'] })).key;
    await setup.close();

    const server = await startServer(config);
    const body = JSON.stringify(scanPayload());
    const sent = Array.from({ length: 20 }, () => fetch(`${server.url}${TELEMETRY}`, signedInit(key, body, Date.now())));
    const statuses = await Promise.all(sent.map(async (r) => (await r).status));
    await server.shutdown();
    expect(statuses.every((s) => s === 204)).toBe(true);
    expect(await queryDataDir(dir.dir, 'SELECT count(*) AS n FROM scans')).toEqual([{ n: 20 }]);
  });
});
