import type { Database, SQLQueryBindings, Statement } from 'bun:sqlite';
import { PRESENCE_COLUMNS, PRESENCE_KEYS } from '../db/schema/scans.ts';
import { HLL_MAX_BYTES, HyperLogLog, hllHash } from '../lib/hyperloglog.ts';
import { inBatches, periodicTask } from '../lib/periodic.ts';
import { DAY_MS } from '../lib/time.ts';
import { writePause } from '../lib/write-pause.ts';
import { writeTransaction } from '../lib/write-transaction.ts';

/** At most this many scans folded per transaction; fewer when that would take longer than a step may (lib/periodic.ts). */
export const ROLLUP_CHUNK_ROWS = 250;
/**
 * The roller's steps are sized in work units, not scans (lib/periodic.ts times them): a cell new to
 * the cache costs a lookup and an insert into four B-trees, three to six times the update of a
 * cached one, so a step that starts a new day (every cell new) folding as many scans as the step
 * before held the thread for up to 9 ms instead of 2. A step folds scans while their units fit:
 * `scan` for each (reading it, its hostname's count), and for each of its cells the step has not
 * touched yet `cachedCell` or `newCell`.
 */
export const ROLLUP_UNITS = { scan: 3, cachedCell: 1, newCell: 4 } as const;
/** Units of a scan whose cells are all new to the step and the cache: a day cell and a month cell per cuboid. */
const MOST_SCAN_UNITS = ROLLUP_UNITS.scan + 2 * 8 * ROLLUP_UNITS.newCell;
/**
 * What a roller step aims at, half what other background steps do (lib/periodic.ts): a step's CPU
 * sometimes doubles on a busy 2-core machine, and a collection that starts inside one adds a few
 * ms, so 2 ms steps made turns of 6–8 ms on CPU. 1 ms steps cost ~7% of the roller's throughput on
 * an idle server (won back by the lookups CellCache spares) and give requests more of the thread
 * while a backlog rolls (docs/performance.md).
 */
export const ROLLUP_STEP_MS = 1;
/** The first step of a run (cold code, each statement's first run): at most as long as this many scans with every cell new. */
const FIRST_STEP_SCANS = 4;
const SECOND_MS = 1000;
/** Memory for each generation of the cells folded lately (a day's cells of every cuboid, on a busy server). */
const CELL_CACHE_BYTES = 8 * 1024 * 1024;
/** At most this many rollup rows dropped per transaction by retention. */
const DROP_ROWS = 1000;

const PRESENCE_COLUMN_LIST = PRESENCE_KEYS.map((k) => PRESENCE_COLUMNS[k]);
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

/** Month rows may start anywhere until retention first cuts a month. */
const ANY_MONTH = Number.MIN_SAFE_INTEGER;

/** The rollup watermark and the first month with month rows (one consistent read inside a transaction). */
export function rollupState(sqlite: Database): { watermark: number; monthsFrom: number } {
  const row = sqlite.query<{ watermark: number; months_from: number }, []>('SELECT watermark, months_from FROM scan_rollup_state WHERE id = 1').get();
  const monthsFrom = row?.months_from ?? ANY_MONTH;
  return { watermark: row?.watermark ?? 0, monthsFrom: monthsFrom === ANY_MONTH ? -Infinity : monthsFrom };
}

/**
 * Runs `statement` with the elements of `params` bound in order, passed whole as its one argument:
 * bun:sqlite binds an array argument's elements (bun-types does not describe that form), so the
 * call does not copy them into an argument array of their own. A write run with get() returns
 * null, where run() makes an object of its changes: both were garbage at every cell a step wrote.
 */
function runWith<Row>(statement: Statement<Row, SQLQueryBindings[]>, params: readonly unknown[]): Row | null {
  return statement.get(params as unknown as SQLQueryBindings);
}

/** A stored rollup row: its rowid and decoded sketch. */
interface StoredCell {
  rowid: number;
  sketch: HyperLogLog;
  bytes: number;
}

/**
 * Stored cells folded lately, by cell key, in two generations: when the newer one holds
 * CELL_CACHE_BYTES it becomes the older one and the older one is dropped whole (a cell read from
 * the older one moves back to the newer). Constant time per access, so a step never pays for an
 * eviction sweep.
 */
class CellCache {
  private newer = new Map<number, StoredCell>();
  private older = new Map<number, StoredCell>();
  private bytes = 0;
  /**
   * Days (and months, by dayKey) known, since the cache last turned over, to have every stored
   * cell cached (true: a day with no stored row when its first cell was folded here, every later
   * one cached as it was written), or not (false). A cell of a true day not cached is new: no
   * lookup. Scans arrive in time order, so most new cells are of such a day, and their lookups
   * (one statement each, finding nothing) cost about 5% of the roller's CPU.
   */
  private readonly days = new Map<number, boolean>();

  get(id: number): StoredCell | undefined {
    return this.newer.get(id) ?? this.older.get(id);
  }

  /** Whether every stored cell of the day is cached (undefined: not known). */
  allCached(dayKey: number): boolean | undefined {
    return this.days.get(dayKey);
  }

  noteDay(dayKey: number, allCached: boolean): void {
    this.days.set(dayKey, allCached);
  }

  /** Caches a cell, or notes that a cached one's sketch grew. */
  set(id: number, cell: StoredCell): void {
    const bytes = 64 + cell.sketch.footprint;
    if (this.newer.get(id) === cell) this.bytes += bytes - cell.bytes;
    else {
      this.newer.set(id, cell);
      this.bytes += bytes;
    }
    cell.bytes = bytes;
    if (this.bytes > CELL_CACHE_BYTES) {
      this.older = this.newer;
      this.newer = new Map();
      this.bytes = 0;
      // The older generation goes at the next turn-over, with cells of any day.
      this.days.clear();
    }
  }

  clear(): void {
    this.newer = new Map();
    this.older = new Map();
    this.bytes = 0;
    this.days.clear();
  }
}

/** Combinations numbered before the numbering starts afresh (with an empty cache). */
const MAX_COMBOS = 1 << 20;
/** Day numbers of any JavaScript date (at most 10^8 days from 1970) shifted to be non-negative, below 2^28. */
const DAY_OFFSET = 100_000_000;
const DAYS = 2 ** 28;

/** A cell as one number: its combination, cuboid (month bit included) and day. Below 2^53 while combos < MAX_COMBOS. */
const cellId = (cuboid: number, combo: number, day: number) => (combo * 2 * MONTH + cuboid) * DAYS + day + DAY_OFFSET;
const cuboidOf = (id: number) => Math.floor(id / DAYS) % (2 * MONTH);
const comboOf = (id: number) => Math.floor(id / DAYS / (2 * MONTH));
const cellDayOf = (id: number) => (id % DAYS) - DAY_OFFSET;
/** The cell's day, told apart from a month starting that day. */
const dayKeyOf = (id: number) => cellDayOf(id) * 2 + (cuboidOf(id) >= MONTH ? 1 : 0);

/**
 * Numbers for the (country, platform, page type, grade) values of the rows folded, and for each,
 * the numbers of the same values as the 8 cuboids keep them ('*' outside the cuboid): a row's 16
 * cells are then found by number, without building and hashing 16 string keys.
 */
class CellCombos {
  private readonly numbers = new Map<string, number>();
  private readonly byNumber: string[][] = [];
  private readonly rowCombos = new Map<string, number[]>();

  /** The combination number of each cuboid's cell of the row, by cuboid. */
  ofRow(row: RawStatsRow): number[] {
    const values = ROLLUP_DIMENSIONS.map((d) => (row[d.column] ?? NONE) as string);
    const id = `${values.join('\u0000')}\u0000${row.grade}`;
    let byCuboid = this.rowCombos.get(id);
    if (!byCuboid) {
      byCuboid = Array.from({ length: MONTH }, (_, cuboid) => this.number([...ROLLUP_DIMENSIONS.map((d, i) => (cuboid & d.bit ? values[i]! : ALL)), row.grade]));
      this.rowCombos.set(id, byCuboid);
    }
    return byCuboid;
  }

  /** The country, platform, page type and grade of a combination number. */
  values(combo: number): string[] {
    return this.byNumber[combo]!;
  }

  get full(): boolean {
    return this.byNumber.length >= MAX_COMBOS;
  }

  clear(): void {
    this.numbers.clear();
    this.rowCombos.clear();
    this.byNumber.length = 0;
  }

  private number(values: string[]): number {
    const id = values.join('\u0000');
    let combo = this.numbers.get(id);
    if (combo === undefined) {
      combo = this.byNumber.push(values) - 1;
      this.numbers.set(id, combo);
    }
    return combo;
  }
}

const CELL_COLUMNS = ['cuboid', ...ROLLUP_DIMENSIONS.map((d) => d.column), 'grade', 'day'];
const MEASURE_COLUMNS = ['scans', 'percentage_sum', ...PRESENT, ...REPORTED];
/** A cell's measures in a step: scans, the percentage sum, then how many present and how many reported each presence key. */
const MEASURES = MEASURE_COLUMNS.length;
const PRESENT_AT = 2;
const REPORTED_AT = 2 + PRESENCE_KEYS.length;

/**
 * The cells one step folds scans into, in the order it first touched them: their ids and measures
 * in typed arrays and their sketches by reference, kept from step to step. Folding a scan into its
 * 16 cells then allocates nothing: an object, two arrays and a list of hashes per cell per step
 * made most of the roller's garbage, and a collection that starts inside a step adds to its hold.
 */
class StepCells {
  private readonly slots = new Map<number, number>();
  private ids = new Float64Array(0);
  private measures = new Float64Array(0);
  /** The cell as stored (cached or read in this step), or null for a cell new to the table. */
  private stored: (StoredCell | null)[] = [];
  private sketches: (HyperLogLog | null)[] = [];
  private changed = new Uint8Array(0);
  size = 0;

  has(id: number): boolean {
    return this.slots.has(id);
  }

  /** The cell's slot, taking the next one (with the cell's stored row, if any) at its first scan. */
  slot(id: number, stored: (id: number) => StoredCell | null): number {
    let slot = this.slots.get(id);
    if (slot !== undefined) return slot;
    slot = this.size++;
    if (slot === this.ids.length) this.grow();
    this.slots.set(id, slot);
    this.ids[slot] = id;
    this.measures.fill(0, slot * MEASURES, (slot + 1) * MEASURES);
    const cell = stored(id);
    this.stored[slot] = cell;
    this.sketches[slot] = cell ? cell.sketch : new HyperLogLog();
    this.changed[slot] = 0;
    return slot;
  }

  /** Adds a scan's measures and hostname to the cell in `slot`. */
  add(slot: number, row: RawStatsRow, hostnameHash: number): void {
    const at = slot * MEASURES;
    const measures = this.measures;
    measures[at]!++;
    measures[at + 1]! += row.percentage;
    for (let i = 0; i < PRESENCE_COLUMN_LIST.length; i++) {
      const value = row[PRESENCE_COLUMN_LIST[i]!];
      if (value === null) continue;
      measures[at + REPORTED_AT + i]!++;
      if (value === 1) measures[at + PRESENT_AT + i]!++;
    }
    if (this.sketches[slot]!.addHash(hostnameHash)) this.changed[slot] = 1;
  }

  id(slot: number): number {
    return this.ids[slot]!;
  }
  storedCell(slot: number): StoredCell | null {
    return this.stored[slot]!;
  }
  sketch(slot: number): HyperLogLog {
    return this.sketches[slot]!;
  }
  sketchChanged(slot: number): boolean {
    return this.changed[slot] === 1;
  }

  /** Copies the cell's measures into `params` from `at` on, in MEASURE_COLUMNS order. */
  measuresInto(slot: number, params: unknown[], at: number): void {
    for (let i = 0; i < MEASURES; i++) params[at + i] = this.measures[slot * MEASURES + i]!;
  }

  /** Empties it for the next step (the sketches it held are let go). */
  clear(): void {
    this.slots.clear();
    this.stored.fill(null, 0, this.size);
    this.sketches.fill(null, 0, this.size);
    this.size = 0;
  }

  private grow(): void {
    const capacity = Math.max(64, this.ids.length * 2);
    const ids = new Float64Array(capacity);
    ids.set(this.ids);
    const measures = new Float64Array(capacity * MEASURES);
    measures.set(this.measures);
    const changed = new Uint8Array(capacity);
    changed.set(this.changed);
    [this.ids, this.measures, this.changed] = [ids, measures, changed];
  }
}

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
  const cellWhere = CELL_COLUMNS.map((c) => `${c} = ?`).join(' AND ');
  const storedCell = sqlite.prepare<{ rowid: number; hostnames: Uint8Array }, SQLQueryBindings[]>(`SELECT rowid, hostnames FROM scan_rollups WHERE ${cellWhere}`);
  const INSERT_COLUMNS = ['rowid', ...CELL_COLUMNS, ...MEASURE_COLUMNS, 'hostnames'];
  const insertCell = sqlite.prepare<unknown, SQLQueryBindings[]>(`INSERT INTO scan_rollups (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')})`);
  const maxCellRowid = sqlite.prepare<{ max: number | null }, []>('SELECT max(rowid) AS max FROM scan_rollups');
  const totalChanges = sqlite.prepare<{ changes: number }, []>('SELECT total_changes() AS changes');
  const addToCell = (sketch: string) =>
    sqlite.prepare<unknown, SQLQueryBindings[]>(`UPDATE scan_rollups SET ${MEASURE_COLUMNS.map((c) => `${c} = ${c} + ?`).join(', ')}${sketch} WHERE rowid = ?`);
  const addMeasures = addToCell('');
  const addMeasuresAndSketch = addToCell(', hostnames = ?');
  // Over scan_rollups_cuboid_day_idx: a seek per cuboid into its oldest rows.
  const cuboids = (from: number) => Array.from({ length: MONTH }, (_, i) => from + i).join(', ');
  const dropOldest = (level: number) =>
    sqlite.prepare<unknown, [number, number]>(`DELETE FROM scan_rollups WHERE rowid IN (SELECT rowid FROM scan_rollups WHERE cuboid IN (${cuboids(level)}) AND day < ? LIMIT ?)`);
  const dropDaysBefore = dropOldest(0);
  const dropMonthsBefore = dropOldest(MONTH);
  // Over scan_rollups_cuboid_day_idx as well: a seek per cuboid.
  const anyOfDay = (level: number) => sqlite.prepare<{ stored: number }, [number]>(`SELECT EXISTS (SELECT 1 FROM scan_rollups WHERE cuboid IN (${cuboids(level)}) AND day = ?) AS stored`);
  const anyDayCell = anyOfDay(0);
  const anyMonthCell = anyOfDay(MONTH);
  const maxRowid = sqlite.prepare<{ max: number | null }, []>('SELECT max(rowid) AS max FROM scans');
  const addToHostname = sqlite.prepare<unknown, SQLQueryBindings[]>(
    'INSERT INTO scan_hostname_rollups (hostname, scans, last_scanned_at) VALUES (?, ?, ?) ' +
      'ON CONFLICT (hostname) DO UPDATE SET scans = scans + excluded.scans, last_scanned_at = max(last_scanned_at, excluded.last_scanned_at)',
  );
  const takeFromHostname = sqlite.prepare<unknown, [number, string]>('UPDATE scan_hostname_rollups SET scans = scans - ? WHERE hostname = ?');
  const dropHostnameIfEmpty = sqlite.prepare<unknown, [string]>('DELETE FROM scan_hostname_rollups WHERE hostname = ? AND scans = 0');

  const watermark = () => rollupState(sqlite).watermark;

  const cache = new CellCache();
  /** The watermark when the cached cells were last known to match the stored ones (-1: never). */
  let cachedAt = -1;
  const combos = new CellCombos();

  /** A step: the scans folded, and whether more wait above them. */
  interface Step {
    scans: number;
    more: boolean;
  }

  const cells = new StepCells();
  /** The first day of the month of each day folded in the step. */
  const months = new Map<number, number>();
  /** Per hostname folded in the step: its scans and latest scannedAt. */
  const hostnameScans = new Map<string, number>();
  const hostnameLast = new Map<string, number>();
  // Statement parameters, filled in for each cell and passed whole (runWith; SQLite copies them).
  const keyParams: (string | number)[] = new Array(CELL_COLUMNS.length);
  const insertParams: (string | number | Uint8Array)[] = new Array(INSERT_COLUMNS.length);
  const addParams: (number | Uint8Array)[] = new Array(MEASURES + 1);
  const addSketchParams: (number | Uint8Array)[] = new Array(MEASURES + 2);
  const hostnameParams: [string, number, number] = ['', 0, 0];
  const encoded = new Uint8Array(HLL_MAX_BYTES);
  const keyOf = (id: number): (string | number)[] => {
    const values = combos.values(comboOf(id));
    keyParams[0] = cuboidOf(id);
    for (let i = 0; i < values.length; i++) keyParams[1 + i] = values[i]!;
    keyParams[1 + values.length] = cellDayOf(id);
    return keyParams;
  };
  const readStored = (id: number): StoredCell | null => {
    const cached = cache.get(id);
    if (cached) return cached;
    const dayKey = dayKeyOf(id);
    let allCached = cache.allCached(dayKey);
    if (allCached === undefined) {
      allCached = (cuboidOf(id) >= MONTH ? anyMonthCell : anyDayCell).get(cellDayOf(id))!.stored === 0;
      cache.noteDay(dayKey, allCached);
    }
    if (allCached) return null;
    const stored = runWith(storedCell, keyOf(id));
    return stored ? { rowid: stored.rowid, sketch: HyperLogLog.decode(stored.hostnames), bytes: 0 } : null;
  };

  /**
   * Fold the next scans above `mark` (at most chunkRows) into their day cell (and month cell) in
   * each of the 8 cuboids and into their hostname's count, as many as fit in `units`
   * (ROLLUP_UNITS; the first scan always, so every step moves on): one statement per cell and per
   * hostname (one row each: on this SQLite a multi-row INSERT or UPDATE ... FROM VALUES cost 1.5x
   * as much per row). Returns the rowid of the last scan folded (`mark` if none).
   * Cells folded lately are cached with their decoded sketch and rowid, and a sketch is written only
   * when the rows changed it: most rows of a large cell come from hostnames it already counts, and
   * reading, decoding, re-encoding and rewriting its sketch (up to 4 KiB) took most of a step.
   * A cached sketch takes the step's hostnames as its scans are folded: should the step fail, its
   * transaction rolls back and the next step starts with an empty cache (see rollStep).
   */
  function fold(mark: number, units: number): Step & { last: number } {
    const { monthsFrom } = rollupState(sqlite);
    const cellUnits = (id: number) => (cells.has(id) ? 0 : cache.get(id) ? ROLLUP_UNITS.cachedCell : ROLLUP_UNITS.newCell);
    let scans = 0;
    let spent = 0;
    let last = mark;
    let more = false;
    try {
      for (const row of rowsAbove.iterate(mark, chunkRows)) {
        const day = dayOf(row.scanned_at);
        let month = months.get(day);
        if (month === undefined) months.set(day, (month = monthOf(day)));
        const byCuboid = combos.ofRow(row);
        const inMonths = month >= monthsFrom;
        let cost = ROLLUP_UNITS.scan;
        for (let cuboid = 0; cuboid < MONTH; cuboid++) {
          cost += cellUnits(cellId(cuboid, byCuboid[cuboid]!, day));
          if (inMonths) cost += cellUnits(cellId(cuboid | MONTH, byCuboid[cuboid]!, month));
        }
        if (scans > 0 && spent + cost > units) {
          more = true;
          break;
        }
        spent += cost;
        scans++;
        last = row.rowid;
        hostnameScans.set(row.hostname, (hostnameScans.get(row.hostname) ?? 0) + 1);
        hostnameLast.set(row.hostname, Math.max(hostnameLast.get(row.hostname) ?? row.scanned_at, row.scanned_at));
        const hash = hllHash(row.hostname);
        for (let cuboid = 0; cuboid < MONTH; cuboid++) {
          const dayCell = cellId(cuboid, byCuboid[cuboid]!, day);
          cells.add(cells.slot(dayCell, readStored), row, hash);
          if (!inMonths) continue;
          const monthCell = cellId(cuboid | MONTH, byCuboid[cuboid]!, month);
          cells.add(cells.slot(monthCell, readStored), row, hash);
        }
      }
      // New cells take the rowids after the highest (what SQLite gives them anyway), so none is read back.
      let nextRowid = 0;
      const changesBefore = totalChanges.get()!.changes;
      for (let slot = 0; slot < cells.size; slot++) {
        const id = cells.id(slot);
        const sketch = cells.sketch(slot);
        const cell = cells.storedCell(slot);
        if (!cell) {
          if (nextRowid === 0) nextRowid = (maxCellRowid.get()!.max ?? 0) + 1;
          const rowid = nextRowid++;
          insertParams[0] = rowid;
          const key = keyOf(id);
          for (let i = 0; i < key.length; i++) insertParams[1 + i] = key[i]!;
          cells.measuresInto(slot, insertParams, 1 + key.length);
          insertParams[1 + key.length + MEASURES] = sketch.encodeInto(encoded);
          runWith(insertCell, insertParams);
          cache.set(id, { rowid, sketch, bytes: 0 });
          continue;
        }
        if (cells.sketchChanged(slot)) {
          cells.measuresInto(slot, addSketchParams, 0);
          addSketchParams[MEASURES] = sketch.encodeInto(encoded);
          addSketchParams[MEASURES + 1] = cell.rowid;
          runWith(addMeasuresAndSketch, addSketchParams);
        } else {
          cells.measuresInto(slot, addParams, 0);
          addParams[MEASURES] = cell.rowid;
          runWith(addMeasures, addParams);
        }
        cache.set(id, cell);
      }
      // Every cell one row changed: an update matching no row is a cached rowid no longer there, and
      // the transaction rolls back (the next one reads the cells afresh).
      const missing = cells.size - (totalChanges.get()!.changes - changesBefore);
      if (missing !== 0) throw new Error(`scan rollups: ${missing} cached cells are no longer stored`);
      for (const [hostname, count] of hostnameScans) {
        hostnameParams[0] = hostname;
        hostnameParams[1] = count;
        hostnameParams[2] = hostnameLast.get(hostname)!;
        runWith(addToHostname, hostnameParams);
      }
    } finally {
      cells.clear();
      months.clear();
      hostnameScans.clear();
      hostnameLast.clear();
    }
    return { scans, more: more || scans === chunkRows, last };
  }

  const rollStep = writeTransaction(sqlite, (units: number): Step => {
    const mark = watermark();
    // Another roller or retention moved the watermark: cached cells may not match the stored ones.
    if (mark !== cachedAt) cache.clear();
    // Cached cells are known by combination numbers: both go together.
    if (combos.full) {
      combos.clear();
      cache.clear();
    }
    cachedAt = -1; // until this transaction commits
    const { scans, more, last } = fold(mark, units);
    if (scans > 0) writeWatermark.run(last);
    return { scans, more };
  });
  /** One step (one transaction): the scans above the watermark that fit in `units`, at least one. */
  const step = (units: number): Step => {
    const folded = rollStep(units);
    cachedAt = watermark();
    return folded;
  };

  const catchUp = async (signal: AbortSignal): Promise<number> => {
    let scans = 0;
    const units = (size: number) => {
      const folded = step(size);
      scans += folded.scans;
      return folded.more ? size : 0;
    };
    await inBatches(units, chunkRows * MOST_SCAN_UNITS, signal, { pause: writePause(sqlite), firstRows: FIRST_STEP_SCANS * MOST_SCAN_UNITS, budgetMs: ROLLUP_STEP_MS });
    return scans;
  };
  const task = periodicTask('scan rollup', catchUp);

  return {
    /** Rowid of the last scan folded into the rollups (0: none). */
    watermark,

    /** Fold every scan above the watermark now, step by step; resolves with how many. One run at a time. */
    runOnce: task.runOnce,

    /** Fold one step now (outside runOnce's steps): the scans above the watermark whose cost fits in `units` (ROLLUP_UNITS), at least one. */
    step,

    /**
     * Retention is about to delete every scan before `day` (whole UTC days): drop the rollups of
     * those days, and of every month holding one of them (such a month is from now on read from
     * its day rows), in timed steps. Every commit, the months bound's first, waits out a WAL write
     * pause like the sweep's own (a commit during the pause keeps the log from starting over). Run
     * it again after the scans are deleted, for rows the roller folded meanwhile. Stats stop
     * counting those scans a little before they are deleted, never after.
     */
    async forgetBefore(day: number, signal?: AbortSignal): Promise<number> {
      const nextMonth = nextMonthOf(day - 1);
      const pause = { pause: writePause(sqlite) };
      // The months bound first, a step of its own (it changes no row of the drops: 0 ends the run).
      const writeBound = () => {
        writeMonthsFrom.run(nextMonth);
        return 0;
      };
      await inBatches(writeBound, 1, signal, pause);
      // The cells dropped may be cached.
      const drop = (statement: typeof dropDaysBefore, before: number) => (rows: number) => {
        cache.clear();
        return statement.run(before, rows).changes;
      };
      const months = await inBatches(drop(dropMonthsBefore, nextMonth), DROP_ROWS, signal, pause);
      return months + (await inBatches(drop(dropDaysBefore, day), DROP_ROWS, signal, pause));
    },

    /**
     * After retention deleted scans (inside the deleting transaction, oldest scannedAt first, so
     * a hostname's latest scan goes only with its last): the folded ones leave their hostname's
     * count. SQLite gives new rows the rowids above the highest remaining one, so the watermark
     * comes down to it if it was above.
     */
    afterDeleting(deleted: { rowid: number; hostname: string }[]): void {
      const mark = watermark();
      const folded = new Map<string, number>();
      for (const { rowid, hostname } of deleted) if (rowid <= mark) folded.set(hostname, (folded.get(hostname) ?? 0) + 1);
      for (const [hostname, scans] of folded) {
        takeFromHostname.run(scans, hostname);
        dropHostnameIfEmpty.run(hostname);
      }
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
