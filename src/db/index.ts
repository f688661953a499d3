import { Database } from 'bun:sqlite';
import { closeChangeStamps } from '../lib/change-stamp.ts';
import path from 'node:path';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import { migrate } from 'drizzle-orm/bun-sqlite/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { ASSET_ROOT, ensureDataDirectory } from '../lib/paths.ts';
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
  ensureDataDirectory(path.dirname(file));
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
    close: () => {
      sqlite.close();
      closeChangeStamps(sqlite);
    },
  };
}

/**
 * The database was migrated by a newer svc: this binary does not know its latest migrations, and
 * drizzle would silently skip them and run an old schema. Refusing keeps the data as the newer svc left it.
 */
export class SchemaTooNewError extends Error {
  constructor(
    readonly file: string,
    readonly databaseVersion: number,
    readonly binaryVersion: number,
  ) {
    super(
      `the database ${file} has schema version ${databaseVersion}, newer than this svc's ${binaryVersion}: ` +
        'it was migrated by a newer svc; run that version, or restore a backup taken before the upgrade (svc restore FILE)',
    );
    this.name = 'SchemaTooNewError';
  }
}

/** Migrations recorded in the database: how many, and the creation time of the latest (drizzle's ordering key). */
function appliedMigrations(sqlite: Database): { count: number; latest: number } {
  const exists = sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (!exists) return { count: 0, latest: 0 };
  const row = sqlite.query<{ n: number; latest: number | null }, []>('SELECT count(*) AS n, max(CAST(created_at AS INTEGER)) AS latest FROM __drizzle_migrations').get()!;
  return { count: row.n, latest: row.latest ?? 0 };
}

/** Throws SchemaTooNewError when `sqlite` holds a migration this binary does not know. */
export function assertSchemaNotNewer(sqlite: Database, file: string): { applied: number; known: number } {
  const known = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  const applied = appliedMigrations(sqlite);
  const newestKnown = known.reduce((max, m) => Math.max(max, m.folderMillis), 0);
  if (applied.latest > newestKnown || applied.count > known.length) throw new SchemaTooNewError(file, applied.count, known.length);
  return { applied: applied.count, known: known.length };
}

/**
 * Apply pending migrations from drizzle/ (embedded in the binary); returns how many ran. Throws
 * SchemaTooNewError, before touching anything, when the database holds a migration newer than this binary's.
 */
export function migrateDatabase(database: AppDatabase): { applied: number; total: number } {
  const before = assertSchemaNotNewer(database.sqlite, database.file).applied;
  migrate(database.db, { migrationsFolder: MIGRATIONS_FOLDER });
  const total = appliedMigrations(database.sqlite).count;
  return { applied: total - before, total };
}
