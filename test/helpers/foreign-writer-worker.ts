// A second connection to the database file, on its own thread (as the CLI's process or the WAL
// checkpointer's Worker): takes the write lock, writes, holds it `holdMs`, then commits.
import { Database } from 'bun:sqlite';

declare const self: Worker;

self.onmessage = ({ data }: MessageEvent<{ file: string; holdMs: number }>) => {
  const sqlite = new Database(data.file);
  sqlite.exec('PRAGMA busy_timeout = 5000');
  sqlite.exec('CREATE TABLE IF NOT EXISTS foreign_writes (at INTEGER)');
  sqlite.exec('BEGIN IMMEDIATE');
  sqlite.run('INSERT INTO foreign_writes VALUES (?)', [Date.now()]);
  postMessage('holding');
  Bun.sleepSync(data.holdMs);
  sqlite.exec('COMMIT');
  sqlite.close();
  postMessage('committed');
};
