// The WAL checkpointer's thread (src/db/checkpointer.ts): its own connection to the database,
// copying committed WAL frames into the database file (and syncing it) off the request thread.
import { Database } from 'bun:sqlite';

declare const self: Worker;

let database: Database | null = null;
let timer: ReturnType<typeof setInterval> | null = null;

self.onmessage = (event: MessageEvent<{ file: string; everyMs: number; restartPages: number } | 'stop'>) => {
  if (event.data === 'stop') {
    if (timer) clearInterval(timer);
    database?.close();
    database = null;
    self.postMessage('stopped');
    return;
  }
  database = new Database(event.data.file);
  database.exec('PRAGMA busy_timeout = 5000');
  // PASSIVE never waits for readers or writers: it copies what it can and is tried again next time.
  const passive = database.prepare<{ log: number }, []>('PRAGMA wal_checkpoint(PASSIVE)');
  // Under steady writes a PASSIVE checkpoint never sees the WAL quiet, so the WAL is never reused
  // from its start and grows; past `restartPages` a RESTART checkpoint briefly holds off the writer
  // (its busy timeout) to copy the last frames, so the next commit starts the WAL over.
  const restart = database.prepare('PRAGMA wal_checkpoint(RESTART)');
  const { everyMs, restartPages } = event.data;
  timer = setInterval(() => {
    if (passive.get()!.log >= restartPages) restart.get();
  }, everyMs);
  self.postMessage('started');
};
