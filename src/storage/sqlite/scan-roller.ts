import type { Database, SQLQueryBindings } from 'bun:sqlite';
import { HLL_MAX_BYTES } from '../../lib/hyperloglog.ts';
import { inBatches, yieldToEventLoop } from '../../lib/periodic.ts';
import type { WritePause } from '../../lib/write-pause.ts';
import { DAY_MS } from '../../lib/time.ts';
import { ROLLUPS } from './db/rollups-file.ts';
import { BATCH_CELLS, BATCH_SCANS, CELL_COLUMNS, COLLECT_AFTER_SCANS, FoldBatch, HostnameCounts, MEASURE_COLUMNS, MEASURES, READ_ROWS, RETENTION_BATCH_ROWS, type HostnameScan } from '../../scans/fold.ts';
import { MONTH, nextMonthOf, type RawStatsRow } from '../../scans/rollups.ts';
import { RAW_STATS_COLUMNS, rollupState } from './scan-rollups.ts';

/** The roller's connection waits this long for a lock (scan-roller-worker.ts sets it when it opens). */
export const BUSY_TIMEOUT_MS = 5_000;
/** The longest the checkpoint after a batch waits for stats queries on older snapshots to end. */
const CHECKPOINT_WAIT_MS = 200;

/**
 * The roller and scan retention, on a connection of the database with the rollups file attached
 * (src/storage/sqlite/db/rollups-file.ts), run by the roller's Worker (scan-roller-worker.ts). A fold reads the scans above the watermark
 * (by rowid, so it never misses a row whatever its scannedAt) in short reads, adds them up in memory
 * into their 16 cells each (a day cell and a month cell in each of the 8 cuboids) and their
 * hostname's count, then writes every cell of the batch once, merged with its stored row, with the
 * new watermark, in one transaction of the rollups file. Writing each cell once per batch instead of
 * once per step is what makes it cheap: an import spread over a year touches ~4 new cells per scan,
 * and a batch of live scans a few thousand cells in all (docs/performance.md).
 */
export function createRoller(sqlite: Database, pause: Pick<WritePause, 'paused' | 'afterPause'>, batchScans = BATCH_SCANS) {
  const batch = { cells: BATCH_CELLS, scans: batchScans };
  const rowsAbove = sqlite.prepare<RawStatsRow & { rowid: number }, [number, number]>(`SELECT ${RAW_STATS_COLUMNS} FROM main.scans WHERE rowid > ? ORDER BY rowid LIMIT ?`);
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

  const folded = new FoldBatch();
  const { cells, hostnames } = folded;
  const deletedHostnames = new HostnameCounts();
  const writeParams: (string | number | Uint8Array)[] = new Array(WRITE_COLUMNS.length);
  const encoded = new Uint8Array(HLL_MAX_BYTES);

  /** Reads and adds up the scans above `mark` until the batch is full; returns the last rowid folded and the scans. */
  function gather(mark: number, daysFrom: number, monthsFrom: number): { last: number; scans: number } {
    let last = mark;
    let scans = 0;
    while (scans < batch.scans && cells.size < batch.cells) {
      const rows = rowsAbove.all(last, Math.min(READ_ROWS, batch.scans - scans));
      for (const row of rows) {
        folded.add(row, daysFrom, monthsFrom);
        last = row.rowid;
      }
      scans += rows.length;
      if (rows.length < READ_ROWS) break;
    }
    return { last, scans };
  }

  /** Writes the batch's cells merged with their stored rows, the hostname counts and the watermark: one transaction. */
  const write = sqlite.transaction((last: number) => {
    for (const slot of folded.ordered()) {
      const key = folded.keyOf(slot);
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
      folded.clear();
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
