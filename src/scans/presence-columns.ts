import { PRESENCE_KEYS, type PresenceKey } from './vocabulary.ts';

/** The column of the scans table that holds each signalPresence key (1, 0 or null). */
export const PRESENCE_COLUMNS: Record<PresenceKey, string> = {
  title: 'has_title',
  description: 'has_description',
  jsonLd: 'has_json_ld',
  openGraph: 'has_open_graph',
  h1: 'has_h1',
  canonical: 'has_canonical',
  robots: 'has_robots',
};

/** The presence columns in PRESENCE_KEYS order. */
export const PRESENCE_COLUMN_LIST = PRESENCE_KEYS.map((k) => PRESENCE_COLUMNS[k]);

const PRESENCE_NAMES = PRESENCE_COLUMN_LIST.map((column) => column.slice('has_'.length));
/** The rollups' measure columns of each presence key, in PRESENCE_KEYS order: how many scans had it present, and how many reported it (true or false). */
export const PRESENT = PRESENCE_NAMES.map((name) => `present_${name}`);
export const REPORTED = PRESENCE_NAMES.map((name) => `reported_${name}`);
