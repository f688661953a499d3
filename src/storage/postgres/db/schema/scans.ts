import { sql } from 'drizzle-orm';
import { boolean, doublePrecision, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { int8, jsonText } from './columns.ts';

// The twins of src/storage/sqlite/db/schema/scans.ts (what each table and column means, and why each index exists,
// is documented there), with one column of PostgreSQL's own: SQLite's scans table has its implicit
// rowid, which the rollup watermark counts in; PostgreSQL has none, and a sequence would not do (its
// values are taken at insert and commit in any order, so a watermark over them could pass a row
// whose transaction commits later). Here the watermark is a transaction id: `xact`.

export const scans = pgTable(
  'scans',
  {
    id: text('id').primaryKey(),
    hostname: text('hostname').notNull(),
    url: text('url').notNull(),
    scannedAt: int8('scanned_at').notNull(),
    receivedAt: int8('received_at').notNull(),
    country: text('country'),
    platform: text('platform'),
    platformConfidence: doublePrecision('platform_confidence'),
    pageType: text('page_type'),
    grade: text('grade').notNull(),
    percentage: doublePrecision('percentage').notNull(),
    svcDetected: boolean('svc_detected'),
    svcVersion: text('svc_version'),
    vertical: text('vertical'),
    hasTitle: boolean('has_title'),
    hasDescription: boolean('has_description'),
    hasJsonLd: boolean('has_json_ld'),
    hasOpenGraph: boolean('has_open_graph'),
    hasH1: boolean('has_h1'),
    hasCanonical: boolean('has_canonical'),
    hasRobots: boolean('has_robots'),
    signals: jsonText('signals').$type<Record<string, unknown>>().notNull(),
    quality: jsonText('quality').$type<Record<string, unknown>>().notNull(),
    data: jsonText('data').$type<Record<string, unknown>>().notNull(),
    trust: integer('trust').notNull().default(0),
    /**
     * The id of the transaction that wrote the row (PostgreSQL only: test/db-schema-parity.test.ts).
     * The roller folds the rows below the oldest transaction still running (every transaction below
     * it has ended), so a transaction that wrote first and commits last holds the watermark back
     * and its rows are folded late, never skipped (src/storage/postgres/scan-rollups.ts).
     */
    xact: int8('xact').notNull().default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (table) => [
    index('scans_hostname_scanned_at_idx').on(table.hostname, table.scannedAt, table.country, table.platform, table.pageType, table.grade),
    index('scans_badge_idx').on(table.hostname, table.trust, table.receivedAt),
    index('scans_scanned_at_url_idx').on(table.scannedAt, table.url, table.country, table.platform, table.pageType, table.grade),
    // The rows at or above the watermark (the roller's batch, the stats and the backlog count of the
    // scans not folded yet): a B-tree, exact at once. `xact` grows with insertion order, so its
    // inserts append at the right edge. BRIN, tried first, summarizes a range of pages only once
    // VACUUM gets to it: until then every unsummarized range is read, so after a bulk import each
    // stats query read the whole table (100,000 scans: 270 ms for groupBy=day, 20 ms once vacuumed).
    index('scans_xact_idx').on(table.xact),
  ],
);
