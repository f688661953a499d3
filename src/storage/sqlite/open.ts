import { startCheckpointer, type Checkpointer } from './db/checkpoint.ts';
import { migrateDatabase, openDatabase, type AppDatabase } from './db/index.ts';
import { writePause } from './write-pause.ts';
import { sample } from '../../observability/metrics.ts';
import type { Leadership, OpenedEngine, UpkeepLog } from '../open.ts';
import { sqliteStorage } from './index.ts';

export type { AppDatabase };

/** Scrape-time figures of the WAL checkpointer: the times it started the log over, and its longest write pause. */
export function checkpointCollector(checkpointer: Pick<Checkpointer, 'restarts' | 'longestPauseMs'>): () => string {
  return () =>
    [
      sample('svc_wal_restarts_total', 'counter', 'Times the write-ahead log, past its threshold, was copied up to its last commit so the next one started it over.', [{ value: checkpointer.restarts }]),
      sample('svc_wal_pause_longest_seconds', 'gauge', 'Longest pause of the writes that can wait (group commits) while the checkpointer caught up with the log.', [{ value: checkpointer.longestPauseMs / 1000 }]),
    ].join('');
}

/** The only instance of a data directory (its instance lock refuses a second): it leads from the start until it stops. */
function soleLeadership(onChange: (leads: boolean) => void): Leadership {
  onChange(true);
  return { leads: () => true, stop: async () => onChange(false) };
}

/**
 * The SQLite engine on the file `file`: opened (created when missing), migrated, with its storage.
 * Its upkeep is the WAL checkpointer, in a Worker, so no request's COMMIT copies the WAL into the
 * database file; `checkpointer` stands in for it (tests fail a start after it).
 */
export function openSqlite(file: string, checkpointer: typeof startCheckpointer = startCheckpointer): OpenedEngine & { database: AppDatabase } {
  const database = openDatabase(file);
  try {
    const migrations = migrateDatabase(database);
    const pause = writePause(database.sqlite);
    return {
      database,
      storage: sqliteStorage(database),
      writePause: pause,
      shown: file,
      migrations,
      async startUpkeep(log: UpkeepLog) {
        const running = await checkpointer(database.sqlite, database.file, log);
        return { stop: () => running.stop(), collect: checkpointCollector(running) };
      },
      lead: soleLeadership,
      close: async () => database.close(),
    };
  } catch (error) {
    database.close();
    throw error;
  }
}
