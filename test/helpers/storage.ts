// Storage contract tests run one suite on every engine: SQLite always (a new file per test), and
// PostgreSQL when SVC_TEST_DATABASE_URL is set (npm run test:postgres; a new database per test).
import { afterEach } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrateDatabase, openDatabase, type AppDatabase } from '../../src/storage/sqlite/db/index.ts';
import { migratePostgres } from '../../src/storage/postgres/db/migrate.ts';
import { openPostgresClient, type PostgresClient } from '../../src/storage/postgres/client.ts';
import type { Storage } from '../../src/storage/index.ts';
import { postgresStorage } from '../../src/storage/postgres/index.ts';
import { sqliteStorage } from '../../src/storage/sqlite/index.ts';
import { createTestDatabase, TEST_DATABASE_URL } from './postgres.ts';

/** A migrated, empty engine for one test. */
export type OpenedEngine =
  | { kind: 'sqlite'; database: AppDatabase; close(): Promise<void> }
  | { kind: 'postgres'; client: PostgresClient; url: string; close(): Promise<void> };

export interface EngineUnderTest {
  name: OpenedEngine['kind'];
  open(): Promise<OpenedEngine>;
}

const sqliteEngine: EngineUnderTest = {
  name: 'sqlite',
  async open() {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-storage-'));
    const database = openDatabase(path.join(dir, 'svc.db'));
    migrateDatabase(database);
    return {
      kind: 'sqlite',
      database,
      close: async () => {
        database.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const postgresEngine: EngineUnderTest = {
  name: 'postgres',
  async open() {
    const created = await createTestDatabase();
    await migratePostgres(created.url);
    const client = openPostgresClient(created.url, { max: 4 });
    return {
      kind: 'postgres',
      client,
      url: created.url,
      close: async () => {
        await client.close();
        await created.drop();
      },
    };
  },
};

/** Plain SQL with `?` placeholders, on either engine (a bigint may come back as a string: read it with Number). */
export async function query(opened: OpenedEngine, text: string, ...params: (string | number | null)[]): Promise<Record<string, unknown>[]> {
  if (opened.kind === 'sqlite') return opened.database.sqlite.query(text).all(...params) as Record<string, unknown>[];
  let n = 0;
  return [...(await opened.client.sql.unsafe(text.replace(/\?/g, () => `$${++n}`), params))];
}

/**
 * An instance's storage on the engine's database: its own connections and change feed (listening,
 * on PostgreSQL), as another svc would open it; `close` ends them.
 */
export async function storageOn(opened: { kind: 'sqlite'; database: Pick<AppDatabase, 'file'> } | { kind: 'postgres'; url: string }): Promise<{ storage: Storage; close(): Promise<void> }> {
  if (opened.kind === 'sqlite') {
    const database = openDatabase(opened.database.file);
    return { storage: sqliteStorage(database), close: async () => database.close() };
  }
  const client = openPostgresClient(opened.url, { max: 4 });
  const storage = postgresStorage(client);
  await storage.changes.ready;
  return {
    storage,
    close: async () => {
      await storage.changes.close();
      await client.close();
    },
  };
}

/**
 * What a test opens on the engines, closed after it, the last opened first. Called once at a test
 * file's top level; `open`, `storageOf` and `closeAfter` register what they open.
 */
export function closedAfterEachTest() {
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });
  const closeAfter = (close: () => Promise<void>) => void closing.push(close);
  return {
    closeAfter,
    /** A migrated, empty engine for this test. */
    async open(engine: EngineUnderTest): Promise<OpenedEngine> {
      const opened = await engine.open();
      closeAfter(opened.close);
      return opened;
    },
    /** An instance's storage on the engine's database (storageOn). */
    async storageOf(opened: OpenedEngine): Promise<Storage> {
      const { storage, close } = await storageOn(opened);
      closeAfter(close);
      return storage;
    },
  };
}

/** The engines this run can test: `describe.each(ENGINES)('... on $name', ...)`. */
export const ENGINES: EngineUnderTest[] = TEST_DATABASE_URL ? [sqliteEngine, postgresEngine] : [sqliteEngine];

