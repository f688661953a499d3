import type { Database } from 'bun:sqlite';
import { ApiError } from '../lib/errors.ts';
import { commitGroup, EntryFailed, groupSlice, type GroupOutcome } from '../lib/group-commit.ts';
import { writeTransaction } from '../lib/write-transaction.ts';
import { newId } from '../lib/ids.ts';
import { writePause } from '../lib/write-pause.ts';
import type { NormalizedScan } from './payload.ts';

/**
 * Rows arriving within one turn past which they are written at once, without waiting for the end of
 * the turn (DESIGN §6); also the most rows of a backlog (a write pause, a burst) one group considers,
 * of which it writes a slice of about 2 ms (lib/group-commit.ts, groupSlice).
 */
export const MAX_BATCH_ROWS = 512;

const COLUMNS = [
  'id', 'hostname', 'url', 'scanned_at', 'received_at', 'country', 'platform', 'platform_confidence', 'page_type',
  'grade', 'percentage', 'svc_detected', 'svc_version', 'vertical', 'has_title', 'has_description', 'has_json_ld',
  'has_open_graph', 'has_h1', 'has_canonical', 'has_robots', 'signals', 'quality', 'data', 'trust',
] as const;
const URL_PARAM = COLUMNS.indexOf('url');
const SCANNED_AT_PARAM = COLUMNS.indexOf('scanned_at');

type Param = string | number | null;
const bool = (value: boolean | null): Param => (value === null ? null : value ? 1 : 0);

function toParams(scan: NormalizedScan, receivedAt: number): Param[] {
  const p = scan.presence;
  return [
    newId(), scan.hostname, scan.url, scan.scannedAt, receivedAt, scan.country, scan.platform, scan.platformConfidence,
    scan.pageType, scan.grade, scan.percentage, bool(scan.svcDetected), scan.svcVersion, scan.vertical, bool(p.title),
    bool(p.description), bool(p.jsonLd), bool(p.openGraph), bool(p.h1), bool(p.canonical), bool(p.robots),
    JSON.stringify(scan.signals), JSON.stringify(scan.quality), JSON.stringify(scan.data), scan.trust,
  ];
}

/** One request's rows: committed together, in the same transaction, or not at all. */
interface Entry {
  rows: Param[][];
  /** Bulk rows skip a (url, scanned_at) pair already stored or written earlier in the transaction. */
  skipDuplicates: boolean;
  resolve(inserted: number): void;
  reject(error: unknown): void;
}

const persistenceFailed = () => new ApiError(500, 'persistence_failed', 'the scan could not be stored; retry later');

/**
 * Group commit (DESIGN §6, feasibility §4): scans queue in memory until the end of the current
 * event-loop turn (setImmediate) or until MAX_BATCH_ROWS have arrived, then one transaction writes
 * them with prepared statements and every waiter is answered: resolved after COMMIT, or rejected
 * with 500 `persistence_failed` when the transaction fails (it rolls back: nothing partial). A
 * request whose own rows the database refuses is refused alone: the rest of the batch is written
 * again without it (lib/group-commit.ts); a failed COMMIT refuses the whole batch. Rows are written
 * in the order they were queued; a backlog (rows held through a write pause) is written a slice
 * per turn, each request's rows always in one transaction.
 *
 * Bulk duplicates are skipped by the database, not by a check made before queueing: the lookup
 * runs inside the one writing transaction over the (scanned_at, url) index, so
 * it sees rows of every endpoint, earlier rows of the same batch and rows of a racing bulk request.
 * Single telemetry scans are inserted as sent, duplicates included (spec §4.1 is not idempotent).
 */
export interface WriterHooks {
  /** After each committed batch: its rows and how long the transaction took (metrics). */
  onCommit?: (rows: number, seconds: number) => void;
  /** A failed batch (the process log); default: one JSON line on stderr. */
  onFailure?: (rows: number, error: unknown) => void;
}

const logFailure = (rows: number, error: unknown) => console.error(JSON.stringify({ level: 'error', msg: 'scan batch failed', rows, error: String(error) }));

export function createScanWriter(sqlite: Database, maxBatchRows = MAX_BATCH_ROWS, { onCommit, onFailure = logFailure }: WriterHooks = {}) {
  const placeholders = COLUMNS.map(() => '?').join(', ');
  const insert = sqlite.prepare(`INSERT INTO scans (${COLUMNS.join(', ')}) VALUES (${placeholders})`);
  // A separate probe, then the plain insert: measured cheaper than one INSERT ... SELECT ... WHERE
  // NOT EXISTS, whose 24 bound columns go through a SELECT first (bench/bulk.ts).
  const stored = sqlite.prepare<unknown, [number, string]>('SELECT 1 FROM scans WHERE scanned_at = ? AND url = ?');
  const isStored = (row: Param[]) => stored.get(row[SCANNED_AT_PARAM] as number, row[URL_PARAM] as string) !== null;
  // Its floor, in rows: as many as arrived during the turn before the group (see flush).
  const slice = groupSlice();
  const writeGroup = writeTransaction(sqlite, (entries: Entry[]) => {
    slice.start();
    const inserted: number[] = [];
    for (const { rows, skipDuplicates } of entries) {
      if (!slice.takes(rows.length)) break;
      try {
        let written = 0;
        for (const row of rows) {
          if (skipDuplicates && isStored(row)) continue;
          insert.run(...row);
          written++;
        }
        inserted.push(written);
      } catch (error) {
        throw new EntryFailed(inserted.length, error);
      }
    }
    return inserted;
  });

  const queue: Entry[] = [];
  /** Rows queued since the last flush: those that arrived during the current turn. */
  let arrivedRows = 0;
  let scheduled: ReturnType<typeof setImmediate> | null = null;
  let closed = false;
  // While the WAL checkpointer pauses writes (a few ms to tens of ms), rows queue up; that backlog
  // is then written in slices, one group per turn of the event loop.
  const pause = writePause(sqlite);
  let waitingForPause = false;
  const afterPause = () => {
    waitingForPause = false;
    flush();
  };
  const rowsOf = (entries: Entry[]) => entries.reduce((sum, entry) => sum + entry.rows.length, 0);
  const outcome: GroupOutcome<Entry> = {
    refuse(entry, error) {
      onFailure(entry.rows.length, error);
      entry.reject(persistenceFailed());
    },
    fail(entries, error) {
      onFailure(rowsOf(entries), error);
      const failure = persistenceFailed();
      for (const entry of entries) entry.reject(failure);
    },
  };

  /**
   * Writes one group from the head of the queue: at least as many rows as arrived during the last
   * turn and one entry more, so a backlog shrinks at any rate of arrivals, and more only within
   * its slice; what is left waits for the next turn, so other requests are served in between.
   */
  function flush(): void {
    if (scheduled) clearImmediate(scheduled);
    scheduled = null;
    slice.floor = arrivedRows;
    arrivedRows = 0;
    if (queue.length === 0) return;
    if (pause.paused && !closed) {
      if (!waitingForPause) pause.afterPause(afterPause);
      waitingForPause = true;
      return;
    }
    let taken = 0;
    for (let rows = 0; taken < queue.length && rows < slice.floor + maxBatchRows; ) rows += queue[taken++]!.rows.length;
    const started = performance.now();
    const written = commitGroup(queue.splice(0, taken), writeGroup, outcome);
    queue.unshift(...written.left);
    if (queue.length > 0) scheduled = setImmediate(flush);
    if (written.committed.length === 0) return;
    onCommit?.(rowsOf(written.committed), (performance.now() - started) / 1000);
    written.committed.forEach((entry, i) => entry.resolve(written.results[i]!));
  }

  function enqueue(rows: Param[][], skipDuplicates: boolean): Promise<number> {
    if (closed) return Promise.reject(persistenceFailed());
    return new Promise<number>((resolve, reject) => {
      queue.push({ rows, skipDuplicates, resolve, reject });
      arrivedRows += rows.length;
      if (arrivedRows >= maxBatchRows) flush();
      else scheduled ??= setImmediate(flush);
    });
  }

  return {
    /** Queue one scan; resolves once its row is committed. */
    async write(scan: NormalizedScan, receivedAt: number): Promise<void> {
      await enqueue([toParams(scan, receivedAt)], false);
    },

    /**
     * Queue a bulk request's scans, skipping every (url, scannedAt) pair already stored; resolves
     * with how many rows were inserted once they are all committed (a batch is never split).
     */
    writeBulk(scans: NormalizedScan[], receivedAt: number): Promise<number> {
      return enqueue(scans.map((scan) => toParams(scan, receivedAt)), true);
    },

    /** Flush pending rows and refuse new ones (graceful shutdown, before the database closes). */
    close(): void {
      closed = true;
      while (queue.length > 0) flush();
    },
  };
}

export type ScanWriter = ReturnType<typeof createScanWriter>;
