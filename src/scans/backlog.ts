import type { Database } from 'bun:sqlite';
import { ROLLUPS } from '../db/rollups-file.ts';

/**
 * The rollup backlog: accepted scans the roller has not folded into the dashboard rollups yet (rowid
 * above the watermark of the rollups file's scan_rollup_state). Every stats answer reads them raw, so a large backlog
 * makes the dashboard slow; /metrics, /healthz and the console overview show it.
 */
export interface RollupBacklog {
  /** How many scans wait to be rolled up (see readRollupBacklog for when this is exact). */
  scans: number;
  /** When the first of them (rowid order) was received, ms since the epoch; null when none waits. */
  oldestReceivedAt: number | null;
}

/**
 * When the backlog slows the dashboard enough to say so on the overview (and `slowsDashboard` in
 * the API): more than 10,000 scans, which every stats answer reads one by one (the overview asks for
 * five), or a first scan waiting more than 10 s, when the roller (which runs every second) is not
 * keeping up with ingest and the backlog grows.
 */
export const NOTICEABLE_BACKLOG = { scans: 10_000, seconds: 10 } as const;

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
 * (An engine whose ids skip values, such as a PostgreSQL sequence after a rollback, would make it an
 * upper bound in the same way.)
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

/** Seconds the oldest unrolled scan has waited at `now`: 0 when none waits (or the clock was set back before it). */
export function backlogAgeSeconds(backlog: RollupBacklog, now: number): number {
  return backlog.oldestReceivedAt === null ? 0 : Math.max(0, now - backlog.oldestReceivedAt) / 1000;
}

/** Whether the backlog is large or old enough to slow the dashboard (NOTICEABLE_BACKLOG). */
export function backlogSlowsDashboard(backlog: RollupBacklog, now: number): boolean {
  return backlog.scans > NOTICEABLE_BACKLOG.scans || backlogAgeSeconds(backlog, now) > NOTICEABLE_BACKLOG.seconds;
}

/** The backlog as the API and /healthz show it (times in ISO 8601, the age in seconds at `now`). */
export function backlogView(backlog: RollupBacklog, now: number) {
  return {
    scans: backlog.scans,
    oldestReceivedAt: backlog.oldestReceivedAt === null ? null : new Date(backlog.oldestReceivedAt).toISOString(),
    ageSeconds: backlogAgeSeconds(backlog, now),
    slowsDashboard: backlogSlowsDashboard(backlog, now),
  };
}

export type BacklogView = ReturnType<typeof backlogView>;
