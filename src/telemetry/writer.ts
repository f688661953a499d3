import { ApiError } from '../lib/errors.ts';
import { commitGroup, groupSlice, type Committed, type GroupOutcome, type GroupSlice } from '../lib/group-commit.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';
import type { ScansToWrite, WritesPause } from '../storage/scans.ts';
import type { NormalizedScan } from './payload.ts';

/**
 * Rows arriving within one turn past which they are written at once, without waiting for the end of
 * the turn (DESIGN §6); also the most rows of a backlog (a write pause, a burst) one group considers,
 * of which it writes a slice of about 2 ms (lib/group-commit.ts, groupSlice).
 */
export const MAX_BATCH_ROWS = 512;

/** One request's scans, and its waiter: committed together, in the same transaction, or not at all. */
interface Entry extends ScansToWrite {
  resolve(inserted: number): void;
  reject(error: unknown): void;
}

const persistenceFailed = () => new ApiError(500, 'persistence_failed', 'the scan could not be stored; retry later');

/**
 * Group commit (DESIGN §6, feasibility §4): scans queue in memory until the end of the current
 * event-loop turn (setImmediate) or until MAX_BATCH_ROWS have arrived, then one transaction writes
 * them (ScanWriteRecords.commitGroup) and every waiter is answered: resolved after COMMIT, or rejected
 * with 500 `persistence_failed` when the transaction fails (it rolls back: nothing partial). A
 * request whose own rows the database refuses is refused alone: the rest of the batch is written
 * again without it (lib/group-commit.ts); a failed COMMIT refuses the whole batch. Rows are written
 * in the order they were queued; a backlog (rows held through a write pause) is written a slice
 * per turn, each request's rows always in one transaction. Over storage that answers at once
 * (SQLite's synchronous records) a group commits within the turn; over storage that answers with a
 * promise (PostgreSQL) groups commit one at a time, the next taking what queued meanwhile.
 *
 * Bulk duplicates are skipped by the storage, not by a check made before queueing: inside the one
 * writing transaction, so it sees rows of every endpoint, earlier rows of the same batch and rows of
 * a racing bulk request. Single telemetry scans are inserted as sent, duplicates included (spec
 * §4.1 is not idempotent).
 */
export interface WriterHooks {
  /** After each committed batch: its rows and how long the transaction took (metrics). */
  onCommit?: (rows: number, seconds: number) => void;
  /** A failed batch (the process log); default: one JSON line on stderr. */
  onFailure?: (rows: number, error: unknown) => void;
}

const logFailure = (rows: number, error: unknown) => console.error(JSON.stringify({ level: 'error', msg: 'scan batch failed', rows, error: String(error) }));

/**
 * What the writer commits to: an engine's ScanWriteRecords, whose commitGroup may answer at once
 * (SQLite's synchronous records: the group commits within the turn) or with a promise, and the
 * pause its writes wait out, if the engine has one (SQLite's WAL checkpointer).
 */
export interface ScanWriterStorage {
  commitGroup(group: ScansToWrite[], slice: GroupSlice): MaybePromise<number[]>;
  pause?: WritesPause;
}

export function createScanWriter(storage: ScanWriterStorage, maxBatchRows = MAX_BATCH_ROWS, { onCommit, onFailure = logFailure }: WriterHooks = {}) {
  // Its floor, in rows: as many as arrived during the turn before the group (see flush).
  const slice = groupSlice();
  const writeGroup = (entries: Entry[]) => storage.commitGroup(entries, slice);

  const queue: Entry[] = [];
  /** Rows queued since the last flush: those that arrived during the current turn. */
  let arrivedRows = 0;
  let scheduled: ReturnType<typeof setImmediate> | null = null;
  let closed = false;
  /** A group whose commit answers with a promise is in flight: the next waits for it (groups commit one at a time, in order). */
  let committing: Promise<void> | null = null;
  // While the engine pauses writes (SQLite's WAL checkpointer: a few ms to tens of ms), rows queue
  // up; that backlog is then written in slices, one group per turn of the event loop.
  const pause = storage.pause;
  let waitingForPause = false;
  const afterPause = () => {
    waitingForPause = false;
    flush();
  };
  const rowsOf = (entries: Entry[]) => entries.reduce((sum, entry) => sum + entry.scans.length, 0);
  const outcome: GroupOutcome<Entry> = {
    refuse(entry, error) {
      onFailure(entry.scans.length, error);
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
    // The group in flight schedules the next when it has committed.
    if (committing) return;
    slice.floor = arrivedRows;
    arrivedRows = 0;
    if (queue.length === 0) return;
    if (pause?.paused && !closed) {
      if (!waitingForPause) pause.afterPause(afterPause);
      waitingForPause = true;
      return;
    }
    let taken = 0;
    for (let rows = 0; taken < queue.length && rows < slice.floor + maxBatchRows; ) rows += queue[taken++]!.scans.length;
    const started = performance.now();
    const written = commitGroup(queue.splice(0, taken), writeGroup, outcome);
    if (!(written instanceof Promise)) return answer(written, started);
    committing = written.then((group) => {
      committing = null;
      answer(group, started);
    });
  }

  /** After a group's commit: its waiters answered, what it left put back first, the next group scheduled. */
  function answer(written: Committed<Entry, number>, started: number): void {
    queue.unshift(...written.left);
    if (queue.length > 0) scheduled = setImmediate(flush);
    if (written.committed.length === 0) return;
    onCommit?.(rowsOf(written.committed), (performance.now() - started) / 1000);
    written.committed.forEach((entry, i) => entry.resolve(written.results[i]!));
  }

  function enqueue(scans: NormalizedScan[], receivedAt: number, skipDuplicates: boolean): Promise<number> {
    if (closed) return Promise.reject(persistenceFailed());
    return new Promise<number>((resolve, reject) => {
      queue.push({ scans, receivedAt, skipDuplicates, resolve, reject });
      arrivedRows += scans.length;
      if (arrivedRows >= maxBatchRows) flush();
      else scheduled ??= setImmediate(flush);
    });
  }

  return {
    /** Queue one scan; resolves once its row is committed. */
    async write(scan: NormalizedScan, receivedAt: number): Promise<void> {
      await enqueue([scan], receivedAt, false);
    },

    /**
     * Queue a bulk request's scans, skipping every (url, scannedAt) pair already stored; resolves
     * with how many rows were inserted once they are all committed (a batch is never split).
     */
    writeBulk(scans: NormalizedScan[], receivedAt: number): Promise<number> {
      return enqueue(scans, receivedAt, true);
    },

    /**
     * Flush pending rows and refuse new ones (graceful shutdown, before the database closes): at
     * once over storage that answers at once, else once the last group has committed.
     */
    async close(): Promise<void> {
      closed = true;
      for (;;) {
        if (committing) await committing;
        else if (queue.length > 0) flush();
        else return;
      }
    },
  };
}

export type ScanWriter = ReturnType<typeof createScanWriter>;
