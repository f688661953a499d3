import type { Config } from '../config.ts';
import type { Storage } from './index.ts';
import { postgresLeadership, type Leadership } from './postgres/leadership.ts';
import { openPostgres } from './postgres/open.ts';
import type { WritesPause } from './scans.ts';
import { openSqlite } from './sqlite/open.ts';

/** Where the engine's upkeep reports a failure (the app's logger). */
export type UpkeepLog = (level: 'error', msg: string, fields: { error: string }) => void;

/** The engine svc's state is kept in, open and migrated: what a server or a command composes. */
export interface OpenedEngine {
  storage: Storage;
  /** The pause of the writes that can wait (SQLite's, while its checkpointer catches up with the log); none on PostgreSQL. */
  writePause?: WritesPause;
  /** The database as the start line names it: the SQLite file, or the PostgreSQL URL without its credentials. */
  shown: string;
  /** Migrations this start applied, and how many the database holds now. */
  migrations: { applied: number; total: number };
  /** Starts what the engine keeps running beside svc (SQLite: the WAL checkpointer); resolves with how to stop it and its metrics. */
  startUpkeep(log: UpkeepLog): Promise<{ stop(): unknown; collect(): string }>;
  /**
   * Takes part in choosing the one instance that runs the background work that must run once (the
   * roller, retention, reconciliation); `onChange` is told each change of this instance's role.
   * SQLite has one instance per data directory: it leads at once and always.
   */
  lead(onChange: (leads: boolean) => void): Leadership;
  close(): Promise<void>;
}

export type { Leadership };


/**
 * The engine the configuration names: PostgreSQL at `config.postgres.url` (its connections named
 * `applicationName` on the server), else SQLite in the data directory.
 */
/** How the SQLite engine is opened: `checkpointer` stands in for its WAL checkpointer (tests fail a start after it). */
export interface SqliteOptions {
  checkpointer?: Parameters<typeof openSqlite>[1];
}

export async function openEngine(config: Config, applicationName: string, sqliteOptions: SqliteOptions = {}): Promise<OpenedEngine> {
  if (!config.postgres) return openSqlite(config.databaseFile, sqliteOptions.checkpointer);
  const opened = await openPostgres(config.postgres, applicationName);
  return {
    storage: opened.storage,
    shown: opened.shown,
    migrations: opened.migrations,
    // PostgreSQL checkpoints and vacuums by itself.
    startUpkeep: async () => ({ stop: () => {}, collect: () => '' }),
    lead: (onChange) => postgresLeadership(config.postgres!.url, onChange),
    close: opened.close,
  };
}
