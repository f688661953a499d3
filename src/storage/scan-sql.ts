// The SQL both engines' scans records speak alike (src/storage/sqlite/scan-dashboard.ts,
// src/storage/postgres/scans.ts): the dashboard filters as a WHERE clause, and which rollup rows a
// stats query reads. Plain text with `?` placeholders and the values to bind; column names are fixed
// here, values always bound. No engine is imported: each runs the text its own way.
import type { Cursor, GroupBy, ScanFilters } from '../scans/filters.ts';
import { MONTH, monthOf, nextMonthOf, ROLLUP_DIMENSIONS } from '../scans/rollups.ts';

export type Param = string | number;

const FILTER_COLUMNS = { hostname: 'hostname', country: 'country', platform: 'platform', pageType: 'page_type', grade: 'grade' } as const;

/**
 * WHERE clause and parameters of the dashboard filters, the keyset cursor and `extra` clauses.
 * `id` is how the engine compares ids byte by byte (SQLite's `id`; PostgreSQL's `id COLLATE "C"`,
 * whatever the database's collation), so both page in the same order.
 */
export function scanWhere(filters: ScanFilters, cursor: Cursor | null = null, extra: [string, Param][] = [], id = 'id'): { where: string; params: Param[] } {
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
    // range on scanned_at lets the engine seek in the (…, scanned_at) index instead of filtering.
    clauses.push(`scanned_at <= ? AND (scanned_at < ? OR ${id} < ?)`);
    params.push(cursor.scannedAt, cursor.scannedAt, cursor.id);
  }
  for (const [clause, param] of extra) {
    clauses.push(clause);
    params.push(param);
  }
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

/**
 * The cuboid holding exactly the filtered (and grouped) dimensions, and the clauses picking the
 * filtered values and grade among its rows.
 */
export function rollupCellsOf(filters: ScanFilters, groupBy?: GroupBy): { cuboid: number; clauses: string[]; params: string[] } {
  let cuboid = 0;
  const clauses: string[] = [];
  const params: string[] = [];
  for (const { bit, column, filter } of ROLLUP_DIMENSIONS) {
    const value = filters[filter];
    if (value !== undefined) {
      clauses.push(`${column} = ?`);
      params.push(value);
    }
    if (value !== undefined || groupBy === filter) cuboid |= bit;
  }
  if (filters.grade !== undefined) {
    clauses.push('grade = ?');
    params.push(filters.grade);
  }
  return { cuboid, clauses, params };
}

/**
 * The reads of `scan_rollups` rows (WHERE clause and parameters) that make whole days [firstDay,
 * endDay) for a stats query without a hostname: the cuboid split by exactly the filtered and grouped
 * dimensions, every other dimension '*'. Whole months come from month rows (except for groupBy=day),
 * the days around them from day rows.
 */
export function rollupReads(filters: ScanFilters, groupBy: GroupBy, firstDay: number, endDay: number, monthsFrom: number): { where: string; params: Param[] }[] {
  const { cuboid, clauses, params } = rollupCellsOf(filters, groupBy);
  const reads: { where: string; params: Param[] }[] = [];
  const read = (level: number, from: number, to: number) => {
    if (from >= to) return;
    const bounded = [...(Number.isFinite(from) ? [['day >= ?', from]] : []), ...(Number.isFinite(to) ? [['day < ?', to]] : [])] as [string, number][];
    reads.push({ where: ['cuboid = ?', ...clauses, ...bounded.map(([clause]) => clause)].join(' AND '), params: [cuboid | level, ...params, ...bounded.map(([, bound]) => bound)] });
  };
  const monthFrom = Math.max(monthsFrom, Number.isFinite(firstDay) ? (monthOf(firstDay) === firstDay ? firstDay : nextMonthOf(firstDay)) : -Infinity);
  const monthTo = Number.isFinite(endDay) ? monthOf(endDay) : Infinity;
  if (groupBy === 'day' || monthFrom >= monthTo) {
    read(0, firstDay, endDay);
    return reads;
  }
  read(0, firstDay, monthFrom);
  read(MONTH, monthFrom, monthTo);
  read(0, monthTo, endDay);
  return reads;
}
