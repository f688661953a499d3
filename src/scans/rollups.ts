// The stats rollups' model (DESIGN §5, issues 4 and 29), whatever engine keeps them: the cuboids,
// the measures of a set of scans, days and months. Each engine's roller folds the scans into them
// (src/scans/fold.ts), and its dashboard reads add the rows not folded yet (src/scans/stats.ts).
import { PRESENCE_COLUMN_LIST, PRESENT, REPORTED } from './presence-columns.ts';
import { PRESENCE_KEYS } from './vocabulary.ts';
import { HyperLogLog, hllHash } from '../lib/hyperloglog.ts';
import { DAY_MS } from '../lib/time.ts';

/** The roller runs every second: a scan is folded about a second after it is stored. */
export const ROLL_EVERY_MS = 1000;

/** A scan's columns that the stats read (raw rows below and above the watermark alike), presence flags as 1, 0 or null. */
export interface RawStatsRow {
  scanned_at: number;
  hostname: string;
  country: string | null;
  platform: string | null;
  page_type: string | null;
  grade: string;
  percentage: number;
  [presence: string]: string | number | null;
}

/** Rollup dimensions besides day and grade, with their cuboid bit. */
export const ROLLUP_DIMENSIONS = [
  { bit: 1, column: 'country', filter: 'country' },
  { bit: 2, column: 'platform', filter: 'platform' },
  { bit: 4, column: 'page_type', filter: 'pageType' },
] as const;
/**
 * The per-hostname counts are kept over all scans (dimension '') and per value of each of these
 * columns: the hostnames list with one such filter reads them (src/storage/sqlite/db/rollups-file.ts).
 */
export const HOSTNAME_DIMENSIONS = [
  { column: 'country', filter: 'country' },
  { column: 'platform', filter: 'platform' },
  { column: 'page_type', filter: 'pageType' },
  { column: 'grade', filter: 'grade' },
] as const;
/** The dimension (and value) of the per-hostname counts over all scans. */
export const ALL_SCANS = '';
/** A dimension outside a row's cuboid: every value. */
export const ALL = '*';
/** A null dimension value inside a cuboid. */
export const NONE = '';


/** Additive measures of a set of scans, plus the sketch of their hostnames. */
export class Measures {
  scans = 0;
  percentageSum = 0;
  readonly present = new Array<number>(PRESENCE_KEYS.length).fill(0);
  readonly reported = new Array<number>(PRESENCE_KEYS.length).fill(0);
  readonly hostnames = new HyperLogLog();

  addRow(row: RawStatsRow, hostnameHash = hllHash(row.hostname)): void {
    this.scans++;
    this.percentageSum += row.percentage;
    for (let i = 0; i < PRESENCE_COLUMN_LIST.length; i++) {
      const value = row[PRESENCE_COLUMN_LIST[i]!];
      if (value === null) continue;
      this.reported[i]!++;
      if (value === 1) this.present[i]!++;
    }
    this.hostnames.addHash(hostnameHash);
  }

  addRollup(row: Record<string, unknown>): void {
    this.scans += row.scans as number;
    this.percentageSum += row.percentage_sum as number;
    for (let i = 0; i < PRESENCE_KEYS.length; i++) {
      this.present[i]! += row[PRESENT[i]!] as number;
      this.reported[i]! += row[REPORTED[i]!] as number;
    }
    this.hostnames.mergeEncoded(row.hostnames as Uint8Array);
  }
}

export const dayOf = (ms: number) => Math.floor(ms / DAY_MS);
/** Cuboid bit of a month row. */
export const MONTH = 8;
/** The first day of the UTC month holding `day`, and of the month after it. */
export function monthOf(day: number): number {
  const date = new Date(day * DAY_MS);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / DAY_MS;
}
export function nextMonthOf(day: number): number {
  const date = new Date(day * DAY_MS);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / DAY_MS;
}

/** What the rollup state stores as its first day and first month until retention first cuts one: day and month rows may start anywhere. */
export const ANY_DAY = Number.MIN_SAFE_INTEGER;
/** A stored first day (or month) as a bound: -Infinity while any day may have rows. */
export const dayBound = (day: number | undefined) => (day === undefined || day === ANY_DAY ? -Infinity : day);

/** The rollup watermark (below it every scan is folded), the first day with day rows and the first month with month rows (retention dropped the ones before). */
export interface RollupState {
  watermark: number;
  daysFrom: number;
  monthsFrom: number;
}
