import { Database } from 'bun:sqlite';
import path from 'node:path';
import { ensureDataDirectory } from '../../lib/paths.ts';

/** Another live process holds the data directory (a running server, or a restore in progress). */
export class InstanceLockedError extends Error {
  constructor(
    readonly dataDir: string,
    holder: string,
  ) {
    super(`the data directory ${dataDir} is in use by another svc (${holder}); stop it first`);
    this.name = 'InstanceLockedError';
  }
}

export interface InstanceLock {
  file: string;
  release(): void;
}

/**
 * Exclusive use of a data directory for this process's life, by `svc serve` and `svc restore`.
 *
 * The lock is SQLite's own write lock (a POSIX record lock) on `<dataDir>/svc.lock`, held by a
 * transaction that is never committed: the operating system drops it when the process exits however
 * it exits, `kill -9` included, so a lock can never go stale. The file's content (who holds it) only
 * serves the error message; a leftover file means nothing. Other commands (`keys`, `leads`, `backup`,
 * `migrate`) do not take it: they are meant to run beside a server.
 */
export function acquireInstanceLock(dataDir: string, holder: string): InstanceLock {
  ensureDataDirectory(dataDir);
  const file = path.join(dataDir, 'svc.lock');
  const db = new Database(file, { create: true });
  const refuse = (): never => {
    let current = 'a process that holds the lock';
    try {
      const row = db.query<{ holder: string }, []>('SELECT holder FROM lock_holder LIMIT 1').get();
      if (row) current = row.holder;
    } catch {
      // Mid-write by the holder, or never written: the generic description stands.
    }
    db.close();
    throw new InstanceLockedError(dataDir, current);
  };
  try {
    db.exec('PRAGMA busy_timeout = 0');
    db.exec('PRAGMA journal_mode = DELETE');
    db.exec('BEGIN IMMEDIATE');
  } catch {
    return refuse();
  }
  // Record who holds it, commit so others can read it, then take the lock again for good. Losing it
  // in between to a process starting at the same moment just means that one holds it.
  db.exec('CREATE TABLE IF NOT EXISTS lock_holder (holder TEXT NOT NULL)');
  db.exec('DELETE FROM lock_holder');
  db.run('INSERT INTO lock_holder (holder) VALUES (?)', [holder]);
  db.exec('COMMIT');
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch {
    return refuse();
  }
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}
