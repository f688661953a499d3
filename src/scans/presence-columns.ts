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
