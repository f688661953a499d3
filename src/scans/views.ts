import type { Cursor } from './filters.ts';
import { PRESENCE_COLUMNS } from './presence-columns.ts';
import { PRESENCE_KEYS, type PresenceKey } from './vocabulary.ts';

/** A scan as the dashboard lists it: every column except the stored JSON. */
export interface ScanSummary {
  id: string;
  hostname: string;
  url: string;
  scannedAt: string;
  receivedAt: string;
  country: string | null;
  platform: { platform: string; confidence: number | null } | null;
  pageType: string | null;
  grade: string;
  percentage: number;
  svc: { detected: boolean | null; version: string | null };
  vertical: string | null;
  signalPresence: Record<PresenceKey, boolean | null>;
}

/** One scan in full: its summary and the JSON stored as accepted. */
export interface ScanDetail extends ScanSummary {
  signals: Record<string, unknown>;
  quality: Record<string, unknown>;
  data: Record<string, unknown>;
}

/** A page of the list; `next` is where the following page starts (null on the last page). */
export interface ScanPage {
  items: ScanSummary[];
  next: Cursor | null;
}

/** A hostname of the hostnames list: its scans and the latest scannedAt among them. */
export interface HostnameCount {
  hostname: string;
  scans: number;
  lastScannedAt: string;
}

/** A stored flag as an engine returns it (SQLite 1/0, PostgreSQL true/false), or null. */
type Flag = number | boolean | null;

/** The columns of a scan the summary shows, as both engines name them (times as epoch ms). */
export interface SummaryRow {
  id: string;
  hostname: string;
  url: string;
  scanned_at: number;
  received_at: number;
  country: string | null;
  platform: string | null;
  platform_confidence: number | null;
  page_type: string | null;
  grade: string;
  percentage: number;
  svc_detected: Flag;
  svc_version: string | null;
  vertical: string | null;
  [presence: string]: string | number | boolean | null;
}

/** The summary columns, in the order the list selects them. */
export const SUMMARY_COLUMNS = [
  'id', 'hostname', 'url', 'scanned_at', 'received_at', 'country', 'platform', 'platform_confidence', 'page_type', 'grade', 'percentage',
  'svc_detected', 'svc_version', 'vertical', ...PRESENCE_KEYS.map((k) => PRESENCE_COLUMNS[k]),
] as const;

const iso = (ms: number) => new Date(ms).toISOString();
const flag = (value: Flag | string | undefined) => (value === null || value === undefined ? null : value === 1 || value === true);

/** A stored scan's summary. */
export function summaryOf(row: SummaryRow): ScanSummary {
  return {
    id: row.id,
    hostname: row.hostname,
    url: row.url,
    scannedAt: iso(row.scanned_at),
    receivedAt: iso(row.received_at),
    country: row.country,
    platform: row.platform === null ? null : { platform: row.platform, confidence: row.platform_confidence },
    pageType: row.page_type,
    grade: row.grade,
    percentage: row.percentage,
    svc: { detected: flag(row.svc_detected), version: row.svc_version },
    vertical: row.vertical,
    signalPresence: Object.fromEntries(PRESENCE_KEYS.map((k) => [k, flag(row[PRESENCE_COLUMNS[k]] as Flag)])) as Record<PresenceKey, boolean | null>,
  };
}

/** A hostnames list row (scans, latest scannedAt in epoch ms) as the API shows it. */
export const hostnameCountOf = (row: { hostname: string; scans: number; last: number }): HostnameCount => ({ hostname: row.hostname, scans: row.scans, lastScannedAt: iso(row.last) });
