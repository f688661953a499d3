import type { Database } from 'bun:sqlite';
import { fileBytes } from '../../../lib/paths.ts';
import { writePause } from '../write-pause.ts';

/** How often the checkpointer copies the WAL into the database file. */
const CHECKPOINT_INTERVAL_MS = 250;
/** SQLite's default: a COMMIT that takes the WAL past this many pages checkpoints it. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/**
 * A WAL past this many pages (32 MiB of 4 KiB pages) is started over: the checkpointer pauses the
 * writes that can wait until its checkpoint has caught up with the last COMMIT.
 */
export const WAL_RESTART_PAGES = 8192;
/**
 * A restarted WAL file larger than this (1 GiB) is cut back towards it (journal_size_limit), in
 * steps: restarts keep the file near its high-water mark under load (~100–200 MB), reused from its
 * start, so it outgrows this only after a reader held the log from restarting for long (a backup of
 * a busy server).
 */
const WAL_FILE_LIMIT_BYTES = 1024 * 1024 * 1024;
/**
 * The most one restart cuts off a WAL file past its limit. The first COMMIT after a restart cuts on
 * the request thread, and a filesystem that discards freed blocks (ext4 mounted with `discard`)
 * does it synchronously at ~0.8 ms per MB: a 13.5 GB log cut at once held the event loop 11–22 s
 * (docs/performance.md). 4 MiB costs ~3.5 ms; the file shrinks by that at every restart.
 */
const WAL_TRUNCATE_STEP_BYTES = 4 * 1024 * 1024;
/**
 * The longest the checkpointer first pauses writes; past it they go on and it tries again next
 * time, with twice the limit, up to PAUSE_LIMIT_GROWTH times the first (1.6 s); a pause that caught
 * up halves it. A pause that copies what a few large commits (bulk requests of 1,000 scans) add,
 * and syncs it, outlasts 100 ms on a slow disk, and a limit that never grew would let the log grow
 * without end (13.5 GB over a 1M-scan import). Only the writes that can wait are held; the event
 * loop goes on serving.
 */
const PAUSE_LIMIT_MS = 100;
const PAUSE_LIMIT_GROWTH = 16;
/** Pages committed during a checkpoint pass below which the rest is left for the pause (4 MiB). */
const CAUGHT_UP_PAGES = 1024;
/** How soon a pass during a pause that could not copy the whole log (a reader held it) is tried again. */
const CATCH_UP_RETRY_MS = 2;
/** Most passes before the pause, should the server write faster than a pass copies. */
const CATCH_UP_PASSES = 4;

// Runs in a Worker (inlined, so the compiled binary needs no second entry point). A PASSIVE
// checkpoint never waits for, and never blocks, the server's readers and writers. A WAL past the
// restart threshold is reported, and the Worker waits for the server to pause its writes: the
// checkpoint it then runs copies the last pages, so the next COMMIT writes the log from its start.
const WORKER_SOURCE = `
import { Database } from 'bun:sqlite';
let db = null;
let timer = null;
let intervalMs = 0;
let restartPages = 0;
let pauseFlag = null;
// The log a pause left fully copied: unchanged since, no COMMIT came, so the next one restarts it
// and another pause would hold writes for nothing.
let caughtUpLog = -1;
const passive = () => db.query('PRAGMA wal_checkpoint(PASSIVE)').get();
const checkpoint = () => {
  let { log, checkpointed } = passive();
  const full = log >= restartPages && log !== caughtUpLog;
  // Before asking for a pause, passes while the server goes on, each copying what was committed
  // during the previous one, until one has little left: what is left for the pause is short.
  for (let pass = 0; full && pass < ${CATCH_UP_PASSES}; pass++) {
    const before = log;
    ({ log, checkpointed } = passive());
    if (log - before < ${CAUGHT_UP_PAGES}) break;
  }
  postMessage({ log, checkpointed, full });
  if (!full) timer = setTimeout(checkpoint, intervalMs);
};
// During a pause: passes until one copies the whole log, or until the server's pause ends (its
// shared flag). A reader whose snapshot predates the last COMMIT (the roller, a dashboard query)
// holds the copy back only until its transaction ends; the next pass then finishes.
const catchUp = () => {
  const result = passive();
  const caughtUp = result.log === result.checkpointed;
  if (!caughtUp && Atomics.load(pauseFlag, 0) === 1) {
    timer = setTimeout(catchUp, ${CATCH_UP_RETRY_MS});
    return;
  }
  if (caughtUp) caughtUpLog = result.log;
  postMessage({ ...result, caughtUp: true });
  timer = setTimeout(checkpoint, intervalMs);
};
self.onmessage = ({ data }) => {
  if (data.file) {
    db = new Database(data.file);
    db.exec('PRAGMA busy_timeout = 0');
    ({ intervalMs, restartPages, pauseFlag } = data);
    timer = setTimeout(checkpoint, intervalMs);
    postMessage({ ready: true });
  } else if (data.paused) {
    catchUp();
  } else if (data.later) {
    timer = setTimeout(checkpoint, intervalMs);
  } else if (data.stop) {
    clearTimeout(timer);
    postMessage(passive());
    db.close();
    postMessage({ stopped: true });
  }
};
`;

/** Settings of the checkpointer; tests make them small. */
export interface CheckpointerOptions {
  intervalMs?: number;
  restartPages?: number;
  /** The first pause limit; it doubles after each pause that ran out, up to PAUSE_LIMIT_GROWTH times it, and halves after one that caught up. */
  pauseLimitMs?: number;
  walFileLimitBytes?: number;
  truncateStepBytes?: number;
}

/**
 * WAL checkpoints off the request thread. SQLite's automatic checkpoint runs inside whichever
 * COMMIT takes the WAL past 1000 pages: that commit copies the WAL into the database file and
 * syncs it, holding the event loop for 100–250 ms under a catalogue import (bench/sync.ts) and
 * taking a third of the roller's time. While the checkpointer runs, the server's own connection
 * never checkpoints (wal_autocheckpoint 0) and a Worker with its own connection does, every
 * 250 ms. If the Worker fails, the connection goes back to checkpointing itself.
 *
 * A checkpoint only copies the pages committed before it started, and a writer starts the WAL over
 * only when every page has been copied: under steady writes that never happens and the WAL grows
 * without limit. Past `restartPages`, the writes that can wait are paused (lib/write-pause.ts, the
 * event loop stays free) while the Worker copies the last pages; if no other COMMIT came in
 * between, the next one restarts the WAL. A pause that runs out before the copy is done makes the
 * next one longer (PAUSE_LIMIT_MS). Neither thread takes the write lock (a RESTART checkpoint would:
 * every server COMMIT would wait for it on the event loop, and a transaction that had read first
 * would be refused).
 *
 * The COMMIT that restarts the WAL also cuts its file to journal_size_limit, on the request thread:
 * the limit is set so that each restart cuts at most WAL_TRUNCATE_STEP_BYTES.
 */
export async function startCheckpointer(
  sqlite: Database,
  file: string,
  log: (level: 'error', msg: string, fields: { error: string }) => void,
  {
    intervalMs = CHECKPOINT_INTERVAL_MS,
    restartPages = WAL_RESTART_PAGES,
    pauseLimitMs = PAUSE_LIMIT_MS,
    walFileLimitBytes = WAL_FILE_LIMIT_BYTES,
    truncateStepBytes = WAL_TRUNCATE_STEP_BYTES,
  }: CheckpointerOptions = {},
) {
  const worker = new Worker(URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'application/javascript' })));
  const pause = writePause(sqlite);
  // Rows written by this connection: unchanged over a pause means no COMMIT of the server in it.
  const changes = sqlite.prepare<{ n: number }, []>('SELECT total_changes() AS n');
  const longestPauseLimitMs = pauseLimitMs * PAUSE_LIMIT_GROWTH;
  let pauseLimit = pauseLimitMs;
  // After a pause that ran out, no other before twice its new limit: writes go on at least two
  // thirds of the time even while a long reader (a backup) keeps every pause from catching up.
  let nextPauseAt = 0;
  let checkpoints = 0;
  let restarts = 0;
  let longestPauseMs = 0;
  let paused: { changes: number; started: number; limit: ReturnType<typeof setTimeout> } | null = null;
  let stopped: (() => void) | null = null;
  const selfCheckpointing = () => sqlite.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  /**
   * What the next restart cuts the WAL file to: one step less than it is, down to the limit. Set
   * after every checkpoint, since a restart also follows a checkpoint that copied everything
   * between two commits, or a pause that ran out just after its copy: a limit set only at counted
   * restarts could be one from long ago, and the file would be cut all at once.
   */
  const limitWalFile = () => {
    const bytes = fileBytes(`${file}-wal`);
    sqlite.exec(`PRAGMA journal_size_limit = ${Math.max(walFileLimitBytes, bytes - truncateStepBytes)}`);
  };
  const pauseWrites = () => {
    paused = { changes: changes.get()!.n, started: performance.now(), limit: setTimeout(() => resumeWrites(false), pauseLimit) };
    pause.pause();
    worker.postMessage({ paused: true });
  };
  const resumeWrites = (caughtUp: boolean) => {
    if (!paused) return;
    clearTimeout(paused.limit);
    longestPauseMs = Math.max(longestPauseMs, performance.now() - paused.started);
    if (caughtUp && changes.get()!.n === paused.changes) {
      restarts++;
      pauseLimit = Math.max(pauseLimitMs, pauseLimit / 2);
    } else if (!caughtUp) {
      pauseLimit = Math.min(pauseLimit * 2, longestPauseLimitMs);
      nextPauseAt = performance.now() + 2 * pauseLimit;
    }
    paused = null;
    pause.resume();
  };
  await new Promise<void>((resolve, reject) => {
    worker.onmessage = ({ data }) => {
      if (data.ready) resolve();
      else if (data.stopped) stopped?.();
      else {
        checkpoints++;
        limitWalFile();
        if (data.caughtUp) resumeWrites(data.log === data.checkpointed);
        else if (data.full && !stopped) {
          if (performance.now() >= nextPauseAt) pauseWrites();
          else worker.postMessage({ later: true });
        }
      }
    };
    worker.onerror = (event) => {
      selfCheckpointing();
      resumeWrites(false);
      log('error', 'checkpointer failed; the server connection checkpoints the WAL itself again', { error: event.message });
      reject(new Error(event.message));
      stopped?.();
    };
    worker.postMessage({ file, intervalMs, restartPages, pauseFlag: pause.shared });
  });
  sqlite.exec('PRAGMA wal_autocheckpoint = 0');
  limitWalFile();

  return {
    /** Checkpoints run so far (for tests and /metrics). */
    get checkpoints(): number {
      return checkpoints;
    },
    /** Pauses after which the WAL was fully copied with no COMMIT since: the next one started it over. */
    get restarts(): number {
      return restarts;
    },
    /** The limit of the next pause, in ms (it grows after pauses that ran out). */
    get pauseLimitMs(): number {
      return pauseLimit;
    },
    /** The longest the checkpointer paused writes, in ms. */
    get longestPauseMs(): number {
      return longestPauseMs;
    },
    /** A last checkpoint, then the Worker ends; the connection checkpoints itself again. */
    async stop(): Promise<void> {
      selfCheckpointing();
      await new Promise<void>((resolve) => {
        stopped = resolve;
        worker.postMessage({ stop: true });
      });
      resumeWrites(false);
      worker.terminate();
    },
  };
}

export type Checkpointer = Awaited<ReturnType<typeof startCheckpointer>>;
