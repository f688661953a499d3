// The scan roller's Worker (scan-rollups.ts createScanRollups): its own connection to the
// database, with the rollups file attached, on which it folds scans and runs scan retention
// (scan-roller.ts). Requests are run one at a time, in the order they came.
import { Database } from 'bun:sqlite';
import { sharedWritePause } from '../../lib/write-pause.ts';
import { attachRollups, ROLLUPS } from '../../db/rollups-file.ts';
import { BUSY_TIMEOUT_MS, createRoller, type Roller } from './scan-roller.ts';

declare const self: Worker;

interface Request {
  id: number;
  op: 'open' | 'fold' | 'retain' | 'abort' | 'close';
  file?: string;
  batchScans?: number;
  /** The request thread's write pause, as a shared flag (lib/write-pause.ts). */
  pause?: Int32Array;
  firstKeptDay?: number;
  batchRows?: number;
}

let sqlite: Database | null = null;
let roller: Roller | null = null;
/** Aborted by an `abort` request: the fold or sweep running (or queued) ends at its next step. */
let stopping = new AbortController();

async function run(request: Request): Promise<number> {
  switch (request.op) {
    case 'open': {
      sqlite = new Database(request.file!, { strict: true });
      sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      // The server's checkpointer copies the database's log (src/db/checkpoint.ts); this connection's
      // commits must not (the setting covers every attached file, so the roller checkpoints the
      // rollups file after each batch). The rollups are derived: a power loss may cost the last
      // batches (folded again from the watermark), never the file, so its commits need no sync.
      sqlite.exec('PRAGMA wal_autocheckpoint = 0');
      attachRollups(sqlite, request.file!);
      sqlite.exec(`PRAGMA ${ROLLUPS}.synchronous = NORMAL`);
      roller = createRoller(sqlite, sharedWritePause(request.pause!), request.batchScans);
      return 0;
    }
    case 'fold':
      return roller!.foldAll(stopping.signal);
    case 'retain':
      return roller!.retain(request.firstKeptDay!, stopping.signal, request.batchRows);
    case 'abort':
      return 0;
    case 'close':
      sqlite?.close();
      sqlite = null;
      return 0;
  }
}

let queue: Promise<unknown> = Promise.resolve();
self.onmessage = ({ data }: MessageEvent<Request>) => {
  // Not queued: it ends what runs now and what waits; the request after it starts afresh.
  if (data.op === 'abort') {
    stopping.abort();
    queue = queue.then(() => {
      stopping = new AbortController();
    });
  }
  queue = queue.then(() =>
    run(data).then(
      (result) => postMessage({ id: data.id, ok: true, result }),
      (error: unknown) => postMessage({ id: data.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
    ),
  );
};
