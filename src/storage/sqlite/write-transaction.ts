import type { Database } from 'bun:sqlite';

/**
 * A transaction that reads before it writes, started IMMEDIATE (the write lock taken at BEGIN).
 * Started DEFERRED, it would take a read snapshot at its first read and ask for the write lock
 * only at its first write; if another connection (the CLI from another process, the WAL
 * checkpointer's Worker) commits or holds the lock in between, SQLite cannot upgrade that
 * snapshot and fails at once with SQLITE_BUSY, without waiting for busy_timeout. Taken at BEGIN,
 * the lock is waited for (busy_timeout) like any other write. Nested in another transaction, it is
 * a savepoint of that one, as any bun:sqlite transaction.
 */
export function writeTransaction<A extends unknown[], T>(sqlite: Database, fn: (...args: A) => T): (...args: A) => T {
  return sqlite.transaction(fn).immediate;
}
