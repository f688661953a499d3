import { GRADES, PAGE_TYPES, SCAN_PLATFORMS } from '../db/schema/scans.ts';
import { countryCode } from '../lib/country.ts';
import { ApiError } from '../lib/errors.ts';
import { normalizeHostname } from '../lib/hostname.ts';
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

export const MAX_PAGE = 500;
export const DEFAULT_PAGE = 50;

/** 400 `invalid_query` naming the parameter. */
export const badParameter = (name: string, problem: string) => new ApiError(400, 'invalid_query', `${name}: ${problem}`);

/** The query string as single values; a repeated or unknown parameter is 400. */
export function queryParams(url: string, allowed: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of new URL(url).searchParams) {
    if (!allowed.includes(name)) throw badParameter(name, `unknown parameter; expected one of ${allowed.join(', ')}`);
    if (params.has(name)) throw badParameter(name, 'given more than once');
    params.set(name, value);
  }
  return params;
}

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

export function parseLimit(value: string | undefined, { fallback, max } = { fallback: DEFAULT_PAGE, max: MAX_PAGE }): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > max) throw badParameter('limit', `expected a whole number from 1 to ${max}`);
  return n;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.scannedAt, cursor.id])).toString('base64url');
}

export function parseCursor(value: string | undefined): Cursor | null {
  if (value === undefined) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    decoded = null;
  }
  if (!Array.isArray(decoded) || decoded.length !== 2 || !Number.isSafeInteger(decoded[0]) || typeof decoded[1] !== 'string' || decoded[1].length > 64) {
    throw badParameter('cursor', 'not a cursor from a previous page (nextCursor)');
  }
  return { scannedAt: decoded[0], id: decoded[1] };
}

export function parseGroupBy(value: string | undefined): GroupBy {
  if (value === undefined) throw badParameter('groupBy', `required; one of ${GROUP_BYS.join(', ')}`);
  return oneOf('groupBy', GROUP_BYS, value) as GroupBy;
}
