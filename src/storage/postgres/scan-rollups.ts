import type { SQL } from 'bun';
import { inBatches, yieldToEventLoop } from '../../lib/periodic.ts';
import { DAY_MS } from '../../lib/time.ts';
import { BATCH_SCANS, CELL_COLUMNS, COLLECT_AFTER_SCANS, FoldBatch, HostnameCounts, MEASURE_COLUMNS, MEASURES, RETENTION_BATCH_ROWS, type HostnameScan } from '../../scans/fold.ts';
import { PRESENCE_COLUMN_LIST } from '../../scans/presence-columns.ts';
import { dayBound, MONTH, nextMonthOf, type RawStatsRow, type RollupState } from '../../scans/rollups.ts';
import type { WorkerRoller } from '../rollups-in-worker.ts';
import type { PostgresChangeFeed } from './changes.ts';
import type { PostgresClient } from './client.ts';
import { withoutValues } from './errors.ts';

/** The rollup tables, which only PostgreSQL's schema holds (derived from the scans: never copied); a fold writes them (the change feed is told after each batch). */
export const ROLLUP_TABLES = ['scan_rollups', 'scan_hostname_rollups', 'scan_rollup_state'];

/** The rollup state (one row): the watermark is a transaction id, below which every scan is folded. */
export async function rollupState(sql: SQL): Promise<RollupState> {
  const [row] = await sql`SELECT watermark::float8 AS watermark, days_from::float8 AS days_from, months_from::float8 AS months_from FROM scan_rollup_state WHERE id = 1`;
  return { watermark: row?.watermark ?? 0, daysFrom: dayBound(row?.days_from), monthsFrom: dayBound(row?.months_from) };
}

/** A scan's columns the fold reads (presence flags as 1, 0 or null, as the fold adds them up). */
const FOLD_COLUMNS = `scanned_at::float8 AS scanned_at, hostname, country, platform, page_type, grade, percentage, ${PRESENCE_COLUMN_LIST.map((column) => `${column}::int AS ${column}`).join(', ')}`;
const KEY_TYPES = ['int', 'text', 'text', 'text', 'text', 'int'];
const CELL_KEY = CELL_COLUMNS.join(', ');
const unnestKeys = CELL_COLUMNS.map((_, i) => `$${i + 1}::${KEY_TYPES[i]}[]`).join(', ');
/** The stored rows of the cells given, each with its position among them (1-based): no key is built or compared in JS. */
const STORED_CELLS =
  `SELECT k.at::int AS at, ${MEASURE_COLUMNS.map((column) => `r.${column}::float8 AS ${column}`).join(', ')}, r.hostnames ` +
  `FROM unnest(${unnestKeys}) WITH ORDINALITY AS k(${CELL_KEY}, at) JOIN scan_rollups AS r USING (${CELL_KEY})`;
const WRITE_COLUMNS = [...CELL_COLUMNS, ...MEASURE_COLUMNS, 'hostnames'];
const WRITE_TYPES = [...KEY_TYPES, 'bigint', 'float8', ...MEASURE_COLUMNS.slice(2).map(() => 'bigint'), 'bytea'];
const WRITE_CELLS =
  `INSERT INTO scan_rollups (${WRITE_COLUMNS.join(', ')}) SELECT * FROM unnest(${WRITE_COLUMNS.map((_, i) => `$${i + 1}::${WRITE_TYPES[i]}[]`).join(', ')}) ` +
  `ON CONFLICT (${CELL_KEY}) DO UPDATE SET ${[...MEASURE_COLUMNS, 'hostnames'].map((column) => `${column} = excluded.${column}`).join(', ')}`;
/** Cells written per statement (each column an array). */
const CELLS_PER_STATEMENT = 20_000;

/**
 * `upto`: every transaction below it that could have written svc's scans has ended. Transaction ids
 * are the whole server's, so the snapshot's xmin is held back by a transaction open in any database
 * (another application's long report, a pg_dump of another database), and the roller would fold
 * nothing while it lasts. The transactions still running are the snapshot's xip; those whose
 * backend is connected to another database cannot write this one's tables and are passed over
 * (pg_stat_activity.backend_xid holds a top-level id's low 32 bits). Any other (this database's,
 * a subtransaction's, a prepared one's, or one whose session's id is not shown) holds `upto` back
 * as before; with none running, `upto` is the snapshot's xmax.
 */
const FINAL_BELOW = `
  WITH snapshot AS (SELECT pg_current_snapshot() AS s),
  elsewhere AS (
    SELECT backend_xid::text::bigint AS xid FROM pg_stat_activity
    WHERE backend_xid IS NOT NULL AND datid IS DISTINCT FROM (SELECT oid FROM pg_database WHERE datname = current_database())
  )
  SELECT least(
    pg_snapshot_xmax(s)::text::bigint,
    (SELECT min(x::text::bigint) FROM pg_snapshot_xip(s) AS x WHERE x::text::bigint % 4294967296 NOT IN (SELECT xid FROM elsewhere))
  )::float8 AS upto
  FROM snapshot`;

/**
 * The roller and scan retention on PostgreSQL, as its Worker runs them (scan-roller-worker.ts; which
 * instance runs it is the caller's choice), each batch one transaction.
 *
 * The watermark is a transaction id (issue 30: a watermark over values taken at insert, a sequence's,
 * could pass a row whose transaction commits after a later one's). Every scan carries the id of the
 * transaction that wrote it (`xact`). A batch reads `upto`, the oldest transaction id still running
 * that could write this database (FINAL_BELOW): every such transaction below it has ended, so the rows with
 * `xact < upto` are final, and a transaction still open, or not yet given an id, writes rows with an
 * id at or above it. The batch folds the rows with `watermark <= xact < end` (end = upto, or a
 * transaction boundary below it when more than a batch waits) and stores `watermark = end` in the
 * same transaction as the rollup rows. A transaction that wrote first and commits last holds `upto`
 * back: its rows are folded by a later batch, never skipped. The state row is locked (FOR UPDATE) by
 * each batch and each retention step, so two rollers, or a roller and retention, take turns.
 */
export function postgresScanRollups(client: Pick<PostgresClient, 'sql'>, changes: Pick<PostgresChangeFeed, 'wrote'>, batchScans = BATCH_SCANS): WorkerRoller {
  const { sql } = client;
  const folded = new FoldBatch();
  const deletedHostnames = new HostnameCounts();

  /** The batch's cells merged with their stored rows, written back; its hostname counts added. */
  async function writeBatch(tx: SQL): Promise<void> {
    const { cells } = folded;
    const order = folded.ordered();
    for (let start = 0; start < order.length; start += CELLS_PER_STATEMENT) {
      const slots = order.subarray(start, start + CELLS_PER_STATEMENT);
      const keys = CELL_COLUMNS.map(() => new Array<string | number>(slots.length));
      for (let n = 0; n < slots.length; n++) {
        const key = folded.keyOf(slots[n]!);
        for (let i = 0; i < key.length; i++) keys[i]![n] = key[i]!;
      }
      for (const stored of await tx.unsafe(STORED_CELLS, keys)) {
        const slot = slots[stored.at - 1]!;
        for (let i = 0; i < MEASURES; i++) cells.addToMeasure(slot, i, stored[MEASURE_COLUMNS[i]!]);
        cells.sketch(slot).mergeEncoded(stored.hostnames);
      }
      const measures = MEASURE_COLUMNS.map(() => new Array<number>(slots.length));
      const sketches = new Array<Uint8Array>(slots.length);
      for (let n = 0; n < slots.length; n++) {
        const slot = slots[n]!;
        for (let i = 0; i < MEASURES; i++) measures[i]![n] = cells.measure(slot, i);
        sketches[n] = cells.sketch(slot).encode();
      }
      await tx.unsafe(WRITE_CELLS, [...keys, ...measures, sketches]);
    }
    const hostnames: (string | number)[][] = [[], [], [], [], []];
    folded.hostnames.forEach((...row) => row.forEach((value, i) => hostnames[i]!.push(value)));
    if (hostnames[0]!.length > 0) {
      await tx`INSERT INTO scan_hostname_rollups (dimension, value, hostname, scans, last_scanned_at)
        SELECT * FROM unnest(${hostnames[0]}::text[], ${hostnames[1]}::text[], ${hostnames[2]}::text[], ${hostnames[3]}::bigint[], ${hostnames[4]}::bigint[])
        ON CONFLICT (dimension, value, hostname) DO UPDATE SET scans = scan_hostname_rollups.scans + excluded.scans, last_scanned_at = greatest(scan_hostname_rollups.last_scanned_at, excluded.last_scanned_at)`;
    }
  }

  /** One batch: folds the final rows above the watermark, as many as fit; how many, and whether more wait below `upto`. */
  const foldBatch = (): Promise<{ scans: number; more: boolean }> =>
    sql.begin(async (tx) => {
      // Locked first: a second roller (or a retention step) waits for this batch, then reads its watermark.
      const [state] = await tx`SELECT watermark::float8 AS watermark, days_from::float8 AS days_from, months_from::float8 AS months_from FROM scan_rollup_state WHERE id = 1 FOR UPDATE`;
      const watermark: number = state.watermark;
      const [{ upto }] = await tx.unsafe(FINAL_BELOW);
      if (upto <= watermark) return { scans: 0, more: false };
      // More than a batch waits: stop at the transaction of the row past the batch (all of one
      // transaction's rows are folded together; the first one's whole, however many it wrote).
      const [past] = await tx`SELECT xact::float8 AS xact FROM scans WHERE xact >= ${watermark} AND xact < ${upto} ORDER BY xact OFFSET ${batchScans} LIMIT 1`;
      const end: number = past ? Math.max(past.xact, watermark + 1) : upto;
      try {
        const rows = (await tx.unsafe(`SELECT ${FOLD_COLUMNS} FROM scans WHERE xact >= $1 AND xact < $2`, [watermark, end])) as RawStatsRow[];
        const daysFrom = dayBound(state.days_from);
        const monthsFrom = dayBound(state.months_from);
        for (const row of rows) folded.add(row, daysFrom, monthsFrom);
        await writeBatch(tx);
        await tx`UPDATE scan_rollup_state SET watermark = ${end} WHERE id = 1`;
        return { scans: rows.length, more: end < upto };
      } finally {
        folded.clear();
      }
    });

  /** Every scan not folded yet, batch by batch, until `signal` aborts; how many. */
  async function foldAll(signal: AbortSignal): Promise<number> {
    let scans = 0;
    while (!signal.aborted) {
      let batch: { scans: number; more: boolean };
      try {
        batch = await foldBatch();
      } catch (error) {
        throw withoutValues('scans.fold', error);
      } finally {
        changes.wrote(ROLLUP_TABLES);
      }
      scans += batch.scans;
      if (!batch.more) break;
      if (batch.scans >= COLLECT_AFTER_SCANS) Bun.gc(true);
      await yieldToEventLoop();
    }
    return scans;
  }

  /** The rollups of the days before `day` dropped, and of every month holding one of them; none folded into them from now on. */
  const forgetBefore = (day: number) =>
    sql.begin(async (tx) => {
      const nextMonth = nextMonthOf(day - 1);
      await tx`UPDATE scan_rollup_state SET days_from = greatest(days_from, ${day}), months_from = greatest(months_from, ${nextMonth}) WHERE id = 1`;
      await tx`DELETE FROM scan_rollups WHERE cuboid >= ${MONTH} AND day < ${nextMonth}`;
      await tx`DELETE FROM scan_rollups WHERE cuboid < ${MONTH} AND day < ${day}`;
    });

  /** Up to `rows` scans before `cutoff` deleted (oldest first), the folded ones taken out of their hostname's counts, in one transaction. */
  const deleteOldestScans = (cutoff: number, rows: number): Promise<number> =>
    sql.begin(async (tx) => {
      const [{ watermark }] = await tx`SELECT watermark::float8 AS watermark FROM scan_rollup_state WHERE id = 1 FOR UPDATE`;
      const deleted = (await tx`DELETE FROM scans WHERE id IN (SELECT id FROM scans WHERE scanned_at < ${cutoff} ORDER BY scanned_at LIMIT ${rows})
        RETURNING xact::float8 AS xact, hostname, scanned_at::float8 AS scanned_at, country, platform, page_type, grade`) as (HostnameScan & { xact: number })[];
      try {
        for (const row of deleted) if (row.xact < watermark) deletedHostnames.add(row);
        const counts: (string | number)[][] = [[], [], [], []];
        deletedHostnames.forEach((dimension, value, hostname, scans) => [dimension, value, hostname, scans].forEach((item, i) => counts[i]!.push(item)));
        if (counts[0]!.length > 0) {
          const [dimensions, values, hostnames, scans] = counts;
          await tx`UPDATE scan_hostname_rollups AS h SET scans = h.scans - d.scans
            FROM unnest(${dimensions}::text[], ${values}::text[], ${hostnames}::text[], ${scans}::bigint[]) AS d(dimension, value, hostname, scans)
            WHERE (h.dimension, h.value, h.hostname) = (d.dimension, d.value, d.hostname)`;
          await tx`DELETE FROM scan_hostname_rollups AS h USING unnest(${dimensions}::text[], ${values}::text[], ${hostnames}::text[]) AS d(dimension, value, hostname)
            WHERE (h.dimension, h.value, h.hostname) = (d.dimension, d.value, d.hostname) AND h.scans = 0`;
        }
      } finally {
        deletedHostnames.clear();
      }
      return deleted.length;
    });

  return {
    foldAll,
    async retain(firstKeptDay, signal, batchRows = RETENTION_BATCH_ROWS) {
      try {
        await forgetBefore(firstKeptDay);
        const deleted = await inBatches((rows) => deleteOldestScans(firstKeptDay * DAY_MS, rows), batchRows, signal);
        await forgetBefore(firstKeptDay);
        return deleted;
      } catch (error) {
        throw withoutValues('scans.retain', error);
      } finally {
        changes.wrote(['scans', ...ROLLUP_TABLES]);
      }
    },
  };
}
