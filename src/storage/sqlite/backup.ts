import { Database } from 'bun:sqlite';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { acquireInstanceLock } from './instance-lock.ts';
import { SchemaMismatchError, SchemaTooNewError, assertSvcSchema, migrateDatabase, openDatabase } from './db/index.ts';
import { removeRollupsFile } from './db/rollups-file.ts';

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

/** What `PRAGMA integrity_check` finds wrong with the database: nothing when it is intact. */
export function integrityProblems(sqlite: Database): string[] {
  const found = sqlite.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all().map((row) => row.integrity_check);
  return found.join() === 'ok' ? [] : found;
}

/** Opens `file` read-only and runs `check` on it, turning what SQLite throws on a file that is not a database into a BackupError about `source`. */
function checkedFile(file: string, source: string, check: (sqlite: Database) => void): void {
  let sqlite: Database | null = null;
  try {
    sqlite = new Database(file, { readonly: true });
    check(sqlite);
  } catch (error) {
    if (error instanceof BackupError || error instanceof SchemaTooNewError || error instanceof SchemaMismatchError) throw error;
    throw new BackupError(`${source} is damaged or not an SQLite database: ${(error as Error).message}`);
  } finally {
    sqlite?.close();
  }
}

/** Checks that `source` is an intact SQLite database with svc's tables. */
function verifySource(sqlite: Database, source: string): void {
  const problems = integrityProblems(sqlite);
  if (problems.length) throw new BackupError(`${source} is damaged (PRAGMA integrity_check: ${problems.slice(0, 3).join('; ')})`);
  const tables = new Set(sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => row.name));
  const missing = SVC_TABLES.filter((table) => !tables.has(table));
  if (missing.length) throw new BackupError(`${source} is not an svc database (no ${missing.join(', ')} table)`);
}

const SIDE_FILES = ['', '-wal', '-shm'];

/**
 * Replace the database with the backup `source` (svc restore). The data directory's instance lock is
 * held throughout, so this refuses while a server runs and no server can start meanwhile. The backup
 * is verified first (integrity check, svc tables), copied beside the database, the copy's schema is
 * checked (a version this binary knows, and exactly the tables, indexes, views and triggers svc's
 * migrations create at that version, by definition), and only then swapped in; the current database
 * (with its WAL) is kept aside, renamed `svc.db.before-restore-<time>`. The restored database is
 * migrated to this binary's schema.
 */
export function restoreDatabase(dataDir: string, databaseFile: string, source: string, now = new Date()) {
  if (path.resolve(source) === path.resolve(databaseFile)) throw new BackupError(`${source} is the database itself`);
  const lock = acquireInstanceLock(dataDir, `pid ${process.pid}, svc restore, started ${now.toISOString()}`);
  try {
    const staging = `${databaseFile}.restoring`;
    rmSync(staging, { force: true });
    if (!existsSync(source)) throw new BackupError(`no file at ${source}`);
    checkedFile(source, source, (sqlite) => {
      verifySource(sqlite, source);
      sqlite.run('VACUUM INTO ?', [staging]); // copies the schema as it is, running none of it
    });
    try {
      // The schema is checked on the copy, the file that is swapped in: svc's objects by definition and nothing else.
      checkedFile(staging, source, (copy) => assertSvcSchema(copy, source));
    } catch (error) {
      rmSync(staging, { force: true });
      throw error;
    }
    let previous: string | null = null;
    if (existsSync(databaseFile)) {
      previous = `${databaseFile}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
      for (const suffix of SIDE_FILES) if (existsSync(databaseFile + suffix)) renameSync(databaseFile + suffix, previous + suffix);
    }
    renameSync(staging, databaseFile);
    // The rollups of the scans that were here: the restored scans are folded afresh.
    removeRollupsFile(databaseFile);
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
