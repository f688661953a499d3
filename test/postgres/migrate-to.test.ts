// svc migrate-to (issue 30 item 7): a populated SQLite data directory copied into PostgreSQL, every
// table with its data, checked by row counts; on a real PostgreSQL (npm run test:postgres).
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { fixedClock } from '../../src/lib/clock.ts';
import { acquireInstanceLock } from '../../src/storage/sqlite/instance-lock.ts';
import { makeTestApp, tempDir, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, describePostgres, type TestDatabase } from '../helpers/postgres.ts';
import { scanPayload, signedInit } from '../helpers/probe.ts';
import { spawnServer } from '../helpers/server.ts';
import { addFaq, enrich, realisticProduct, seedStore, syncProduct } from '../helpers/signals.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const SHOP = 'moving.myplatform-a.com';

describePostgres('svc migrate-to', () => {
  let target: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  beforeEach(async () => {
    target = await createTestDatabase();
    dir = tempDir('svc-migrate-to-');
  });
  afterEach(async () => {
    await target.drop();
    dir.remove();
  });

  /** A data directory with something in every kind of table: keys, leads, a store with a product, its enrichment and an FAQ, scans. */
  async function populate(): Promise<void> {
    const t: TestApp = await makeTestApp({ dataDir: dir.dir, clock: fixedClock(NOW), engine: 'sqlite' });
    try {
      const storeId = await seedStore(t, 'platform-a', SHOP);
      await syncProduct(t, storeId, realisticProduct('platform-a', 777, SHOP));
      expect((await enrich(t, storeId, '777')).status).toBe(200);
      await addFaq(t, { storeId, entityType: 'product', entityRef: '777', question: 'Does it fit?', answer: 'Yes.', status: 'approved' });
      // SQLite's text holds U+0000 (the API strips it; an older svc, or a hand edit, may not have): PostgreSQL's cannot.
      t.database.sqlite.run("UPDATE faq_entries SET answer = 'Yes' || char(0) || '.'");
      await t.leads.create('owner@example.com', true);
      const key = await t.keyWith('probe:scan');
      const scans = Array.from({ length: 300 }, (_, n) => scanPayload({ url: `https://shop.example.com/p/${n}`, scannedAt: new Date(NOW - n * 60_000).toISOString() }));
      expect((await t.request('/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans }), NOW))).status).toBe(200);
    } finally {
      t.close();
    }
  }

  /** Row counts of every svc table, as the source SQLite file holds them. */
  function sqliteCounts(): Record<string, number> {
    const { Database } = require('bun:sqlite') as typeof import('bun:sqlite');
    const db = new Database(`${dir.dir}/svc.db`, { readonly: true });
    try {
      const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations'").all();
      return Object.fromEntries(tables.map(({ name }) => [name, db.query<{ n: number }, []>(`SELECT count(*) AS n FROM "${name}"`).get()!.n]));
    } finally {
      db.close();
    }
  }

  test('copies every table with its rows, counts equal to the source; booleans, JSON and times arrive as they were', async () => {
    await populate();
    const moved = await runCli(['migrate-to', '--data-dir', dir.dir, '--database-url', target.url], { timeoutMs: 60_000, engine: 'sqlite' });
    expect(moved.code).toBe(0);
    const source = sqliteCounts();
    expect(moved.json).toMatchObject({ from: `${dir.dir}/svc.db`, to: expect.stringMatching(/^postgres:\/\/127\.0\.0\.1:\d+\//), tables: source, nulsDropped: 1 });
    expect(moved.json.rows).toBe(Object.values(moved.json.tables as Record<string, number>).reduce((a, b) => a + b, 0));
    expect(source.scans).toBe(300);
    expect(moved.stdout + moved.stderr).not.toContain(decodeURIComponent(new URL(target.url).password));

    const sql = new SQL(target.url);
    try {
      for (const [table, rows] of Object.entries(source)) expect([table, Number((await sql.unsafe(`SELECT count(*) AS n FROM "${table}"`))[0].n)]).toEqual([table, rows]);
      const [lead] = await sql`SELECT email, verified FROM leads`;
      expect(lead).toEqual({ email: 'owner@example.com', verified: true });
      const [faq] = await sql`SELECT question, answer FROM faq_entries`;
      expect(faq).toEqual({ question: 'Does it fit?', answer: 'Yes.' });
      const [scan] = await sql`SELECT url, scanned_at, signals FROM scans ORDER BY scanned_at DESC LIMIT 1`;
      expect([scan.url, Number(scan.scanned_at)]).toEqual(['https://shop.example.com/p/0', NOW]);
      expect(JSON.parse(scan.signals)).toBeObject();
    } finally {
      await sql.close();
    }
  }, 90_000);

  test('the rollups come along: PostgreSQL has no backlog after the copy, and every dashboard answer equals SQLite\'s', async () => {
    await populate();
    const moved = await runCli(['migrate-to', '--data-dir', dir.dir, '--database-url', target.url], { timeoutMs: 60_000, engine: 'sqlite' });
    expect(moved.code).toBe(0);
    expect(moved.json.rollups).toBe('copied');
    expect(moved.json.tables.scan_rollups).toBeGreaterThan(0);
    const sql = new SQL(target.url);
    try {
      // Before any svc starts on it: every copied scan is below the watermark, so none waits to be folded.
      const [state] = await sql`SELECT (SELECT count(*) FROM scans WHERE xact >= s.watermark)::int AS unfolded FROM scan_rollup_state s`;
      expect(state.unfolded).toBe(0);
    } finally {
      await sql.close();
    }

    const key = (await runCli(['keys', 'create', '--scopes', 'dashboard:read', '--data-dir', dir.dir], { engine: 'sqlite' })).json.key as string;
    const sqliteServer = await spawnServer({ dataDir: dir.dir, env: {}, engine: 'sqlite' });
    const postgresServer = await spawnServer({ dataDir: `${dir.dir}/pg`, env: { SVC_DATABASE_URL: target.url } });
    try {
      const postgresKey = (await runCli(['keys', 'create', '--scopes', 'dashboard:read', '--data-dir', `${dir.dir}/pg`], { env: { SVC_DATABASE_URL: target.url } })).json.key as string;
      const routes = [
        '/api/v1/dashboard/stats?groupBy=grade',
        '/api/v1/dashboard/stats?groupBy=day',
        '/api/v1/dashboard/stats?groupBy=month',
        '/api/v1/dashboard/stats?groupBy=country',
        '/api/v1/dashboard/stats?groupBy=pageType&platform=platform-a',
        '/api/v1/dashboard/hostnames',
        '/api/v1/dashboard/scans?limit=50',
      ];
      for (const route of routes) {
        const [onSqlite, onPostgres] = await Promise.all([
          fetch(`${sqliteServer.url}${route}`, { headers: { authorization: `Bearer ${key}` } }).then((res) => res.json()),
          fetch(`${postgresServer.url}${route}`, { headers: { authorization: `Bearer ${postgresKey}` } }).then((res) => res.json()),
        ]);
        expect({ route, answer: onPostgres }).toEqual({ route, answer: onSqlite });
      }
    } finally {
      await sqliteServer.stop();
      await postgresServer.stop();
    }
  }, 90_000);

  test('a target that already holds rows is refused (exit 1) and left as it was; nothing is merged', async () => {
    await populate();
    expect((await runCli(['migrate-to', '--data-dir', dir.dir, '--database-url', target.url], { timeoutMs: 60_000, engine: 'sqlite' })).code).toBe(0);
    const again = await runCli(['migrate-to', '--data-dir', dir.dir, '--database-url', target.url], { timeoutMs: 60_000, engine: 'sqlite' });
    expect(again.code).toBe(1);
    expect(again.stderr.trim().split('\n').at(-1)).toMatch(/^svc: the PostgreSQL database already holds rows in \w+: migrate-to copies into an empty database only$/);
    const sql = new SQL(target.url);
    try {
      expect(Number((await sql`SELECT count(*) AS n FROM scans`)[0].n)).toBe(300);
    } finally {
      await sql.close();
    }
  }, 90_000);

  test('a server running on the data directory (its instance lock held) is refused: writes made during the copy would not move', async () => {
    await populate();
    const lock = acquireInstanceLock(dir.dir, 'a test standing in for a running server');
    try {
      const refused = await runCli(['migrate-to', '--data-dir', dir.dir, '--database-url', target.url], { timeoutMs: 60_000, engine: 'sqlite' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('is in use by another svc (a test standing in for a running server); stop it first');
    } finally {
      lock.release();
    }
    const sql = new SQL(target.url);
    try {
      expect((await sql`SELECT to_regclass('public.scans') IS NULL AS untouched`)[0].untouched).toBe(true);
    } finally {
      await sql.close();
    }
  }, 90_000);

  test('no SQLite database in the data directory, or no --database-url: a usage error (exit 2), nothing created', async () => {
    const none = await runCli(['migrate-to', '--data-dir', dir.dir, '--database-url', target.url], { engine: 'sqlite' });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`there is no SQLite database at ${dir.dir}/svc.db to copy`);
    const noUrl = await runCli(['migrate-to', '--data-dir', dir.dir], { engine: 'sqlite' });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('migrate-to needs --database-url');
  });
});
