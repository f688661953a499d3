import { Database } from 'bun:sqlite';
import { closeChangeStamps } from '../change-stamp.ts';
import path from 'node:path';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import { migrate } from 'drizzle-orm/bun-sqlite/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { ASSET_ROOT, ensureDataDirectory } from '../../../lib/paths.ts';
import { openStatsReader } from './rollups-file.ts';
import * as schema from './schema/index.ts';
import { migratedSchema, readSchema, schemaDifferences, type SchemaDifference } from './schema-check.ts';

/** Drizzle over bun:sqlite; `$client` is the same connection, for hot-path prepared statements. */
export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** The open database: `db` for drizzle queries, `sqlite` for prepared hot-path statements. */
export interface AppDatabase {
  sqlite: Database;
  db: Db;
  file: string;
  /**
   * The stats reader: a query-only connection with the rollups file attached (src/storage/sqlite/db/rollups-file.ts),
   * opened at first use (so a CLI command that reads no stats neither opens nor creates the file).
   */
  stats(): Database;
  /**
   * Runs `closing` when the database closes, before its connections do: readers of the file in
   * other threads (the dashboard's Workers) are told to end. What it returns is not waited for.
   */
  onClose(closing: () => unknown): void;
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
  let stats: Database | null = null;
  const closing: (() => unknown)[] = [];
  return {
    sqlite,
    db,
    file,
    stats: () => (stats ??= openStatsReader(file)),
    onClose: (then) => void closing.push(then),
    close: () => {
      for (const then of closing.splice(0)) void then();
      stats?.close();
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

/**
 * Migrations recorded in the database: whether it has drizzle's table at all, how many, and the
 * creation time of the latest (drizzle's ordering key).
 */
function appliedMigrations(sqlite: Database): { recorded: boolean; count: number; latest: number } {
  const exists = sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (!exists) return { recorded: false, count: 0, latest: 0 };
  const row = sqlite.query<{ n: number; latest: number | null }, []>('SELECT count(*) AS n, max(CAST(created_at AS INTEGER)) AS latest FROM __drizzle_migrations').get()!;
  return { recorded: true, count: row.n, latest: row.latest ?? 0 };
}

/** How many differences a refusal names in its one line. */
const SCHEMA_PROBLEMS_NAMED = 5;

/**
 * The database holds objects that svc's migrations do not create, or defines svc's own differently: a
 * trigger, view, default or index expression that SQLite would run with svc's writes. Nothing is run
 * or migrated; the first few differences are named (`svc doctor` lists them all).
 */
export class SchemaMismatchError extends Error {
  constructor(
    readonly file: string,
    readonly differences: SchemaDifference[],
  ) {
    const named = differences.slice(0, SCHEMA_PROBLEMS_NAMED).map((difference) => difference.problem);
    if (differences.length > named.length) named.push(`and ${differences.length - named.length} more`);
    super(
      `the database ${file} does not have svc's schema: ${named.join('; ')}. Refused before anything in it ran (svc doctor lists every difference): ` +
        'restore a backup svc made, or remove what svc did not create',
    );
    this.name = 'SchemaMismatchError';
  }
}

/** What the schema check found: where the database stands against this binary's migrations, and how its schema differs from theirs. */
export interface SchemaCheck {
  /** Migrations recorded in the database. */
  applied: number;
  /** Migrations this binary carries. */
  known: number;
  /** Objects (tables, indexes, views, triggers) in the database. */
  objects: number;
  /** Every object that svc's migrations do not create at the database's version, create otherwise, or create and the database lacks. */
  differences: SchemaDifference[];
}

/**
 * Compares the database's schema with the one svc's migrations create at its version: the number of
 * this binary's migrations drizzle counts as applied (those no newer than the latest recorded, which
 * it will not run again); a database never migrated should have none. Throws SchemaTooNewError when
 * the database holds a migration this binary does not know. Reads `sqlite_master` only: the cost does
 * not grow with the data.
 */
export function checkSchema(sqlite: Database, file: string): SchemaCheck {
  const known = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  const applied = appliedMigrations(sqlite);
  const newestKnown = known.reduce((max, m) => Math.max(max, m.folderMillis), 0);
  if (applied.latest > newestKnown || applied.count > known.length) throw new SchemaTooNewError(file, applied.count, known.length);
  const version = known.filter((migration) => migration.folderMillis <= applied.latest).length;
  const expected = applied.recorded ? migratedSchema(known.slice(0, version), { migrationsFolder: MIGRATIONS_FOLDER }) : [];
  const objects = readSchema(sqlite);
  return { applied: applied.count, known: known.length, objects: objects.length, differences: schemaDifferences(objects, expected) };
}

/** checkSchema, throwing SchemaMismatchError when anything differs. */
export function assertSvcSchema(sqlite: Database, file: string): SchemaCheck {
  const check = checkSchema(sqlite, file);
  if (check.differences.length > 0) throw new SchemaMismatchError(file, check.differences);
  return check;
}

/**
 * Apply pending migrations from drizzle/ (embedded in the binary); returns how many ran. Before touching
 * anything, throws SchemaTooNewError when the database holds a migration newer than this binary's, and
 * SchemaMismatchError when its schema is not svc's (a migration's writes would run its triggers).
 */
export function migrateDatabase(database: AppDatabase): { applied: number; total: number } {
  const before = assertSvcSchema(database.sqlite, database.file).applied;
  migrate(database.db, { migrationsFolder: MIGRATIONS_FOLDER });
  const total = appliedMigrations(database.sqlite).count;
  return { applied: total - before, total };
}
