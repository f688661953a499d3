import type { Database } from 'bun:sqlite';

/** How often the checkpointer copies the WAL into the database file. */
const CHECKPOINT_INTERVAL_MS = 250;
/** SQLite's default: a COMMIT that takes the WAL past this many pages checkpoints it. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

// Runs in a Worker (inlined, so the compiled binary needs no second entry point). A PASSIVE
// checkpoint never waits for, and never blocks, the server's readers and writers.
const WORKER_SOURCE = `
import { Database } from 'bun:sqlite';
let db = null;
let timer = null;
const checkpoint = () => {
  const { log, checkpointed } = db.query('PRAGMA wal_checkpoint(PASSIVE)').get();
  postMessage({ log, checkpointed });
};
self.onmessage = ({ data }) => {
  if (data.file) {
    db = new Database(data.file);
    db.exec('PRAGMA busy_timeout = 0');
    timer = setInterval(checkpoint, data.intervalMs);
    postMessage({ ready: true });
  } else if (data.stop) {
    clearInterval(timer);
    checkpoint();
    db.close();
    postMessage({ stopped: true });
  }
};
`;

/**
 * WAL checkpoints off the request thread. SQLite's automatic checkpoint runs inside whichever
 * COMMIT takes the WAL past 1000 pages: that commit copies the WAL into the database file and
 * syncs it, holding the event loop for 100–250 ms under a catalogue import (bench/sync.ts) and
 * taking a third of the roller's time. While the checkpointer runs, the server's own connection
 * never checkpoints (wal_autocheckpoint 0) and a Worker with its own connection does, every
 * 250 ms. If the Worker fails, the connection goes back to checkpointing itself.
 */
export async function startCheckpointer(sqlite: Database, file: string, log: (level: 'error', msg: string, fields: { error: string }) => void, intervalMs = CHECKPOINT_INTERVAL_MS) {
  const worker = new Worker(URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'application/javascript' })));
  let checkpoints = 0;
  let stopped: (() => void) | null = null;
  const selfCheckpointing = () => sqlite.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  await new Promise<void>((resolve, reject) => {
    worker.onmessage = ({ data }) => {
      if (data.ready) resolve();
      else if (data.stopped) stopped?.();
      else checkpoints++;
    };
    worker.onerror = (event) => {
      selfCheckpointing();
      log('error', 'checkpointer failed; the server connection checkpoints the WAL itself again', { error: event.message });
      reject(new Error(event.message));
      stopped?.();
    };
    worker.postMessage({ file, intervalMs });
  });
  sqlite.exec('PRAGMA wal_autocheckpoint = 0');

  return {
    /** Checkpoints run so far (for tests and /metrics). */
    get checkpoints(): number {
      return checkpoints;
    },
    /** A last checkpoint, then the Worker ends; the connection checkpoints itself again. */
    async stop(): Promise<void> {
      selfCheckpointing();
      await new Promise<void>((resolve) => {
        stopped = resolve;
        worker.postMessage({ stop: true });
      });
      worker.terminate();
    },
  };
}

export type Checkpointer = Awaited<ReturnType<typeof startCheckpointer>>;
