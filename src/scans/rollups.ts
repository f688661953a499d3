import type { Database } from 'bun:sqlite';
import { PRESENT, REPORTED, ROLLUPS } from '../db/rollups-file.ts';
import { PRESENCE_COLUMN_LIST } from './presence-columns.ts';
import { PRESENCE_KEYS } from './vocabulary.ts';
import { HyperLogLog, hllHash } from '../lib/hyperloglog.ts';
import { periodicTask } from '../lib/periodic.ts';
import { DAY_MS } from '../lib/time.ts';
import { workerCalls, workerEntry } from '../lib/worker-calls.ts';
import { writePause } from '../lib/write-pause.ts';

/** The roller runs every second: a scan is folded about a second after it is stored. */
const SECOND_MS = 1000;

/** The columns of a scan that the stats read (raw rows below and above the watermark alike). */
export const RAW_STATS_COLUMNS = `rowid, scanned_at, hostname, country, platform, page_type, grade, percentage, ${PRESENCE_COLUMN_LIST.join(', ')}`;

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
/**
 * The per-hostname counts are kept over all scans (dimension '') and per value of each of these
 * columns: the hostnames list with one such filter reads them (src/db/rollups-file.ts).
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

/** Day and month rows may start anywhere until retention first cuts one. */
const ANY_DAY = Number.MIN_SAFE_INTEGER;
const bound = (day: number | undefined) => (day === undefined || day === ANY_DAY ? -Infinity : day);

/**
 * The rollup watermark, the first day with day rows and the first month with month rows (retention
 * dropped the ones before): one consistent read inside a transaction.
 */
export function rollupState(sqlite: Database): { watermark: number; daysFrom: number; monthsFrom: number } {
  const row = sqlite
    .query<{ watermark: number; days_from: number; months_from: number }, []>(`SELECT watermark, days_from, months_from FROM ${ROLLUPS}.scan_rollup_state WHERE id = 1`)
    .get();
  return { watermark: row?.watermark ?? 0, daysFrom: bound(row?.days_from), monthsFrom: bound(row?.months_from) };
}

/**
 * The stats rollups (DESIGN §5, issues 4 and 29), folded by a Worker of their own
 * (src/scans/roller-worker.ts, src/scans/roller.ts) into the rollups file beside the database
 * (src/db/rollups-file.ts): the request thread never runs a fold, and the fold's writes never
 * hold the database's write lock. The telemetry write path stays as it was: a stats query adds the
 * rows above the watermark from the scans table itself. Scan retention runs in the same Worker, so
 * that the scans it deletes leave the rollups in the same transaction.
 */
export function createScanRollups(database: { file: string; sqlite: Database; stats(): Database }, batchScans?: number) {
  // The stats reader makes the rollups file ready (created, or started afresh) before the Worker attaches it.
  database.stats();
  const worker = workerCalls(new Worker(workerEntry('scans/roller-worker.ts')), 'scan roller');
  const call = (message: Record<string, unknown>) => worker.call<number>(message);
  const opened = call({ op: 'open', file: database.file, batchScans, pause: writePause(database.sqlite).shared });
  // Ended before it opened (a test's teardown): nothing waits on it then.
  opened.catch(() => {});
  /** Runs `op` in the Worker; `signal` aborting ends it (and anything queued behind it) at its next step. */
  const stoppable = async (op: Record<string, unknown>, signal: AbortSignal): Promise<number> => {
    await opened;
    if (signal.aborted) return 0;
    const result = call(op);
    const abort = () => void worker.call({ op: 'abort' }).catch(() => 0);
    signal.addEventListener('abort', abort, { once: true });
    try {
      return await result;
    } finally {
      signal.removeEventListener('abort', abort);
    }
  };
  const task = periodicTask('scan rollup', (signal) => stoppable({ op: 'fold' }, signal));
  let closed: Promise<void> | null = null;
  const terminate = () => worker.terminate('stopped');

  return {
    /** Resolves once the Worker has started and opened the database (a bench measures the folds of a started roller, as the server's is). */
    ready: (): Promise<void> => opened.then(() => undefined),

    /** Rowid of the last scan folded into the rollups (0: none). */
    watermark: () => rollupState(database.stats()).watermark,

    /** Fold every scan above the watermark now, batch by batch; resolves with how many. One run at a time. */
    runOnce: task.runOnce,

    /**
     * Retention: delete every scan before `firstKeptDay` (whole UTC days) and its rollups, in the
     * Worker (src/scans/roller.ts retain); resolves with the scans deleted.
     */
    retain: (firstKeptDay: number, signal: AbortSignal, batchRows?: number): Promise<number> => stoppable({ op: 'retain', firstKeptDay, batchRows }, signal),

    /** Catch up now and then every `intervalMs` (every second by default). */
    start: (intervalMs = SECOND_MS) => task.start(intervalMs),

    /** Stop the timer, wait for a run in progress, close the Worker's connection and end it (graceful shutdown, before the database closes). */
    stop(): Promise<void> {
      closed ??= (async () => {
        await task.stop();
        await call({ op: 'close' }).catch(() => 0);
        terminate();
      })();
      return closed;
    },

    /** End the Worker at once, whatever it is doing (its transaction rolls back): a test's teardown. */
    terminate,
  };
}

export type ScanRollups = ReturnType<typeof createScanRollups>;
