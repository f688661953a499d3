import { boolean, doublePrecision, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { bytea, int8, jsonText } from './columns.ts';

// The twins of src/db/schema/scans.ts (what each table and column means, and why each index exists,
// is documented there). SQLite's scans table also has its implicit rowid, which the rollup watermark
// counts in; PostgreSQL has none, and what replaces it is the engine's choice (issue 30), not a column here yet.

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
  },
  (table) => [
    index('scans_hostname_scanned_at_idx').on(table.hostname, table.scannedAt, table.country, table.platform, table.pageType, table.grade),
    index('scans_badge_idx').on(table.hostname, table.trust, table.receivedAt),
    index('scans_scanned_at_url_idx').on(table.scannedAt, table.url, table.country, table.platform, table.pageType, table.grade),
  ],
);

export const scanRollups = pgTable(
  'scan_rollups',
  {
    cuboid: integer('cuboid').notNull(),
    country: text('country').notNull(),
    platform: text('platform').notNull(),
    pageType: text('page_type').notNull(),
    grade: text('grade').notNull(),
    day: integer('day').notNull(),
    scans: int8('scans').notNull(),
    percentageSum: doublePrecision('percentage_sum').notNull(),
    presentTitle: int8('present_title').notNull(),
    reportedTitle: int8('reported_title').notNull(),
    presentDescription: int8('present_description').notNull(),
    reportedDescription: int8('reported_description').notNull(),
    presentJsonLd: int8('present_json_ld').notNull(),
    reportedJsonLd: int8('reported_json_ld').notNull(),
    presentOpenGraph: int8('present_open_graph').notNull(),
    reportedOpenGraph: int8('reported_open_graph').notNull(),
    presentH1: int8('present_h1').notNull(),
    reportedH1: int8('reported_h1').notNull(),
    presentCanonical: int8('present_canonical').notNull(),
    reportedCanonical: int8('reported_canonical').notNull(),
    presentRobots: int8('present_robots').notNull(),
    reportedRobots: int8('reported_robots').notNull(),
    hostnames: bytea('hostnames').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.cuboid, table.country, table.platform, table.pageType, table.grade, table.day] }),
    index('scan_rollups_platform_idx').on(table.cuboid, table.platform, table.pageType, table.country, table.grade, table.day),
    index('scan_rollups_cuboid_day_idx').on(table.cuboid, table.day),
  ],
);

export const scanHostnameRollups = pgTable('scan_hostname_rollups', {
  hostname: text('hostname').primaryKey(),
  scans: int8('scans').notNull(),
  lastScannedAt: int8('last_scanned_at').notNull(),
});

export const scanRollupState = pgTable('scan_rollup_state', {
  /** SQLite fills an omitted integer primary key (the rowid); so does an identity. svc writes id 1 itself. */
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  watermark: int8('watermark').notNull(),
  /** Can hold Number.MIN_SAFE_INTEGER (any month, src/scans/rollups.ts): bigint, though a day number. */
  monthsFrom: int8('months_from').notNull(),
});
