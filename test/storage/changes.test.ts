import { afterEach, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import { CHANGE_CHANNEL, postgresChangeFeed, type PostgresChangeFeed } from '../../src/storage/postgres/changes.ts';
import { sqliteChangeFeed } from '../../src/storage/sqlite/changes.ts';
import type { ChangeFeed } from '../../src/storage/changes.ts';
import { TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { ENGINES, type OpenedEngine } from '../helpers/storage.ts';

let opened: OpenedEngine;
let feed: ChangeFeed;
let other: { run(statement: string): Promise<void>; close(): Promise<void> };
afterEach(async () => {
  await other?.close();
  if ('close' in feed) await (feed as PostgresChangeFeed).close();
  await opened.close();
});

/** The engine, its change feed, and another connection to the same database (as the CLI or another instance would write). */
async function open(engine: (typeof ENGINES)[number]) {
  opened = await engine.open();
  if (opened.kind === 'sqlite') {
    feed = sqliteChangeFeed(opened.database);
    const connection = new Database(opened.database.file);
    other = { run: async (statement) => void connection.run(statement), close: async () => connection.close() };
  } else {
    const postgres = postgresChangeFeed(opened.client);
    await postgres.ready;
    feed = postgres;
    const connection = new SQL({ url: opened.url, max: 1 });
    other = { run: async (statement) => void (await connection.unsafe(statement)), close: () => connection.close() };
  }
}

/** Waits until `stamp` moves from `from` (a notification arrives a few ms after its commit), up to 5 s. */
async function movesFrom(stamp: () => string | number, from: string | number): Promise<boolean> {
  for (let waited = 0; waited < 5000; waited += 10) {
    if (stamp() !== from) return true;
    await Bun.sleep(10);
  }
  return false;
}

const KEY_ROW = "INSERT INTO api_keys (id, name, key_hash, key_prefix, scopes, allowed_domains, created_at) VALUES ('k1', 'n', 'h', 'p', '[]', '[]', 1)";

describe.each(ENGINES)('the change feed ($name)', (engine) => {
  test("another connection's commit to a table moves that table's stamp and the any-change stamp", async () => {
    await open(engine);
    const keys = feed.tableStamp(['api_keys']);
    const anything = feed.anyChange();
    const [keysBefore, anyBefore] = [keys(), anything()];
    expect(keys()).toBe(keysBefore);
    await other.run(KEY_ROW);
    expect(await movesFrom(keys, keysBefore)).toBe(true);
    expect(await movesFrom(anything, anyBefore)).toBe(true);
  });
});

describe.each(ENGINES.filter((engine) => engine.name === 'postgres'))('the PostgreSQL change feed', (engine) => {
  test("a commit moves only the stamps of the tables it wrote; a rollback moves none", async () => {
    await open(engine);
    const keys = feed.tableStamp(['api_keys']);
    const leads = feed.tableStamp(['leads']);
    const leadsBefore = leads();
    await other.run(`BEGIN; ${KEY_ROW}; ROLLBACK`);
    const keysBefore = keys();
    await other.run(KEY_ROW);
    expect(await movesFrom(keys, keysBefore)).toBe(true);
    // The rollback's notification would have arrived before the commit's.
    expect(keys()).toBe(keys());
    expect(leads()).toBe(leadsBefore);
  });

  test("this process's own write moves the stamp before its notification arrives", async () => {
    await open(engine);
    const keys = feed.tableStamp(['api_keys']);
    const before = keys();
    (feed as PostgresChangeFeed).wrote(['api_keys']);
    expect(keys()).not.toBe(before);
  });

  test('every table of svc notifies the channel when written (a new table without the trigger fails here)', async () => {
    await open(engine);
    if (opened.kind !== 'postgres') throw new Error('unreachable');
    const tables = await opened.client.sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`;
    const notifying = await opened.client.sql`
      SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
      WHERE p.proname = 'svc_notify_change' AND NOT t.tgisinternal ORDER BY c.relname`;
    expect(tables.length).toBeGreaterThan(10);
    expect(notifying.map((row: { relname: string }) => row.relname)).toEqual(tables.map((row: { tablename: string }) => row.tablename));
    expect(CHANGE_CHANNEL).toBe('svc_changes');
  });

  test('while the listening connection is gone, every read moves the stamps (caches ask storage); back, they hold again under a new epoch', async () => {
    await open(engine);
    if (opened.kind !== 'postgres') throw new Error('unreachable');
    const keys = feed.tableStamp(['api_keys']);
    const before = keys();
    const admin = new SQL({ url: opened.url, max: 1 });
    // The server's own database: a database cannot refuse connections by a session connected to it.
    const server = new SQL({ url: TEST_DATABASE_URL!, max: 1 });
    try {
      // No new connection may come in (this one stays), so the feed cannot listen again at once.
      const [{ name }] = await admin`SELECT current_database() AS name`;
      await server.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
      const ended = await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'listen%' AND pid <> pg_backend_pid()`;
      expect(ended.length).toBe(1);
      // Deaf within a second of the last thing heard; then every read differs.
      let deaf = false;
      for (let waited = 0; waited < 5000 && !deaf; waited += 50) {
        await Bun.sleep(50);
        deaf = keys() !== keys();
      }
      expect(deaf).toBe(true);
      await server.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`);
      // Reconnected (with backoff): stamps hold still again, and differ from before the loss.
      let steady = false;
      for (let waited = 0; waited < 20_000 && !steady; waited += 100) {
        await Bun.sleep(100);
        steady = keys() === keys();
      }
      expect(steady).toBe(true);
      expect(keys()).not.toBe(before);
    } finally {
      await admin.close();
      await server.close();
    }
  }, 30_000);
});
