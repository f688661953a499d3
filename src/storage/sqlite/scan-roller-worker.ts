// The scan roller's Worker (scan-rollups.ts createScanRollups): its own connection to the
// database, with the rollups file attached, on which it folds scans and runs scan retention
// (scan-roller.ts). Requests are run one at a time, in the order they came.
import { Database } from 'bun:sqlite';
import { sharedWritePause } from '../../lib/write-pause.ts';
import { answerRollerRequests } from '../rollups-in-worker.ts';
import { attachRollups, ROLLUPS } from './db/rollups-file.ts';
import { BUSY_TIMEOUT_MS, createRoller } from './scan-roller.ts';

declare const self: Worker;

let sqlite: Database | null = null;
answerRollerRequests<{ file: string; batchScans?: number; pause: Int32Array }>(
  self,
  ({ file, batchScans, pause }) => {
    sqlite = new Database(file, { strict: true });
    sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // The server's checkpointer copies the database's log (src/storage/sqlite/db/checkpoint.ts); this connection's
    // commits must not (the setting covers every attached file, so the roller checkpoints the
    // rollups file after each batch). The rollups are derived: a power loss may cost the last
    // batches (folded again from the watermark), never the file, so its commits need no sync.
    sqlite.exec('PRAGMA wal_autocheckpoint = 0');
    attachRollups(sqlite, file);
    sqlite.exec(`PRAGMA ${ROLLUPS}.synchronous = NORMAL`);
    // `pause`: the request thread's write pause, as a shared flag (lib/write-pause.ts).
    return createRoller(sqlite, sharedWritePause(pause), batchScans);
  },
  () => {
    sqlite?.close();
    sqlite = null;
  },
);
