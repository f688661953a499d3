import type { Database } from 'bun:sqlite';
import { DAY_MS } from '../../lib/time.ts';
import type { Cursor, GroupBy, ScanFilters } from '../../scans/filters.ts';
import { ALL_SCANS, dayOf, HOSTNAME_DIMENSIONS, type RawStatsRow } from '../../scans/rollups.ts';
import { StatsGroups, type StatsGroup } from '../../scans/stats.ts';
import { hostnameCountOf, summaryOf, SUMMARY_COLUMNS, type HostnameCount, type ScanDetail, type ScanPage, type SummaryRow } from '../../scans/views.ts';
import { ROLLUPS } from './db/rollups-file.ts';
import { rollupCellsOf, rollupReads, scanWhere, type Param } from '../scan-sql.ts';
import { RAW_STATS_COLUMNS, rollupState } from './scan-rollups.ts';

type Row = SummaryRow;
type HostnameRow = { hostname: string; scans: number; last: number };

/** The scans table read through one of its two dashboard indexes (src/storage/sqlite/db/schema/scans.ts), named so the plan never depends on statistics. */
const BY_HOSTNAME = 'scans INDEXED BY scans_hostname_scanned_at_idx';
const BY_TIME = 'scans INDEXED BY scans_scanned_at_url_idx';

const LIST_COLUMNS = SUMMARY_COLUMNS.join(', ');

/** The rollup rows of whole days [firstDay, endDay) for a stats query without a hostname (rollupReads). */
function readRollups(sqlite: Database, filters: ScanFilters, groupBy: GroupBy, firstDay: number, endDay: number, monthsFrom: number): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const { where, params } of rollupReads(filters, groupBy, firstDay, endDay, monthsFrom)) {
    for (const row of sqlite.query<Record<string, unknown>, Param[]>(`SELECT * FROM ${ROLLUPS}.scan_rollups WHERE ${where}`).iterate(...params)) rows.push(row);
  }
  return rows;
}

/**
 * The dashboard's reads of the scans and their rollups, on a query-only connection with the rollups
 * file attached (src/storage/sqlite/db/rollups-file.ts). They run in the dashboard's Workers
 * (scan-dashboard-workers.ts), off the request thread. Statements are compiled once and cached by bun:sqlite.
 */
export function createDashboardReader(stats: Database) {
  // The hostnames list over all scans, or with one dimension filter: from the per-hostname rollups
  // plus the matching scans above the watermark, read in one transaction so that they agree (the
  // rollups file first: its snapshot is taken at its first read, and the scans read after it hold
  // every scan it folded).
  const hostnamesRolledUp = new Map<keyof ScanFilters | null, (value: string, limit: number) => HostnameRow[]>(
    [{ column: ALL_SCANS, filter: null }, ...HOSTNAME_DIMENSIONS].map(({ column, filter }) => {
      const query = stats.prepare<HostnameRow, [string, string, number, number] | [string, string, number, string, number]>(
        'SELECT hostname, sum(scans) AS scans, max(last) AS last FROM (' +
          `SELECT hostname, scans, last_scanned_at AS last FROM ${ROLLUPS}.scan_hostname_rollups WHERE dimension = ? AND value = ? ` +
          `UNION ALL SELECT hostname, 1, scanned_at FROM scans WHERE rowid > ?${column === ALL_SCANS ? '' : ` AND ${column} = ?`}` +
          ') GROUP BY hostname ORDER BY scans DESC, hostname LIMIT ?',
      );
      const read = stats.transaction((value: string, limit: number) => {
        const { watermark } = rollupState(stats);
        return column === ALL_SCANS ? query.all(column, value, watermark, limit) : query.all(column, value, watermark, value, limit);
      });
      return [filter, read] as const;
    }),
  );
  const byId = stats.prepare<Row, [string]>(`SELECT ${LIST_COLUMNS}, signals, quality, data FROM scans WHERE id = ?`);

  const newestRows = (source: string, filters: ScanFilters, cursor: Cursor | null, take: number, extra: [string, Param][] = []): Row[] => {
    const { where, params } = scanWhere(filters, cursor, extra);
    return stats.query<Row, Param[]>(`SELECT ${LIST_COLUMNS} FROM ${source} ${where} ORDER BY scanned_at DESC, id DESC LIMIT ?`).all(...params, take);
  };

  /**
   * The `take` newest scans matching the filters, after the cursor. A hostname is read from its
   * own index. Without one, a rare filter combination could walk the whole time index before it
   * found `take` matches, so the day rollups (scans up to the watermark, per filtered value and
   * day) say which days hold matches: those days are read newest first until whole days holding
   * at least `take` rolled-up matches have been read (no older row can then make the page), plus
   * the few scans above the watermark, wherever in time they fall.
   */
  function newestMatching(filters: ScanFilters, cursor: Cursor | null, take: number): Row[] {
    if (filters.hostname !== undefined) return newestRows(BY_HOSTNAME, filters, cursor, take);
    const { cuboid, clauses, params } = rollupCellsOf(filters);
    if (clauses.length === 0) return newestRows(BY_TIME, filters, cursor, take);
    const { watermark } = rollupState(stats);
    const lower = filters.from ?? -Infinity;
    const upper = Math.min(filters.to ?? Infinity, cursor ? cursor.scannedAt + 1 : Infinity);
    const bounds: [string, number][] = [];
    if (lower > -Infinity) bounds.push(['day >= ?', dayOf(lower)]);
    if (upper < Infinity) bounds.push(['day <= ?', dayOf(upper - 1)]);
    const days = stats
      .query<{ day: number; scans: number }, Param[]>(
        `SELECT day, sum(scans) AS scans FROM ${ROLLUPS}.scan_rollups WHERE ${['cuboid = ?', ...clauses, ...bounds.map(([clause]) => clause)].join(' AND ')} GROUP BY day ORDER BY day DESC`,
      )
      .all(cuboid, ...params, ...bounds.map(([, day]) => day));
    const found: Row[] = [];
    // Runs of consecutive days are read with one query each.
    const readDays = (first: number, end: number) =>
      found.push(...newestRows(BY_TIME, { ...filters, from: Math.max(lower, first * DAY_MS), to: Math.min(upper, end * DAY_MS) }, cursor, take));
    let counted = 0;
    let run: [number, number] | null = null;
    for (const { day, scans } of days) {
      if (counted >= take) break;
      if (run && run[0] === day + 1) run[0] = day;
      else {
        if (run) readDays(...run);
        run = [day, day + 1];
      }
      // A day cut by a bound may hold fewer matches than its rollups count: only whole days count.
      if (day * DAY_MS >= lower && (day + 1) * DAY_MS <= upper) counted += scans;
    }
    if (run) readDays(...run);
    const above = newestRows('scans NOT INDEXED', filters, cursor, take, [['rowid > ?', watermark]]);
    const byId = new Map<string, Row>();
    for (const row of [...found, ...above]) byId.set(row.id as string, row);
    return [...byId.values()]
      .sort((a, b) => (b.scanned_at as number) - (a.scanned_at as number) || (a.id! < b.id! ? 1 : a.id! > b.id! ? -1 : 0))
      .slice(0, take);
  }

  return {
    /**
     * One page, newest first; `next` is where the following page starts (null on the last page).
     * Read in one transaction, so the rollups and the rows agree (see newestMatching).
     */
    list: stats.transaction((filters: ScanFilters, cursor: Cursor | null, limit: number): ScanPage => {
      const rows = newestMatching(filters, cursor, limit + 1);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const next = rows.length > limit && last ? { scannedAt: last.scanned_at as number, id: last.id as string } : null;
      return { items: page.map(summaryOf), next };
    }),

    /**
     * The hostnames with the most scans (ties by name), with their latest scan time. Without
     * filters or with one filter on country, platform, page type or grade, from the per-hostname
     * rollups plus the scans above the watermark; with other filters, from index entries alone
     * (both indexes carry every filter column).
     */
    topHostnames(filters: ScanFilters, limit: number): HostnameCount[] {
      const given = (Object.keys(filters) as (keyof ScanFilters)[]).filter((name) => filters[name] !== undefined);
      const rolledUp = given.length === 0 ? hostnamesRolledUp.get(null) : given.length === 1 ? hostnamesRolledUp.get(given[0]!) : undefined;
      let rows: HostnameRow[];
      if (rolledUp) rows = rolledUp(given.length === 0 ? ALL_SCANS : String(filters[given[0]!]), limit);
      else {
        const { where, params } = scanWhere(filters);
        rows = stats
          .query<HostnameRow, Param[]>(`SELECT hostname, count(*) AS scans, max(scanned_at) AS last FROM scans ${where} GROUP BY hostname ORDER BY scans DESC, hostname LIMIT ?`)
          .all(...params, limit);
      }
      return rows.map(hostnameCountOf);
    },

    /** The full record, the stored JSON included, or null. */
    get(id: string): ScanDetail | null {
      const row = byId.get(id);
      if (!row) return null;
      const json = (column: string) => JSON.parse(row[column] as string) as Record<string, unknown>;
      return { ...summaryOf(row), signals: json('signals'), quality: json('quality'), data: json('data') };
    },

    /**
     * Per group: scans, distinct hostnames, average percentage, grade distribution, presence rates.
     * With a hostname filter, from that hostname's rows (exact). Otherwise whole UTC days come from
     * the rollups (scans up to the watermark) and the rest from raw rows: the partial days at the
     * `from`/`to` edges and the scans above the watermark. Read in one transaction, so the watermark,
     * the rollups and the rows agree.
     */
    stats: stats.transaction((filters: ScanFilters, groupBy: GroupBy): StatsGroup[] => {
      const groups = new StatsGroups(groupBy, filters.hostname !== undefined);
      if (filters.hostname !== undefined) {
        const { where, params } = scanWhere(filters);
        groups.addRows(stats.query<RawStatsRow, Param[]>(`SELECT ${RAW_STATS_COLUMNS} FROM scans ${where}`).all(...params));
        return groups.result();
      }
      const { watermark: mark, monthsFrom } = rollupState(stats);
      // Whole days in [from, to): [firstDay, endDay).
      const firstDay = filters.from === undefined ? -Infinity : Math.ceil(filters.from / DAY_MS);
      const endDay = filters.to === undefined ? Infinity : Math.floor(filters.to / DAY_MS);
      const raw = (source: string, from: number | undefined, to: number | undefined, rowid: string) => {
        const { where, params } = scanWhere({ ...filters, from, to }, null, [[rowid, mark]]);
        groups.addRows(stats.query<RawStatsRow, Param[]>(`SELECT ${RAW_STATS_COLUMNS} FROM ${source} ${where}`).all(...params));
      };
      // Above the watermark: a rowid range (no index, or the planner walks a filter's index instead).
      raw('scans NOT INDEXED', filters.from, filters.to, 'rowid > ?');
      // Below it, partial days: a time range of the time index.
      const below = (from: number | undefined, to: number | undefined) => raw(BY_TIME, from, to, 'rowid <= ?');
      if (firstDay >= endDay) {
        below(filters.from, filters.to);
        return groups.result();
      }
      if (filters.from !== undefined && filters.from < firstDay * DAY_MS) below(filters.from, firstDay * DAY_MS);
      if (filters.to !== undefined && endDay * DAY_MS < filters.to) below(endDay * DAY_MS, filters.to);
      groups.addRollups(readRollups(stats, filters, groupBy, firstDay, endDay, monthsFrom));
      return groups.result();
    }),
  };
}

export type DashboardReader = ReturnType<typeof createDashboardReader>;
