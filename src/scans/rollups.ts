import type { Database } from 'bun:sqlite';
import { PRESENCE_COLUMNS, PRESENCE_KEYS } from '../db/schema/scans.ts';
import { HyperLogLog, hllHash } from '../lib/hyperloglog.ts';
import { inBatches, periodicTask } from '../lib/periodic.ts';
import { DAY_MS } from '../lib/time.ts';

/** At most this many scans folded per transaction; fewer when that would take longer than a step may (lib/periodic.ts). */
export const ROLLUP_CHUNK_ROWS = 250;
const SECOND_MS = 1000;

/** The columns of a scan that the stats read (raw rows below and above the watermark alike). */
export const RAW_STATS_COLUMNS = `rowid, scanned_at, hostname, country, platform, page_type, grade, percentage, ${PRESENCE_KEYS.map((k) => PRESENCE_COLUMNS[k]).join(', ')}`;

export interface RawStatsRow {
  rowid: number;
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
/** A dimension outside a row's cuboid: every value. */
export const ALL = '*';
/** A null dimension value inside a cuboid. */
export const NONE = '';

export const PRESENT = PRESENCE_KEYS.map((k) => `present_${PRESENCE_COLUMNS[k].slice('has_'.length)}`);
export const REPORTED = PRESENCE_KEYS.map((k) => `reported_${PRESENCE_COLUMNS[k].slice('has_'.length)}`);

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
    PRESENCE_KEYS.forEach((k, i) => {
      const value = row[PRESENCE_COLUMNS[k]];
      if (value === null) return;
      this.reported[i]!++;
      if (value === 1) this.present[i]!++;
    });
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

/** Month rows may start anywhere until retention first cuts a month. */
const ANY_MONTH = Number.MIN_SAFE_INTEGER;

/** The rollup watermark and the first month with month rows (one consistent read inside a transaction). */
export function rollupState(sqlite: Database): { watermark: number; monthsFrom: number } {
  const row = sqlite.query<{ watermark: number; months_from: number }, []>('SELECT watermark, months_from FROM scan_rollup_state WHERE id = 1').get();
  const monthsFrom = row?.months_from ?? ANY_MONTH;
  return { watermark: row?.watermark ?? 0, monthsFrom: monthsFrom === ANY_MONTH ? -Infinity : monthsFrom };
}

const CELL_COLUMNS = ['cuboid', ...ROLLUP_DIMENSIONS.map((d) => d.column), 'grade', 'day'];
const MEASURE_COLUMNS = ['scans', 'percentage_sum', ...PRESENT, ...REPORTED];

/**
 * The stats rollups (DESIGN §5, issue 4): a background roller folds scans above the watermark (by
 * rowid, so it never misses a row whatever its scannedAt) into scan_rollups, one small transaction
 * per chunk with a turn of the event loop between chunks. The telemetry write path stays as it was:
 * a stats query adds the few rows above the watermark from the scans table itself.
 */
export function createScanRollups(sqlite: Database, chunkRows = ROLLUP_CHUNK_ROWS) {
  sqlite.prepare('INSERT OR IGNORE INTO scan_rollup_state (id, watermark, months_from) VALUES (1, 0, ?)').run(ANY_MONTH);
  const writeWatermark = sqlite.prepare<unknown, [number]>('UPDATE scan_rollup_state SET watermark = ? WHERE id = 1');
  const writeMonthsFrom = sqlite.prepare<unknown, [number]>('UPDATE scan_rollup_state SET months_from = max(months_from, ?) WHERE id = 1');
  const rowsAbove = sqlite.prepare<RawStatsRow, [number, number]>(`SELECT ${RAW_STATS_COLUMNS} FROM scans WHERE rowid > ? ORDER BY rowid LIMIT ?`);
  const rowsOfDay = sqlite.prepare<RawStatsRow, [number, number, number]>(
    `SELECT ${RAW_STATS_COLUMNS} FROM scans WHERE scanned_at >= ? AND scanned_at < ? AND rowid <= ?`,
  );
  const cellWhere = CELL_COLUMNS.map((c) => `${c} = ?`).join(' AND ');
  const sketchOf = sqlite.prepare<{ hostnames: Uint8Array }, (string | number)[]>(`SELECT hostnames FROM scan_rollups WHERE ${cellWhere}`);
  const upsert = sqlite.prepare<unknown, (string | number | Uint8Array)[]>(
    `INSERT INTO scan_rollups (${[...CELL_COLUMNS, ...MEASURE_COLUMNS, 'hostnames'].join(', ')}) ` +
      `VALUES (${[...CELL_COLUMNS, ...MEASURE_COLUMNS, 'hostnames'].map(() => '?').join(', ')}) ` +
      `ON CONFLICT (${CELL_COLUMNS.join(', ')}) DO UPDATE SET ${MEASURE_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}, hostnames = excluded.hostnames`,
  );
  const dropBefore = sqlite.prepare<unknown, [number, number]>(`DELETE FROM scan_rollups WHERE day <= ? OR (cuboid >= ${MONTH} AND day < ?)`);
  const maxRowid = sqlite.prepare<{ max: number | null }, []>('SELECT max(rowid) AS max FROM scans');

  const watermark = () => rollupState(sqlite).watermark;

  /** Add rows to their day cell (and month cell) in each of the 8 cuboids, merging with the stored cells. */
  function fold(rows: RawStatsRow[]): void {
    const { monthsFrom } = rollupState(sqlite);
    const cells = new Map<string, { key: (string | number)[]; measures: Measures }>();
    const months = new Map<number, number>();
    const add = (key: (string | number)[], row: RawStatsRow, hash: number) => {
      const id = key.join('\u0000');
      let cell = cells.get(id);
      if (!cell) cells.set(id, (cell = { key, measures: new Measures() }));
      cell.measures.addRow(row, hash);
    };
    for (const row of rows) {
      const hash = hllHash(row.hostname);
      const day = dayOf(row.scanned_at);
      let month = months.get(day);
      if (month === undefined) months.set(day, (month = monthOf(day)));
      for (let cuboid = 0; cuboid < MONTH; cuboid++) {
        const dimensions = ROLLUP_DIMENSIONS.map((d) => (cuboid & d.bit ? (row[d.column] ?? NONE) : ALL) as string);
        add([cuboid, ...dimensions, row.grade, day], row, hash);
        if (month >= monthsFrom) add([cuboid | MONTH, ...dimensions, row.grade, month], row, hash);
      }
    }
    for (const { key, measures } of cells.values()) {
      const stored = sketchOf.get(...key);
      if (stored) measures.hostnames.mergeEncoded(stored.hostnames);
      upsert.run(...key, measures.scans, measures.percentageSum, ...measures.present, ...measures.reported, measures.hostnames.encode());
    }
  }

  const rollChunk = sqlite.transaction((limit: number): number => {
    const rows = rowsAbove.all(watermark(), limit);
    if (rows.length === 0) return 0;
    fold(rows);
    writeWatermark.run(rows.at(-1)!.rowid);
    return rows.length;
  });

  const catchUp = (): Promise<number> => inBatches(rollChunk, chunkRows);
  const task = periodicTask('scan rollup', catchUp);

  return {
    /** Rowid of the last scan folded into the rollups (0: none). */
    watermark,

    /** Fold every scan above the watermark now, chunk by chunk; resolves with how many. One run at a time. */
    runOnce: task.runOnce,

    /**
     * After retention deleted every scan before `day` and some of `day` (inside the deleting
     * transaction): drop the rollups of the emptied days and of `day`'s month, which from now on
     * is read from day rows (rebuilding a month per deleting batch would cost too much), and
     * rebuild `day` from the scans left. The watermark comes down to the highest remaining rowid,
     * since SQLite reuses the rowids above it for new rows.
     */
    afterDeletingBefore(day: number): void {
      const mark = watermark();
      const nextMonth = nextMonthOf(day);
      dropBefore.run(day, nextMonth);
      writeMonthsFrom.run(nextMonth);
      fold(rowsOfDay.all(day * DAY_MS, (day + 1) * DAY_MS, mark));
      const highest = maxRowid.get()?.max ?? 0;
      if (highest < mark) writeWatermark.run(highest);
    },

    /** Catch up now and then every `intervalMs` (every second by default). */
    start: (intervalMs = SECOND_MS) => task.start(intervalMs),
    /** Stop the timer and wait for a run in progress (graceful shutdown, before the database closes). */
    stop: task.stop,
  };
}

export type ScanRollups = ReturnType<typeof createScanRollups>;
