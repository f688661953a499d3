// The fold of a batch of scans into their rollup cells and hostname counts, in memory: what every
// engine's roller does between reading the scans not folded yet and writing the cells
// (src/storage/sqlite/scan-roller.ts, src/storage/postgres/scan-rollups.ts).
import { PRESENCE_COLUMN_LIST, PRESENT, REPORTED } from './presence-columns.ts';
import { PRESENCE_KEYS } from './vocabulary.ts';
import { HyperLogLog, hllHash } from '../lib/hyperloglog.ts';
import { ALL, ALL_SCANS, dayOf, HOSTNAME_DIMENSIONS, MONTH, monthOf, NONE, ROLLUP_DIMENSIONS, type RawStatsRow } from './rollups.ts';

/**
 * A batch folds scans until its cells reach this many (or the scans run out), so its memory is
 * bounded however the scans spread: a cell holds its measures, sketch and key (~400 bytes). The
 * larger the batch, the fewer times a cell is read, merged and written again: an import spread over
 * a year makes ~4.4 cells per scan, so 900,000 lets a batch take its 200,000 scans, and the fold
 * ran 5,475 -> 8,003 scans per CPU-second (bench/roller.ts). The server's peak during a 1M-scan
 * catch-up (bench/catch-up.ts) went 1.25 -> 1.85 GB, and back to 1.31 GB with a collection after
 * each large batch (foldAll).
 */
export const BATCH_CELLS = 900_000;
/** A batch of at least this many scans is followed by a full garbage collection (each engine's roller). */
export const COLLECT_AFTER_SCANS = 20_000;
/** A batch folds at most this many scans, so that the stats see a long import's first scans folded early on. */
export const BATCH_SCANS = 200_000;
/** Scans read from the database at a time (a short read each: no read snapshot is held while the batch is written). */
export const READ_ROWS = 5_000;
/** At most this many scans deleted per retention transaction (it writes the database, so it is kept short). */
export const RETENTION_BATCH_ROWS = 500;

/** The key columns of a rollup cell, in the rollups table's key order. */
export const CELL_COLUMNS = ['cuboid', ...ROLLUP_DIMENSIONS.map((d) => d.column), 'grade', 'day'];
/** A cell's measure columns: scans, the percentage sum, then how many present and how many reported each presence key. */
export const MEASURE_COLUMNS = ['scans', 'percentage_sum', ...PRESENT, ...REPORTED];
export const MEASURES = MEASURE_COLUMNS.length;
const PRESENT_AT = 2;
const REPORTED_AT = 2 + PRESENCE_KEYS.length;

/** Day numbers of any JavaScript date (at most 10^8 days from 1970) shifted to be non-negative, below 2^28. */
const DAY_OFFSET = 100_000_000;
const DAYS = 2 ** 28;
/** A cell as one number: its combination, cuboid (month bit included) and day; below 2^53 for 2^21 combinations. */
const cellId = (cuboid: number, combo: number, day: number) => (combo * 2 * MONTH + cuboid) * DAYS + day + DAY_OFFSET;
const cuboidOf = (id: number) => Math.floor(id / DAYS) % (2 * MONTH);
const comboOf = (id: number) => Math.floor(id / DAYS / (2 * MONTH));
const cellDayOf = (id: number) => (id % DAYS) - DAY_OFFSET;

/**
 * Numbers for the (country, platform, page type, grade) values of the rows folded, and for each,
 * the numbers of the same values as the 8 cuboids keep them ('*' outside the cuboid): a row's 16
 * cells are then found by number, without building and hashing 16 string keys. Numbered anew for
 * each batch, so the numbers stay few.
 */
export class CellCombos {
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

  /** Each combination number's rank in the order of the rollups table's key (its values compared in turn). */
  ranks(): Uint32Array {
    const byNumber = this.byNumber;
    const order = Array.from({ length: byNumber.length }, (_, combo) => combo).sort((a, b) => {
      const [x, y] = [byNumber[a]!, byNumber[b]!];
      for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
      return 0;
    });
    const ranks = new Uint32Array(byNumber.length);
    order.forEach((combo, rank) => (ranks[combo] = rank));
    return ranks;
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

/** A copy of `array` with room for `length` elements (the batch's typed arrays double as they fill). */
function grown(array: Float64Array, length: number): Float64Array<ArrayBuffer> {
  const copy = new Float64Array(length);
  copy.set(array);
  return copy;
}

/**
 * The cells of one batch: their ids and measures in typed arrays, their sketches by reference. Folding
 * a scan into its 16 cells allocates nothing but a sketch for a cell new to the batch.
 */
export class BatchCells {
  private readonly slots = new Map<number, number>();
  private ids = new Float64Array(1024);
  private measures = new Float64Array(1024 * MEASURES);
  private sketches: HyperLogLog[] = [];
  size = 0;

  /** Adds a scan's measures and hostname to the cell `id`. */
  add(id: number, row: RawStatsRow, hostnameHash: number): void {
    let slot = this.slots.get(id);
    if (slot === undefined) {
      slot = this.size++;
      if (slot === this.ids.length) this.grow();
      this.slots.set(id, slot);
      this.ids[slot] = id;
      this.measures.fill(0, slot * MEASURES, (slot + 1) * MEASURES);
      this.sketches[slot] = new HyperLogLog();
    }
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
    this.sketches[slot]!.addHash(hostnameHash);
  }

  /**
   * The slots in the order of the rollups table's key: cuboid, the combination's values (by `ranks`),
   * day. The writes then walk each B-tree page once per batch instead of jumping across the table.
   */
  ordered(ranks: Uint32Array): Uint32Array {
    const keys = new Float64Array(this.size);
    const combos = ranks.length;
    for (let slot = 0; slot < this.size; slot++) {
      const id = this.ids[slot]!;
      keys[slot] = (cuboidOf(id) * combos + ranks[comboOf(id)]!) * DAYS + (id % DAYS);
    }
    const order = new Uint32Array(this.size);
    for (let i = 0; i < this.size; i++) order[i] = i;
    return order.sort((a, b) => keys[a]! - keys[b]!);
  }

  id(slot: number): number {
    return this.ids[slot]!;
  }
  sketch(slot: number): HyperLogLog {
    return this.sketches[slot]!;
  }
  measure(slot: number, i: number): number {
    return this.measures[slot * MEASURES + i]!;
  }
  addToMeasure(slot: number, i: number, value: number): void {
    this.measures[slot * MEASURES + i]! += value;
  }

  clear(): void {
    this.slots.clear();
    this.sketches = [];
    this.size = 0;
  }

  private grow(): void {
    this.ids = grown(this.ids, this.ids.length * 2);
    this.measures = grown(this.measures, this.ids.length * MEASURES);
  }
}

/** A scan as the per-hostname counts see it. */
export type HostnameScan = Pick<RawStatsRow, 'hostname' | 'scanned_at' | 'country' | 'platform' | 'page_type' | 'grade'>;

/**
 * Per-hostname counts of a batch (or of the scans a retention step deletes): each scan counts under
 * its hostname over all scans, and under each of its HOSTNAME_DIMENSIONS values (not a null one).
 */
export class HostnameCounts {
  private readonly slots = new Map<string, number>();
  private readonly keys: [dimension: string, value: string, hostname: string][] = [];
  private scans = new Float64Array(1024);
  private last = new Float64Array(1024);

  add(row: HostnameScan): void {
    this.count(ALL_SCANS, ALL_SCANS, row.hostname, row.scanned_at);
    for (const { column } of HOSTNAME_DIMENSIONS) {
      const value = row[column];
      if (value !== null) this.count(column, value, row.hostname, row.scanned_at);
    }
  }

  /** Each (dimension, value, hostname) counted, with its scans and latest scannedAt, in the table's key order. */
  forEach(visit: (dimension: string, value: string, hostname: string, scans: number, last: number) => void): void {
    for (const key of [...this.slots.keys()].sort()) {
      const slot = this.slots.get(key)!;
      const [dimension, value, hostname] = this.keys[slot]!;
      visit(dimension, value, hostname, this.scans[slot]!, this.last[slot]!);
    }
  }

  clear(): void {
    this.slots.clear();
    this.keys.length = 0;
  }

  private count(dimension: string, value: string, hostname: string, scannedAt: number): void {
    const key = `${dimension}\u0000${value}\u0000${hostname}`;
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.keys.push([dimension, value, hostname]) - 1;
      if (slot === this.scans.length) {
        this.scans = grown(this.scans, slot * 2);
        this.last = grown(this.last, slot * 2);
      }
      this.slots.set(key, slot);
      this.scans[slot] = 0;
      this.last[slot] = scannedAt;
    }
    this.scans[slot]!++;
    if (scannedAt > this.last[slot]!) this.last[slot] = scannedAt;
  }
}


/**
 * One batch of a roller: the scans it read, added up into their 16 cells each (a day cell and a
 * month cell in each of the 8 cuboids) and their hostname's counts.
 */
export class FoldBatch {
  readonly cells = new BatchCells();
  readonly hostnames = new HostnameCounts();
  private readonly combos = new CellCombos();
  private readonly months = new Map<number, number>();
  private readonly keyParams: (string | number)[] = new Array(CELL_COLUMNS.length);

  /**
   * Adds a scan. A scan of a day before `daysFrom` (retention already dropped its day: it arrived
   * late, and goes with the next sweep) makes no cells, which would outlive it; month cells only
   * from `monthsFrom` on. Its hostname counts it until it is deleted.
   */
  add(row: RawStatsRow, daysFrom: number, monthsFrom: number): void {
    const { cells, combos, months } = this;
    const day = dayOf(row.scanned_at);
    let month = months.get(day);
    if (month === undefined) months.set(day, (month = monthOf(day)));
    const byCuboid = combos.ofRow(row);
    const hash = hllHash(row.hostname);
    if (day >= daysFrom) {
      for (let cuboid = 0; cuboid < MONTH; cuboid++) {
        cells.add(cellId(cuboid, byCuboid[cuboid]!, day), row, hash);
        if (month >= monthsFrom) cells.add(cellId(cuboid | MONTH, byCuboid[cuboid]!, month), row, hash);
      }
    }
    this.hostnames.add(row);
  }

  /** The slots of the batch's cells in the rollups table's key order (see BatchCells.ordered). */
  ordered(): Uint32Array {
    return this.cells.ordered(this.combos.ranks());
  }

  /** The key of a slot's cell (CELL_COLUMNS): an array reused by the next call. */
  keyOf(slot: number): (string | number)[] {
    const id = this.cells.id(slot);
    const values = this.combos.values(comboOf(id));
    const key = this.keyParams;
    key[0] = cuboidOf(id);
    for (let i = 0; i < values.length; i++) key[1 + i] = values[i]!;
    key[1 + values.length] = cellDayOf(id);
    return key;
  }

  clear(): void {
    this.cells.clear();
    this.combos.clear();
    this.months.clear();
    this.hostnames.clear();
  }
}
