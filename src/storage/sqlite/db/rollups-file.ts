import { Database } from 'bun:sqlite';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PRESENT, REPORTED } from '../../../scans/presence-columns.ts';

/**
 * The stats rollups live in a file of their own beside the database (`svc.db` -> `svc-rollups.db`),
 * written only by the roller's Worker (src/storage/sqlite/scan-roller-worker.ts). SQLite lets one connection
 * write a file at a time: in the database file, a roller transaction folding thousands of scans
 * would make every other write wait (and the request thread with it). In a file of its own, the
 * roller writes in large batches while the request thread writes the database and reads both.
 *
 * The file holds only what can be rebuilt from the scans: a file that is missing, of another layout
 * (ROLLUP_FILE_VERSION), or left by a restore is started afresh and the roller folds every scan
 * again. Backups leave it out.
 */
export const ROLLUP_FILE_VERSION = 2;

/** The schema name the rollup tables are attached as, on every connection that reads or writes them. */
export const ROLLUPS = 'rollups';

/**
 * `scan_rollups`: additive measures of the scans up to the watermark, per UTC day or month and per
 * cuboid. `cuboid` is a bit set of the dimensions the row is split by (1 country, 2 platform, 4
 * page_type) plus 8 for a month row (whose `day` is the month's first day); a dimension outside the
 * cuboid holds '*' (all values), a null value ''. Grade is always split, so every cell yields the
 * grade distribution. A stats query reads the one cuboid holding exactly its filter and groupBy
 * dimensions. WITHOUT ROWID: the primary key is the table, one B-tree written per cell.
 * `scan_platform_idx`: a query grouped by country with a platform (and page type) filter seeks here
 * instead of walking every country of the cuboid.
 * `scan_hostname_rollups`: per hostname, its folded scans and their latest scannedAt, over all
 * scans (dimension and value '') and per value of each single filter (dimension 'country',
 * 'platform', 'page_type' or 'grade'; a null value is not counted): the hostnames list without
 * filters or with one of them. `scan_rollup_state` (one row): scans with rowid <= watermark are
 * folded; day rows exist only for days from days_from on, month rows only for months starting on
 * or after months_from (retention dropped the ones before).
 */
const TABLES = [
  'CREATE TABLE scan_rollups (cuboid INTEGER NOT NULL, country TEXT NOT NULL, platform TEXT NOT NULL, page_type TEXT NOT NULL, grade TEXT NOT NULL, ' +
    `day INTEGER NOT NULL, scans INTEGER NOT NULL, percentage_sum REAL NOT NULL, ${[...PRESENT, ...REPORTED].map((c) => `${c} INTEGER NOT NULL`).join(', ')}, ` +
    'hostnames BLOB NOT NULL, PRIMARY KEY (cuboid, country, platform, page_type, grade, day)) WITHOUT ROWID',
  'CREATE INDEX scan_rollups_platform_idx ON scan_rollups (cuboid, platform, page_type, country, grade, day)',
  'CREATE TABLE scan_hostname_rollups (dimension TEXT NOT NULL, value TEXT NOT NULL, hostname TEXT NOT NULL, scans INTEGER NOT NULL, last_scanned_at INTEGER NOT NULL, ' +
    'PRIMARY KEY (dimension, value, hostname)) WITHOUT ROWID',
  'CREATE TABLE scan_rollup_state (id INTEGER PRIMARY KEY, watermark INTEGER NOT NULL, days_from INTEGER NOT NULL, months_from INTEGER NOT NULL)',
  `INSERT INTO scan_rollup_state (id, watermark, days_from, months_from) VALUES (1, 0, ${Number.MIN_SAFE_INTEGER}, ${Number.MIN_SAFE_INTEGER})`,
];

/** `svc.db` -> `svc-rollups.db`, in the same directory. */
export function rollupsFileOf(databaseFile: string): string {
  const { dir, name } = path.parse(databaseFile);
  return path.join(dir, `${name}-rollups.db`);
}

/**
 * Makes the rollups file ready before anything attaches it: created with its tables when missing,
 * started afresh (every scan to be folded again) when its version is not this svc's.
 */
function prepareRollupsFile(databaseFile: string): void {
  const file = rollupsFileOf(databaseFile);
  const sqlite = new Database(file, { create: true, strict: true });
  try {
    // The timeout first: a connection of another thread still closing (a roller's Worker ending as
    // the database reopens) holds a lock for a moment, and the journal mode must wait for it, not fail.
    sqlite.exec('PRAGMA busy_timeout = 5000');
    sqlite.exec('PRAGMA journal_mode = WAL');
    const version = sqlite.query<{ user_version: number }, []>('PRAGMA user_version').get()!.user_version;
    if (version === ROLLUP_FILE_VERSION) return;
    sqlite.transaction(() => {
      for (const { name } of sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all()) {
        sqlite.exec(`DROP TABLE "${name}"`);
      }
      for (const statement of TABLES) sqlite.exec(statement);
      sqlite.exec(`PRAGMA user_version = ${ROLLUP_FILE_VERSION}`);
    }).immediate();
  } finally {
    sqlite.close();
  }
}

/** Attaches the rollups file to a connection of the database, as schema `rollups`. */
export function attachRollups(sqlite: Database, databaseFile: string): void {
  sqlite.prepare(`ATTACH DATABASE ? AS ${ROLLUPS}`).run(rollupsFileOf(databaseFile));
}

/**
 * A connection that only reads (query_only): the database with the rollups file attached, for the stats,
 * the filtered list and the hostnames list. Not the request thread's writing connection: a write
 * transaction there (BEGIN IMMEDIATE) would take the write lock of every attached file, and wait
 * for the roller's. Opening it makes the rollups file ready (the roller's Worker attaches it after).
 */
export function openStatsReader(databaseFile: string): Database {
  prepareRollupsFile(databaseFile);
  return openStatsConnection(databaseFile);
}

/** A stats reader's connection, once the rollups file is ready (opened by openStatsReader in this process): the dashboard's Workers open theirs so. */
export function openStatsConnection(databaseFile: string): Database {
  const sqlite = new Database(databaseFile, { strict: true });
  sqlite.exec('PRAGMA busy_timeout = 5000');
  attachRollups(sqlite, databaseFile);
  sqlite.exec('PRAGMA query_only = 1');
  return sqlite;
}

/** Deletes the rollups file and its WAL (a restore: the restored scans are folded afresh). */
export function removeRollupsFile(databaseFile: string): void {
  const file = rollupsFileOf(databaseFile);
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(file + suffix)) rmSync(file + suffix);
}
