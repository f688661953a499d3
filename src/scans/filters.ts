import { GRADES, PAGE_TYPES, SCAN_PLATFORMS } from './vocabulary.ts';
import { countryCode } from '../lib/country.ts';
import { normalizeHostname } from '../lib/hostname.ts';
import { badParameter, encodeKeysetCursor, parseKeysetCursor } from '../lib/query.ts';
import { parseTimestamp } from '../lib/time.ts';

/** Dashboard filters, all optional; `from` inclusive, `to` exclusive (epoch ms of scannedAt). */
export interface ScanFilters {
  hostname?: string;
  country?: string;
  platform?: string;
  pageType?: string;
  grade?: string;
  from?: number;
  to?: number;
}

export const GROUP_BYS = ['day', 'month', 'country', 'platform', 'pageType', 'grade'] as const;
export type GroupBy = (typeof GROUP_BYS)[number];

/** Where a page starts: after the row with this (scannedAt, id), newest first. */
export interface Cursor {
  scannedAt: number;
  id: string;
}

export { badParameter, parseLimit, queryParams } from '../lib/query.ts';

const oneOf = (name: string, values: readonly string[], value: string) => {
  if (!values.includes(value)) throw badParameter(name, `expected one of ${values.join(', ')}`);
  return value;
};

/** ISO-8601 timestamp with a zone, or a UTC date YYYY-MM-DD (its midnight). */
function instant(name: string, value: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? parseTimestamp(`${value}T00:00:00Z`) : parseTimestamp(value);
  if (ms === null) throw badParameter(name, 'expected an ISO-8601 timestamp with a time zone or a date YYYY-MM-DD');
  return ms;
}

export const FILTER_PARAMS = ['hostname', 'country', 'platform', 'pageType', 'grade', 'from', 'to'] as const;

export function parseFilters(params: Map<string, string>): ScanFilters {
  const filters: ScanFilters = {};
  const hostname = params.get('hostname');
  if (hostname !== undefined) {
    filters.hostname = normalizeHostname(hostname) ?? undefined;
    if (filters.hostname === undefined) throw badParameter('hostname', 'expected a bare host name such as shop.example.com');
  }
  const country = params.get('country');
  if (country !== undefined) {
    filters.country = countryCode(country) ?? undefined;
    if (filters.country === undefined) throw badParameter('country', 'expected an ISO 3166-1 alpha-2 code such as DE');
  }
  const platform = params.get('platform');
  if (platform !== undefined) filters.platform = oneOf('platform', SCAN_PLATFORMS, platform);
  const pageType = params.get('pageType');
  if (pageType !== undefined) filters.pageType = oneOf('pageType', PAGE_TYPES, pageType);
  const grade = params.get('grade');
  if (grade !== undefined) filters.grade = oneOf('grade', GRADES, grade.toUpperCase());
  const from = params.get('from');
  if (from !== undefined) filters.from = instant('from', from);
  const to = params.get('to');
  if (to !== undefined) filters.to = instant('to', to);
  if (filters.from !== undefined && filters.to !== undefined && filters.from >= filters.to) throw badParameter('to', 'must be later than from');
  return filters;
}

export function encodeCursor(cursor: Cursor): string {
  return encodeKeysetCursor({ at: cursor.scannedAt, id: cursor.id });
}

export function parseCursor(value: string | undefined): Cursor | null {
  const cursor = parseKeysetCursor(value);
  return cursor && { scannedAt: cursor.at, id: cursor.id };
}

export function parseGroupBy(value: string | undefined): GroupBy {
  if (value === undefined) throw badParameter('groupBy', `required; one of ${GROUP_BYS.join(', ')}`);
  return oneOf('groupBy', GROUP_BYS, value) as GroupBy;
}
