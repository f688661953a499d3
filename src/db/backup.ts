import { Database } from 'bun:sqlite';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { acquireInstanceLock } from '../lib/instance-lock.ts';
import { SchemaTooNewError, assertSchemaNotNewer, migrateDatabase, openDatabase } from './index.ts';

/** A backup that cannot be made (target exists, no database) or a file that cannot be restored (not SQLite, damaged, not svc's). */
export class BackupError extends Error {
  override name = 'BackupError';
}

/** Tables every svc database has since its first migration; a database without them is something else. */
const SVC_TABLES = ['__drizzle_migrations', 'api_keys', 'leads', 'scans'];

/**
 * An online, consistent copy (`VACUUM INTO` reads one snapshot while a server keeps writing) into
 * `target`, whose missing parent directories are created. SQLite refuses to overwrite a file.
 */
export function backupDatabase(databaseFile: string, target: string): { file: string; bytes: number } {
  if (!existsSync(databaseFile)) throw new BackupError(`no database at ${databaseFile}`);
  mkdirSync(path.dirname(target), { recursive: true });
  // Read-write open, though only read: a read-only connection to a WAL database cannot always open it.
  const sqlite = new Database(databaseFile);
  try {
    sqlite.exec('PRAGMA busy_timeout = 5000');
    sqlite.run('VACUUM INTO ?', [target]);
  } finally {
    sqlite.close();
  }
  return { file: target, bytes: statSync(target).size };
}

/** Opens `source` read-only and checks it is an intact svc database this binary can run. */
function verifiedSource(source: string): Database {
  if (!existsSync(source)) throw new BackupError(`no file at ${source}`);
  let sqlite: Database | null = null;
  try {
    sqlite = new Database(source, { readonly: true });
    const problems = sqlite.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all().map((row) => row.integrity_check);
    if (problems.join() !== 'ok') throw new BackupError(`${source} is damaged (PRAGMA integrity_check: ${problems.slice(0, 3).join('; ')})`);
    const tables = new Set(sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => row.name));
    const missing = SVC_TABLES.filter((table) => !tables.has(table));
    if (missing.length) throw new BackupError(`${source} is not an svc database (no ${missing.join(', ')} table)`);
    assertSchemaNotNewer(sqlite, source);
    return sqlite;
  } catch (error) {
    sqlite?.close();
    if (error instanceof BackupError || error instanceof SchemaTooNewError) throw error;
    throw new BackupError(`${source} is damaged or not an SQLite database: ${(error as Error).message}`);
  }
}

const SIDE_FILES = ['', '-wal', '-shm'];

/**
 * Replace the database with the backup `source` (svc restore). The data directory's instance lock is
 * held throughout, so this refuses while a server runs and no server can start meanwhile. The backup
 * is verified first (integrity check, svc tables, a schema this binary knows), copied beside the
 * database, and only then swapped in; the current database (with its WAL) is kept aside, renamed
 * `svc.db.before-restore-<time>`. The restored database is migrated to this binary's schema.
 */
export function restoreDatabase(dataDir: string, databaseFile: string, source: string, now = new Date()) {
  if (path.resolve(source) === path.resolve(databaseFile)) throw new BackupError(`${source} is the database itself`);
  const lock = acquireInstanceLock(dataDir, `pid ${process.pid}, svc restore, started ${now.toISOString()}`);
  try {
    const staging = `${databaseFile}.restoring`;
    rmSync(staging, { force: true });
    const sqlite = verifiedSource(source);
    try {
      sqlite.run('VACUUM INTO ?', [staging]);
    } finally {
      sqlite.close();
    }
    let previous: string | null = null;
    if (existsSync(databaseFile)) {
      previous = `${databaseFile}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
      for (const suffix of SIDE_FILES) if (existsSync(databaseFile + suffix)) renameSync(databaseFile + suffix, previous + suffix);
    }
    renameSync(staging, databaseFile);
    const database = openDatabase(databaseFile);
    try {
      const { applied } = migrateDatabase(database);
      return { restored: source, database: databaseFile, previous, migrationsApplied: applied };
    } finally {
      database.close();
    }
  } finally {
    lock.release();
  }
}
