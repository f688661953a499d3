import { createChangeStamp } from './change-stamp.ts';
import { createTableWriteStamp } from './table-writes.ts';
import type { AppDatabase } from './db/index.ts';
import type { ChangeFeed } from '../changes.ts';

/** SQLite's change feed: the WAL index's change counter, and per-table write counters (table-writes.ts). */
export function sqliteChangeFeed(database: AppDatabase): ChangeFeed {
  return {
    tableStamp: (tables) => createTableWriteStamp(database.sqlite, `${tables.join('_')}_writes`, [...tables]),
    anyChange: () => createChangeStamp(database.sqlite),
  };
}
