import { doublePrecision, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { PRESENT, REPORTED } from '../../../../scans/presence-columns.ts';
import { bytes, int8 } from './columns.ts';

// The stats rollups, in the database itself (PostgreSQL only: test/db-schema-parity.test.ts). SQLite
// keeps the same tables in a file of their own beside the database, outside its schema
// (src/storage/sqlite/db/rollups-file.ts, where each table and column is described), so that its roller's writes
// never hold the database's one write lock; PostgreSQL has no such lock to spare.

/** A cell's counts of present and reported presence keys. */
const counts = (names: string[]) => Object.fromEntries(names.map((name) => [name, int8(name).notNull()])) as Record<string, ReturnType<typeof int8>>;

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
    ...counts([...PRESENT, ...REPORTED]),
    hostnames: bytes('hostnames').notNull(),
  },
  (table) => [
    primaryKey({ name: 'scan_rollups_pkey', columns: [table.cuboid, table.country, table.platform, table.pageType, table.grade, table.day] }),
    index('scan_rollups_platform_idx').on(table.cuboid, table.platform, table.pageType, table.country, table.grade, table.day),
  ],
);

export const scanHostnameRollups = pgTable(
  'scan_hostname_rollups',
  {
    dimension: text('dimension').notNull(),
    value: text('value').notNull(),
    hostname: text('hostname').notNull(),
    scans: int8('scans').notNull(),
    lastScannedAt: int8('last_scanned_at').notNull(),
  },
  (table) => [primaryKey({ name: 'scan_hostname_rollups_pkey', columns: [table.dimension, table.value, table.hostname] })],
);

/**
 * One row (id 1, created by the migration with nothing folded and rows on any day): the scans of every transaction with an id below
 * `watermark` are folded; day rows exist only from `days_from` on, month rows from `months_from`.
 */
export const scanRollupState = pgTable('scan_rollup_state', {
  id: integer('id').primaryKey(),
  watermark: int8('watermark').notNull(),
  daysFrom: int8('days_from').notNull(),
  monthsFrom: int8('months_from').notNull(),
});
