import type { Database } from 'bun:sqlite';
import { PRESENCE_COLUMNS } from './presence-columns.ts';
import { PRESENCE_KEYS, type PresenceKey } from './vocabulary.ts';
import { DAY_MS } from '../lib/time.ts';
import type { Cursor, GroupBy, ScanFilters } from './filters.ts';
import { ALL_SCANS, dayOf, HOSTNAME_DIMENSIONS, RAW_STATS_COLUMNS, rollupState, type RawStatsRow } from './rollups.ts';
import { ROLLUPS } from '../db/rollups-file.ts';
import { readRollups, rollupCellsOf, StatsGroups } from './stats.ts';

type Param = string | number;
type Row = Record<string, string | number | null>;
type HostnameRow = { hostname: string; scans: number; last: number };

const FILTER_COLUMNS = { hostname: 'hostname', country: 'country', platform: 'platform', pageType: 'page_type', grade: 'grade' } as const;
/** The scans table read through one of its two dashboard indexes (src/db/schema/scans.ts), named so the plan never depends on statistics. */
const BY_HOSTNAME = 'scans INDEXED BY scans_hostname_scanned_at_idx';
const BY_TIME = 'scans INDEXED BY scans_scanned_at_url_idx';

/** WHERE clause and parameters of the dashboard filters (and `extra` clauses). Column names are fixed here; values are bound. */
function whereOf(filters: ScanFilters, cursor: Cursor | null = null, extra: [string, Param][] = []): { where: string; params: Param[] } {
  const clauses: string[] = [];
  const params: Param[] = [];
  for (const [field, column] of Object.entries(FILTER_COLUMNS) as [keyof typeof FILTER_COLUMNS, string][]) {
    const value = filters[field];
    if (value !== undefined) {
      clauses.push(`${column} = ?`);
      params.push(value);
    }
  }
  if (filters.from !== undefined) {
    clauses.push('scanned_at >= ?');
    params.push(filters.from);
  }
  if (filters.to !== undefined) {
    clauses.push('scanned_at < ?');
    params.push(filters.to);
  }
  if (cursor) {
    // Keyset: strictly after the cursor row in (scanned_at DESC, id DESC) order. The leading
    // range on scanned_at lets SQLite seek in the (…, scanned_at) index instead of filtering.
    clauses.push('scanned_at <= ? AND (scanned_at < ? OR id < ?)');
    params.push(cursor.scannedAt, cursor.scannedAt, cursor.id);
  }
  for (const [clause, param] of extra) {
    clauses.push(clause);
    params.push(param);
  }
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

const LIST_COLUMNS =
  'id, hostname, url, scanned_at, received_at, country, platform, platform_confidence, page_type, grade, percentage, ' +
  `svc_detected, svc_version, vertical, ${PRESENCE_KEYS.map((k) => PRESENCE_COLUMNS[k]).join(', ')}`;

const iso = (ms: number) => new Date(ms).toISOString();
const bool = (value: string | number | null | undefined) => (value === null || value === undefined ? null : value === 1);

/** A scan as the dashboard lists it: every column except the stored JSON. */
function summaryOf(row: Row) {
  return {
    id: row.id as string,
    hostname: row.hostname as string,
    url: row.url as string,
    scannedAt: iso(row.scanned_at as number),
    receivedAt: iso(row.received_at as number),
    country: row.country,
    platform: row.platform === null ? null : { platform: row.platform, confidence: row.platform_confidence },
    pageType: row.page_type,
    grade: row.grade as string,
    percentage: row.percentage as number,
    svc: { detected: bool(row.svc_detected), version: row.svc_version },
    vertical: row.vertical,
    signalPresence: Object.fromEntries(PRESENCE_KEYS.map((k) => [k, bool(row[PRESENCE_COLUMNS[k]])])) as Record<PresenceKey, boolean | null>,
  };
}

export type ScanSummary = ReturnType<typeof summaryOf>;

/** The grade and percentage of the scan a hostname's badge shows, or null. */
export type BadgeLookup = (hostname: string) => { grade: string; percentage: number } | null;

/** The grade and percentage of the scan a hostname's badge shows, or null: one index seek, on the request thread (the badge is a hot route). */
export function createBadgeLookup(sqlite: Database): BadgeLookup {
  const latest = sqlite.prepare<{ grade: string; percentage: number }, [string]>(
    // The most trusted scan, then the most recently received (telemetry/payload.ts ScanTrust): from
    // the end of scans_badge_idx; rowid breaks ties within one bulk request, in its order.
    'SELECT grade, percentage FROM scans INDEXED BY scans_badge_idx WHERE hostname = ? ORDER BY trust DESC, received_at DESC, rowid DESC LIMIT 1',
  );
  return (hostname) => latest.get(hostname);
}

/**
 * The dashboard's reads of the scans and their rollups, on a query-only connection with the rollups
 * file attached (src/db/rollups-file.ts). They run in the dashboard's Workers
 * (src/scans/dashboard-queries.ts), off the request thread. Statements are compiled once and cached by bun:sqlite.
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
    const { where, params } = whereOf(filters, cursor, extra);
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
    list: stats.transaction((filters: ScanFilters, cursor: Cursor | null, limit: number): { items: ScanSummary[]; next: Cursor | null } => {
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
    topHostnames(filters: ScanFilters, limit: number): { hostname: string; scans: number; lastScannedAt: string }[] {
      const given = (Object.keys(filters) as (keyof ScanFilters)[]).filter((name) => filters[name] !== undefined);
      const rolledUp = given.length === 0 ? hostnamesRolledUp.get(null) : given.length === 1 ? hostnamesRolledUp.get(given[0]!) : undefined;
      let rows: HostnameRow[];
      if (rolledUp) rows = rolledUp(given.length === 0 ? ALL_SCANS : String(filters[given[0]!]), limit);
      else {
        const { where, params } = whereOf(filters);
        rows = stats
          .query<HostnameRow, Param[]>(`SELECT hostname, count(*) AS scans, max(scanned_at) AS last FROM scans ${where} GROUP BY hostname ORDER BY scans DESC, hostname LIMIT ?`)
          .all(...params, limit);
      }
      return rows.map((row) => ({ hostname: row.hostname, scans: row.scans, lastScannedAt: iso(row.last) }));
    },

    /** The full record, the stored JSON included, or null. */
    get(id: string) {
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
    stats: stats.transaction((filters: ScanFilters, groupBy: GroupBy) => {
      const groups = new StatsGroups(groupBy, filters.hostname !== undefined);
      if (filters.hostname !== undefined) {
        const { where, params } = whereOf(filters);
        groups.addRows(stats.query<RawStatsRow, Param[]>(`SELECT ${RAW_STATS_COLUMNS} FROM scans ${where}`).all(...params));
        return groups.result();
      }
      const { watermark: mark, monthsFrom } = rollupState(stats);
      // Whole days in [from, to): [firstDay, endDay).
      const firstDay = filters.from === undefined ? -Infinity : Math.ceil(filters.from / DAY_MS);
      const endDay = filters.to === undefined ? Infinity : Math.floor(filters.to / DAY_MS);
      const raw = (source: string, from: number | undefined, to: number | undefined, rowid: string) => {
        const { where, params } = whereOf({ ...filters, from, to }, null, [[rowid, mark]]);
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
