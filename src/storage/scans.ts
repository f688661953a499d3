// What the scans capability keeps in storage, in its own value types: the scans the telemetry
// endpoints accept, the dashboard's reads of them, the rollups the stats read and the retention of
// both. One implementation per engine (src/storage/sqlite/scans.ts, src/storage/postgres/scans.ts),
// held to the same contract by test/storage/scans-records.test.ts. All times are epoch milliseconds.
import type { GroupSlice } from '../lib/group-commit.ts';
import type { RollupBacklog } from '../scans/backlog.ts';
import type { Cursor, GroupBy, ScanFilters } from '../scans/filters.ts';
import type { StatsGroup } from '../scans/stats.ts';
import type { HostnameCount, ScanDetail, ScanPage } from '../scans/views.ts';
import type { NormalizedScan } from '../telemetry/payload.ts';

/** One request's scans: committed together, in one transaction, or not at all. */
export interface ScansToWrite {
  scans: NormalizedScan[];
  receivedAt: number;
  /** Bulk: a scan whose (url, scannedAt) is stored already, or written earlier in the transaction, is skipped. */
  skipDuplicates: boolean;
}

/** The writes the group-commit writer (src/telemetry/writer.ts) makes. */
export interface ScanWriteRecords {
  /**
   * A group of requests' scans in one transaction, in order; each request's count of rows inserted.
   * `slice` is started as the transaction begins and asked before each request (its size in scans);
   * a group it stops commits the requests before. A request whose own rows fail rejects with
   * EntryFailed (its index), and nothing of the group is kept. Resolves after COMMIT. Duplicates
   * are skipped whatever runs at the same time: two racing bulk requests with the same scan store it once.
   */
  commitGroup(group: ScansToWrite[], slice: GroupSlice): Promise<number[]>;
}

/** Writers that can wait out a pause of the writes (SQLite: the WAL checkpointer's, lib/write-pause.ts). */
export interface WritesPause {
  readonly paused: boolean;
  afterPause(fn: () => void): void;
}

/** The grade and percentage a hostname's badge shows. */
export interface BadgeScan {
  grade: string;
  percentage: number;
}

/** The reads that answer on the request thread: the public badge and the rollup backlog (/metrics, /healthz). */
export interface ScanReadRecords {
  /** The scan a hostname's badge shows: its most trusted, then most recently received, then the last written; null when none. */
  badge(hostname: string): Promise<BadgeScan | null>;
  /** The scans accepted and not folded into the rollups yet, and when the first of them was received. */
  backlog(): Promise<RollupBacklog>;
}

/**
 * The dashboard's reads (src/scans/routes.ts). Stats read the rollups and the rows not folded yet
 * as of one snapshot, so a scan is counted once whatever the roller does meanwhile.
 */
export interface DashboardQueries {
  /** One page, newest first (scannedAt, then id, descending), after `cursor`; `next` is where the following page starts (null on the last page). */
  list(filters: ScanFilters, cursor: Cursor | null, limit: number): Promise<ScanPage>;
  /** The hostnames with the most scans (ties by name), with their latest scan time. */
  topHostnames(filters: ScanFilters, limit: number): Promise<HostnameCount[]>;
  /** One scan, its stored JSON included, or null. */
  get(id: string): Promise<ScanDetail | null>;
  /** Per group, in key order (null first): scans, distinct hostnames, average percentage, grades, presence rates. */
  stats(filters: ScanFilters, groupBy: GroupBy): Promise<StatsGroup[]>;
  /** Ends the readers once the reads given are answered; later reads are refused. */
  close(): Promise<void>;
}

/**
 * The rollups and scan retention, run in the background: a fold takes every scan accepted and not
 * folded yet (never skipping one, whatever order the transactions that wrote them committed in)
 * into the rollups, with the watermark that says so, in one transaction.
 */
export interface ScanRollups {
  /** Fold every scan not folded yet, now, batch by batch; resolves with how many. One run at a time. */
  runOnce(): Promise<number>;
  /**
   * Retention: the rollups of the days before `firstKeptDay` (whole UTC days) go first, then their
   * scans, oldest first, in batches of at most `batchRows`, until `signal` aborts; stats never count
   * a deleted scan. Resolves with the scans deleted.
   */
  retain(firstKeptDay: number, signal: AbortSignal, batchRows?: number): Promise<number>;
  /** Fold now and then every `intervalMs` (every second by default). */
  start(intervalMs?: number): void;
  /** Stop the timer, wait for a run in progress (ended at its next step) and release what the roller holds. */
  stop(): Promise<void>;
}

/** The scans domain of one engine. */
export interface ScanStorage {
  writes: ScanWriteRecords;
  reads: ScanReadRecords;
  /** Opens the dashboard's readers (SQLite: Workers, started at the first read). */
  dashboard(): DashboardQueries;
  /** Opens the roller (SQLite: a Worker of its own); `batchScans` caps a batch. Not started: `start()` does. */
  roller(batchScans?: number): ScanRollups;
}
