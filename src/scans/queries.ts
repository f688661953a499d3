import type { Database } from 'bun:sqlite';
import { GRADES, PRESENCE_COLUMNS, PRESENCE_KEYS, type PresenceKey } from '../db/schema/scans.ts';
import { DAY_MS } from '../lib/time.ts';
import type { Cursor, GroupBy, ScanFilters } from './filters.ts';

type Param = string | number;
type Row = Record<string, string | number | null>;

const FILTER_COLUMNS = { hostname: 'hostname', country: 'country', platform: 'platform', pageType: 'page_type', grade: 'grade' } as const;

/** WHERE clause and parameters of the dashboard filters. Column names are fixed here; values are bound. */
function whereOf(filters: ScanFilters, cursor: Cursor | null = null): { where: string; params: Param[] } {
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

const GROUP_KEYS: Record<GroupBy, string> = {
  day: `scanned_at / ${DAY_MS}`,
  country: 'country',
  platform: 'platform',
  pageType: 'page_type',
  grade: 'grade',
};

const STATS_COLUMNS = [
  'count(*) AS scans',
  'count(DISTINCT hostname) AS hostnames',
  'avg(percentage) AS avg_percentage',
  ...GRADES.map((g) => `sum(grade = '${g}') AS grade_${g}`),
  ...PRESENCE_KEYS.flatMap((k) => [`sum(${PRESENCE_COLUMNS[k]}) AS present_${k}`, `count(${PRESENCE_COLUMNS[k]}) AS reported_${k}`]),
].join(', ');

/** Read side of the scans table (badge and dashboard). Statements are compiled once and cached by bun:sqlite. */
export function createScanReader(sqlite: Database) {
  const latest = sqlite.prepare<{ grade: string; percentage: number }, [string]>(
    'SELECT grade, percentage FROM scans WHERE hostname = ? ORDER BY scanned_at DESC LIMIT 1',
  );
  const byId = sqlite.prepare<Row, [string]>(`SELECT ${LIST_COLUMNS}, signals, quality, data FROM scans WHERE id = ?`);

  return {
    /** The grade and percentage of a hostname's latest scan, or null. */
    latestOf(hostname: string): { grade: string; percentage: number } | null {
      return latest.get(hostname);
    },

    /** One page, newest first; `next` is where the following page starts (null on the last page). */
    list(filters: ScanFilters, cursor: Cursor | null, limit: number): { items: ScanSummary[]; next: Cursor | null } {
      const { where, params } = whereOf(filters, cursor);
      const rows = sqlite
        .query<Row, Param[]>(`SELECT ${LIST_COLUMNS} FROM scans ${where} ORDER BY scanned_at DESC, id DESC LIMIT ?`)
        .all(...params, limit + 1);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const next = rows.length > limit && last ? { scannedAt: last.scanned_at as number, id: last.id as string } : null;
      return { items: page.map(summaryOf), next };
    },

    /** The full record, the stored JSON included, or null. */
    get(id: string) {
      const row = byId.get(id);
      if (!row) return null;
      const json = (column: string) => JSON.parse(row[column] as string) as Record<string, unknown>;
      return { ...summaryOf(row), signals: json('signals'), quality: json('quality'), data: json('data') };
    },

    /** Per group: scans, distinct hostnames, average percentage, grade distribution, presence rates. */
    stats(filters: ScanFilters, groupBy: GroupBy) {
      const { where, params } = whereOf(filters);
      // Without a hostname (whose index is narrow enough), read only the covering index: the planner
      // otherwise walks a (key, scanned_at) index to skip the GROUP BY sort and fetches every wide row.
      const source = filters.hostname === undefined ? 'scans INDEXED BY scans_stats_idx' : 'scans';
      const rows = sqlite
        .query<Row, Param[]>(`SELECT ${GROUP_KEYS[groupBy]} AS key, ${STATS_COLUMNS} FROM ${source} ${where} GROUP BY key ORDER BY key`)
        .all(...params);
      return rows.map((row) => ({
        key: groupBy === 'day' ? iso((row.key as number) * DAY_MS).slice(0, 10) : row.key,
        scans: row.scans as number,
        hostnames: row.hostnames as number,
        averagePercentage: Math.round((row.avg_percentage as number) * 100) / 100,
        grades: Object.fromEntries(GRADES.map((g) => [g, row[`grade_${g}`] as number])),
        // Share of the scans that reported the key (true or false) in which it was present; null when none did.
        presence: Object.fromEntries(
          PRESENCE_KEYS.map((k) => {
            const reported = row[`reported_${k}`] as number;
            return [k, reported === 0 ? null : Math.round(((row[`present_${k}`] as number) / reported) * 10_000) / 10_000];
          }),
        ),
      }));
    },
  };
}

export type ScanReader = ReturnType<typeof createScanReader>;
