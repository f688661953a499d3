import { index, integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * One row per accepted telemetry scan (spec §2.1, §2.4). Indexed columns hold what the dashboard
 * filters and groups on; `signals`, `quality` and `data` keep the JSON as accepted. The client IP
 * is never stored. Written by the group-commit writer (src/telemetry/writer.ts, through src/storage/sqlite/scans.ts) with a raw
 * prepared statement: keep its column list in step with this table.
 */
export const scans = sqliteTable(
  'scans',
  {
    id: text('id').primaryKey(),
    hostname: text('hostname').notNull(),
    url: text('url').notNull(),
    scannedAt: integer('scanned_at').notNull(),
    receivedAt: integer('received_at').notNull(),
    country: text('country'),
    platform: text('platform'),
    platformConfidence: real('platform_confidence'),
    pageType: text('page_type'),
    grade: text('grade').notNull(),
    percentage: real('percentage').notNull(),
    svcDetected: integer('svc_detected', { mode: 'boolean' }),
    svcVersion: text('svc_version'),
    vertical: text('vertical'),
    // signalPresence, one column per key: null when the scanner did not say.
    hasTitle: integer('has_title', { mode: 'boolean' }),
    hasDescription: integer('has_description', { mode: 'boolean' }),
    hasJsonLd: integer('has_json_ld', { mode: 'boolean' }),
    hasOpenGraph: integer('has_open_graph', { mode: 'boolean' }),
    hasH1: integer('has_h1', { mode: 'boolean' }),
    hasCanonical: integer('has_canonical', { mode: 'boolean' }),
    hasRobots: integer('has_robots', { mode: 'boolean' }),
    signals: text('signals', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    quality: text('quality', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    /** Unknown fields, and the raw value of every optional field that did not pass its rule. */
    data: text('data', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    /**
     * Who sent the scan, as far as the server can tell: 0 an unverified lead's token, 1 a verified
     * lead's, 2 a signed request with an agent key. The badge ranks by it (telemetry/payload.ts).
     * Scans stored before the column existed count as 0.
     */
    trust: integer('trust').notNull().default(0),
  },
  (table) => [
    // Only three indexes besides the id: every index is paid for on each insert (issue 12 measured
    // ~60k rows/s with two against ~34k with the eight this table had). The first two carry the
    // filter columns, so a filtered read decides from index entries alone which rows to fetch.
    // Hostname filter, hostname stats and the hostnames list.
    index('scans_hostname_scanned_at_idx').on(table.hostname, table.scannedAt, table.country, table.platform, table.pageType, table.grade),
    // The badge: a hostname's most trusted, then most recently received scan, read as the last
    // entry of this narrow index (scannedAt is the client's claim and cannot order what the public
    // sees; without it a hostname flooded with scans would make every badge read walk them all).
    index('scans_badge_idx').on(table.hostname, table.trust, table.receivedAt),
    // Time first: new scans land at the right-hand edge of this index instead of at random pages
    // (a url-first index measured ~35% slower per insert). It serves the newest-first list (with
    // its filters checked in the index; the rollups say which days hold matches, src/storage/sqlite/scan-dashboard.ts),
    // time ranges (stats edges, retention) and the bulk duplicate check on (scanned_at, url).
    index('scans_scanned_at_url_idx').on(table.scannedAt, table.url, table.country, table.platform, table.pageType, table.grade),
  ],
);

export type ScanRow = typeof scans.$inferSelect;
