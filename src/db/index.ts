import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import { migrate } from 'drizzle-orm/bun-sqlite/migrator';
import { ASSET_ROOT } from '../lib/paths.ts';
import * as schema from './schema/index.ts';

/** Drizzle over bun:sqlite; `$client` is the same connection, for hot-path prepared statements. */
export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** The open database: `db` for drizzle queries, `sqlite` for prepared hot-path statements. */
export interface AppDatabase {
  sqlite: Database;
  db: Db;
  file: string;
  close(): void;
}

export const MIGRATIONS_FOLDER = path.join(ASSET_ROOT, 'drizzle');

export function openDatabase(file: string): AppDatabase {
  mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new Database(file, { create: true, strict: true });
  // WAL lets the dashboard read while the writer commits; NORMAL keeps every committed
  // transaction across a process crash (only an OS crash or power loss can drop the last ones).
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec('PRAGMA synchronous = NORMAL');
  sqlite.exec('PRAGMA busy_timeout = 5000');
  sqlite.exec('PRAGMA foreign_keys = ON');
  const db = drizzle({ client: sqlite, schema });
  return {
    sqlite,
    db,
    file,
    close: () => sqlite.close(),
  };
}

/** Apply pending migrations from drizzle/ (embedded in the binary); returns how many ran. */
export function migrateDatabase(database: AppDatabase): { applied: number; total: number } {
  const count = () => {
    const exists = database.sqlite
      .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'")
      .get();
    if (!exists) return 0;
    return (database.sqlite.query('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n;
  };
  const before = count();
  migrate(database.db, { migrationsFolder: MIGRATIONS_FOLDER });
  const total = count();
  return { applied: total - before, total };
}
