import type { Database, SQLQueryBindings } from 'bun:sqlite';
import { PRESENCE_COLUMN_LIST } from './presence-columns.ts';
import { PRESENCE_KEYS } from './vocabulary.ts';
import { HLL_MAX_BYTES, HyperLogLog, hllHash } from '../lib/hyperloglog.ts';
import { inBatches, yieldToEventLoop } from '../lib/periodic.ts';
import type { WritePause } from '../lib/write-pause.ts';
import { DAY_MS } from '../lib/time.ts';
import { PRESENT, REPORTED, ROLLUPS } from '../db/rollups-file.ts';
import { ALL, ALL_SCANS, dayOf, HOSTNAME_DIMENSIONS, MONTH, monthOf, nextMonthOf, NONE, RAW_STATS_COLUMNS, ROLLUP_DIMENSIONS, rollupState, type RawStatsRow } from './rollups.ts';

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
/** The roller's connection waits this long for a lock (roller-worker.ts sets it when it opens). */
export const BUSY_TIMEOUT_MS = 5_000;
/** The longest the checkpoint after a batch waits for stats queries on older snapshots to end. */
const CHECKPOINT_WAIT_MS = 200;
/** A batch of at least this many scans is followed by a full garbage collection (foldAll). */
const COLLECT_AFTER_SCANS = 20_000;
/** A batch folds at most this many scans, so that the stats see a long import's first scans folded early on. */
export const BATCH_SCANS = 200_000;
/** Scans read from the database at a time (a short read each: no read snapshot is held while the batch is written). */
const READ_ROWS = 5_000;
/** At most this many scans deleted per retention transaction (it writes the database, so it is kept short). */
export const RETENTION_BATCH_ROWS = 500;

const CELL_COLUMNS = ['cuboid', ...ROLLUP_DIMENSIONS.map((d) => d.column), 'grade', 'day'];
const MEASURE_COLUMNS = ['scans', 'percentage_sum', ...PRESENT, ...REPORTED];
/** A cell's measures: scans, the percentage sum, then how many present and how many reported each presence key. */
const MEASURES = MEASURE_COLUMNS.length;
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
class BatchCells {
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
type HostnameScan = Pick<RawStatsRow, 'hostname' | 'scanned_at' | 'country' | 'platform' | 'page_type' | 'grade'>;

/**
 * Per-hostname counts of a batch (or of the scans a retention step deletes): each scan counts under
 * its hostname over all scans, and under each of its HOSTNAME_DIMENSIONS values (not a null one).
 */
class HostnameCounts {
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
 * The roller and scan retention, on a connection of the database with the rollups file attached
 * (src/db/rollups-file.ts), run by the roller's Worker. A fold reads the scans above the watermark
 * (by rowid, so it never misses a row whatever its scannedAt) in short reads, adds them up in memory
 * into their 16 cells each (a day cell and a month cell in each of the 8 cuboids) and their
 * hostname's count, then writes every cell of the batch once, merged with its stored row, with the
 * new watermark, in one transaction of the rollups file. Writing each cell once per batch instead of
 * once per step is what makes it cheap: an import spread over a year touches ~4 new cells per scan,
 * and a batch of live scans a few thousand cells in all (docs/performance.md).
 */
export function createRoller(sqlite: Database, pause: Pick<WritePause, 'paused' | 'afterPause'>, batchScans = BATCH_SCANS) {
  const batch = { cells: BATCH_CELLS, scans: batchScans };
  const rowsAbove = sqlite.prepare<RawStatsRow, [number, number]>(`SELECT ${RAW_STATS_COLUMNS} FROM main.scans WHERE rowid > ? ORDER BY rowid LIMIT ?`);
  const cellWhere = CELL_COLUMNS.map((c) => `${c} = ?`).join(' AND ');
  const storedCell = sqlite.prepare<Record<string, number | Uint8Array>, SQLQueryBindings[]>(
    `SELECT ${MEASURE_COLUMNS.join(', ')}, hostnames FROM ${ROLLUPS}.scan_rollups WHERE ${cellWhere}`,
  );
  const WRITE_COLUMNS = [...CELL_COLUMNS, ...MEASURE_COLUMNS, 'hostnames'];
  const writeCell = sqlite.prepare<unknown, SQLQueryBindings[]>(
    `INSERT OR REPLACE INTO ${ROLLUPS}.scan_rollups (${WRITE_COLUMNS.join(', ')}) VALUES (${WRITE_COLUMNS.map(() => '?').join(', ')})`,
  );
  const writeWatermark = sqlite.prepare<unknown, [number]>(`UPDATE ${ROLLUPS}.scan_rollup_state SET watermark = ? WHERE id = 1`);
  const writeBounds = sqlite.prepare<unknown, [number, number]>(
    `UPDATE ${ROLLUPS}.scan_rollup_state SET days_from = max(days_from, ?), months_from = max(months_from, ?) WHERE id = 1`,
  );
  const addToHostname = sqlite.prepare<unknown, [string, string, string, number, number]>(
    `INSERT INTO ${ROLLUPS}.scan_hostname_rollups (dimension, value, hostname, scans, last_scanned_at) VALUES (?, ?, ?, ?, ?) ` +
      'ON CONFLICT (dimension, value, hostname) DO UPDATE SET scans = scans + excluded.scans, last_scanned_at = max(last_scanned_at, excluded.last_scanned_at)',
  );
  const takeFromHostname = sqlite.prepare<unknown, [number, string, string, string]>(
    `UPDATE ${ROLLUPS}.scan_hostname_rollups SET scans = scans - ? WHERE dimension = ? AND value = ? AND hostname = ?`,
  );
  const dropHostnameIfEmpty = sqlite.prepare<unknown, [string, string, string]>(
    `DELETE FROM ${ROLLUPS}.scan_hostname_rollups WHERE dimension = ? AND value = ? AND hostname = ? AND scans = 0`,
  );
  const dropDaysBefore = sqlite.prepare<unknown, [number]>(`DELETE FROM ${ROLLUPS}.scan_rollups WHERE cuboid < ${MONTH} AND day < ?`);
  const dropMonthsBefore = sqlite.prepare<unknown, [number]>(`DELETE FROM ${ROLLUPS}.scan_rollups WHERE cuboid >= ${MONTH} AND day < ?`);
  const maxRowid = sqlite.prepare<{ max: number | null }, []>('SELECT max(rowid) AS max FROM main.scans');
  const checkpointRollups = sqlite.prepare(`PRAGMA ${ROLLUPS}.wal_checkpoint(RESTART)`);
  const deleteOldest = sqlite.prepare<HostnameScan & { rowid: number }, [number, number]>(
    'DELETE FROM main.scans WHERE rowid IN (SELECT rowid FROM main.scans WHERE scanned_at < ? ORDER BY scanned_at LIMIT ?) ' +
      'RETURNING rowid, hostname, scanned_at, country, platform, page_type, grade',
  );

  const combos = new CellCombos();
  const cells = new BatchCells();
  const hostnames = new HostnameCounts();
  const deletedHostnames = new HostnameCounts();
  const months = new Map<number, number>();
  const keyParams: (string | number)[] = new Array(CELL_COLUMNS.length);
  const writeParams: (string | number | Uint8Array)[] = new Array(WRITE_COLUMNS.length);
  const encoded = new Uint8Array(HLL_MAX_BYTES);

  const keyOf = (id: number): (string | number)[] => {
    const values = combos.values(comboOf(id));
    keyParams[0] = cuboidOf(id);
    for (let i = 0; i < values.length; i++) keyParams[1 + i] = values[i]!;
    keyParams[1 + values.length] = cellDayOf(id);
    return keyParams;
  };

  /** Reads and adds up the scans above `mark` until the batch is full; returns the last rowid folded and the scans. */
  function gather(mark: number, daysFrom: number, monthsFrom: number): { last: number; scans: number } {
    let last = mark;
    let scans = 0;
    while (scans < batch.scans && cells.size < batch.cells) {
      const rows = rowsAbove.all(last, Math.min(READ_ROWS, batch.scans - scans));
      for (const row of rows) {
        const day = dayOf(row.scanned_at);
        let month = months.get(day);
        if (month === undefined) months.set(day, (month = monthOf(day)));
        const byCuboid = combos.ofRow(row);
        const hash = hllHash(row.hostname);
        // A scan of a day retention already dropped (it arrived late, and goes with the next sweep)
        // makes no cells: they would outlive it. Its hostname counts it until it is deleted.
        if (day >= daysFrom) {
          for (let cuboid = 0; cuboid < MONTH; cuboid++) {
            cells.add(cellId(cuboid, byCuboid[cuboid]!, day), row, hash);
            if (month >= monthsFrom) cells.add(cellId(cuboid | MONTH, byCuboid[cuboid]!, month), row, hash);
          }
        }
        hostnames.add(row);
        last = row.rowid;
      }
      scans += rows.length;
      if (rows.length < READ_ROWS) break;
    }
    return { last, scans };
  }

  /** Writes the batch's cells merged with their stored rows, the hostname counts and the watermark: one transaction. */
  const write = sqlite.transaction((last: number) => {
    for (const slot of cells.ordered(combos.ranks())) {
      const key = keyOf(cells.id(slot));
      const sketch = cells.sketch(slot);
      // An array argument's elements are bound in order (bun-types describes only the spread form).
      const stored = storedCell.get(key as unknown as SQLQueryBindings);
      if (stored) {
        for (let i = 0; i < MEASURES; i++) cells.addToMeasure(slot, i, stored[MEASURE_COLUMNS[i]!] as number);
        sketch.mergeEncoded(stored.hostnames as Uint8Array);
      }
      for (let i = 0; i < key.length; i++) writeParams[i] = key[i]!;
      for (let i = 0; i < MEASURES; i++) writeParams[key.length + i] = cells.measure(slot, i);
      writeParams[key.length + MEASURES] = sketch.encodeInto(encoded);
      writeCell.run(writeParams as unknown as SQLQueryBindings);
    }
    hostnames.forEach((dimension, value, hostname, scans, last) => addToHostname.run(dimension, value, hostname, scans, last));
    writeWatermark.run(last);
  });

  /** One batch: the scans above the watermark, as many as fit. Resolves with how many (0: none waited). */
  function foldBatch(): number {
    const { watermark, daysFrom, monthsFrom } = rollupState(sqlite);
    try {
      const { last, scans } = gather(watermark, daysFrom, monthsFrom);
      if (scans > 0) write(last);
      return scans;
    } finally {
      cells.clear();
      combos.clear();
      months.clear();
      hostnames.clear();
    }
  }

  /**
   * Drops the rollups of every day before `day`, and of every month holding one of them (such a
   * month is from now on read from its day rows), and folds no scan into them from now on:
   * retention is about to delete those days' scans.
   */
  const forgetBefore = sqlite.transaction((day: number): number => {
    const nextMonth = nextMonthOf(day - 1);
    writeBounds.run(day, nextMonth);
    return dropMonthsBefore.run(nextMonth).changes + dropDaysBefore.run(day).changes;
  });

  /**
   * Deletes up to `rows` scans scanned before `cutoff` (oldest first), and in the same transaction
   * takes the folded ones out of their hostname's count (oldest scannedAt first, so a hostname's
   * latest scan goes only with its last). SQLite gives new rows the rowids after the highest
   * remaining one, so the watermark comes down to it if it was above: a reused rowid is folded too.
   */
  const deleteOldestScans = sqlite.transaction((cutoff: number, rows: number): number => {
    const deleted = deleteOldest.all(cutoff, rows);
    if (deleted.length === 0) return 0;
    const { watermark } = rollupState(sqlite);
    try {
      for (const row of deleted) if (row.rowid <= watermark) deletedHostnames.add(row);
      deletedHostnames.forEach((dimension, value, hostname, scans) => {
        takeFromHostname.run(scans, dimension, value, hostname);
        dropHostnameIfEmpty.run(dimension, value, hostname);
      });
    } finally {
      deletedHostnames.clear();
    }
    const highest = maxRowid.get()?.max ?? 0;
    if (highest < watermark) writeWatermark.run(highest);
    return deleted.length;
  });

  return {
    /**
     * Folds every scan above the watermark, batch by batch, until `signal` aborts; resolves with how
     * many. The rollups file's log is copied into it after every batch (nothing else checkpoints
     * it): a batch writes ~100–200 MB of pages, so a catch-up checkpointed only at its end left a log
     * of gigabytes (649 MB beside an empty file for 300,000 scans). The checkpoint waits (on this
     * Worker) for the stats queries reading an older snapshot to end, so the next batch starts the
     * log over: one that did not wait let them keep it from ever starting over while dashboards were
     * read (2.5 GB after a 1M-scan import). Only this connection writes the file, so the wait holds
     * up no other writer; readers are never held. The log stays about one batch.
     */
    async foldAll(signal: AbortSignal): Promise<number> {
      let scans = 0;
      while (!signal.aborted) {
        const folded = foldBatch();
        if (folded === 0) break;
        scans += folded;
        // At most a short wait for those readers: one that stays (a long stats query) costs this
        // batch its restart, not the roller its time; the next batch tries again.
        sqlite.exec(`PRAGMA busy_timeout = ${CHECKPOINT_WAIT_MS}`);
        checkpointRollups.run();
        sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
        // A large batch leaves hundreds of MB of cells and sketches behind: collected now, on this
        // thread, before the next batch allocates as much again (the server's peak during a 1M-scan
        // catch-up: 1.85 -> 1.31 GB). Live batches are small and leave it to the collector.
        if (folded >= COLLECT_AFTER_SCANS) Bun.gc(true);
        await yieldToEventLoop();
      }
      return scans;
    },

    /**
     * Retention (SVC_SCAN_RETENTION_DAYS): first the rollups of the days before `firstKeptDay` go,
     * then their scans, oldest first, in transactions of about 2 ms (lib/periodic.ts inBatches: they
     * hold the database's write lock, which the request thread's writes wait for), until `signal`
     * aborts. Stats never count a deleted scan. Resolves with the scans deleted.
     */
    async retain(firstKeptDay: number, signal: AbortSignal, batchRows = RETENTION_BATCH_ROWS): Promise<number> {
      forgetBefore(firstKeptDay);
      // Stopped before any scan went: the next sweep goes on. The deletions wait out the request
      // thread's write pauses (a commit during one keeps the WAL from starting over, db/checkpoint.ts).
      const deleted = await inBatches((rows) => deleteOldestScans(firstKeptDay * DAY_MS, rows), batchRows, signal, { pause });
      forgetBefore(firstKeptDay);
      return deleted;
    },
  };
}

export type Roller = ReturnType<typeof createRoller>;
