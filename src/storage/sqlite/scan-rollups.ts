import type { Database } from 'bun:sqlite';
import { ROLLUPS } from './db/rollups-file.ts';
import { writePause } from './write-pause.ts';
import { PRESENCE_COLUMN_LIST } from '../../scans/presence-columns.ts';
import { dayBound, type RollupState } from '../../scans/rollups.ts';
import type { RollupBacklog } from '../../scans/backlog.ts';
import { rollupsInWorker, type RollupsInWorker } from '../rollups-in-worker.ts';

/** The columns of a scan that the stats read (raw rows below and above the watermark alike), with its rowid (the roller's watermark counts in rowids). */
export const RAW_STATS_COLUMNS = `rowid, scanned_at, hostname, country, platform, page_type, grade, percentage, ${PRESENCE_COLUMN_LIST.join(', ')}`;

/**
 * The rollup watermark (the rowid of the last scan folded), the first day with day rows and the
 * first month with month rows: one consistent read inside a transaction.
 */
export function rollupState(sqlite: Database): RollupState {
  const row = sqlite
    .query<{ watermark: number; days_from: number; months_from: number }, []>(`SELECT watermark, days_from, months_from FROM ${ROLLUPS}.scan_rollup_state WHERE id = 1`)
    .get();
  return { watermark: row?.watermark ?? 0, daysFrom: dayBound(row?.days_from), monthsFrom: dayBound(row?.months_from) };
}

/**
 * The stats rollups (DESIGN §5, issues 4 and 29), folded by a Worker of their own
 * (scan-roller-worker.ts, scan-roller.ts) into the rollups file beside the database
 * (src/storage/sqlite/db/rollups-file.ts): the request thread never runs a fold, and the fold's writes never
 * hold the database's write lock. The telemetry write path stays as it was: a stats query adds the
 * rows above the watermark from the scans table itself. Scan retention runs in the same Worker, so
 * that the scans it deletes leave the rollups in the same transaction.
 */
export function createScanRollups(database: { file: string; sqlite: Database; stats(): Database }, batchScans?: number): SqliteScanRollups {
  // The stats reader makes the rollups file ready (created, or started afresh) before the Worker attaches it.
  database.stats();
  return {
    ...rollupsInWorker('storage/sqlite/scan-roller-worker.ts', { file: database.file, batchScans, pause: writePause(database.sqlite).shared }),
    /** Rowid of the last scan folded into the rollups (0: none). */
    watermark: () => rollupState(database.stats()).watermark,
  };
}

/** The SQLite roller: its Worker's start and end, and its watermark (tests, benches). */
export interface SqliteScanRollups extends RollupsInWorker {
  /** Rowid of the last scan folded into the rollups (0: none). */
  watermark(): number;
}

/**
 * Reads the rollup backlog from the database (not from the roller, wherever it runs): one statement,
 * two seeks by rowid, so its cost does not grow with the backlog (1,000,000 scans above the
 * watermark: ~5 µs, where count(*) over them held the loop ~290 ms). Cheap enough for every scrape
 * and health check, so it is not cached.
 *
 * The count is `max(rowid) - first + 1`, from the first scan above the watermark to the last scan.
 * Exact when those rowids have no holes, which holds because SQLite gives each new row of `scans`
 * (no AUTOINCREMENT, no insert names a rowid) the rowid after the highest, and a rolled-back insert
 * takes none. Only a deletion in the middle of the backlog makes a hole, and only retention deletes
 * scans: when it deletes a scan that was expired on arrival (a backfill older than
 * SVC_SCAN_RETENTION_DAYS) before the roller reached it, the count is over by the scans so deleted,
 * until the roller has passed them (holes below the first remaining scan never count). So it is
 * never under the truth, and over it by no more than the scans retention deleted from the backlog.
 */
export function readRollupBacklog(sqlite: Database): () => RollupBacklog {
  // Without a state row (no roller has run on this database yet) nothing is folded: watermark 0.
  const first = sqlite.prepare<{ first: number; received_at: number; last: number }, []>(
    'SELECT rowid AS first, received_at, (SELECT max(rowid) FROM scans) AS last FROM scans ' +
      `WHERE rowid > coalesce((SELECT watermark FROM ${ROLLUPS}.scan_rollup_state WHERE id = 1), 0) ORDER BY rowid LIMIT 1`,
  );
  return () => {
    const row = first.get();
    return row ? { scans: row.last - row.first + 1, oldestReceivedAt: row.received_at } : { scans: 0, oldestReceivedAt: null };
  };
}
