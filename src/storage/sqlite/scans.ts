import type { AppDatabase } from './db/index.ts';
import { EntryFailed } from '../../lib/group-commit.ts';
import { newId } from '../../lib/ids.ts';
import { writePause } from './write-pause.ts';
import { writeTransaction } from './write-transaction.ts';
import type { NormalizedScan } from '../../telemetry/payload.ts';
import type { ScanReadRecords, ScanStorage, ScanWriteRecords, WritesPause } from '../scans.ts';
import type { Synchronous } from '../synchronous.ts';
import { promised } from './promised.ts';
import { createDashboardQueries } from './scan-dashboard-workers.ts';
import { createScanRollups, readRollupBacklog } from './scan-rollups.ts';
import type { RollupBacklog } from '../../scans/backlog.ts';

const COLUMNS = [
  'id', 'hostname', 'url', 'scanned_at', 'received_at', 'country', 'platform', 'platform_confidence', 'page_type',
  'grade', 'percentage', 'svc_detected', 'svc_version', 'vertical', 'has_title', 'has_description', 'has_json_ld',
  'has_open_graph', 'has_h1', 'has_canonical', 'has_robots', 'signals', 'quality', 'data', 'trust',
] as const;

type Param = string | number | null;
const bool = (value: boolean | null): Param => (value === null ? null : value ? 1 : 0);

function toParams(scan: NormalizedScan, receivedAt: number): Param[] {
  const p = scan.presence;
  return [
    newId(), scan.hostname, scan.url, scan.scannedAt, receivedAt, scan.country, scan.platform, scan.platformConfidence,
    scan.pageType, scan.grade, scan.percentage, bool(scan.svcDetected), scan.svcVersion, scan.vertical, bool(p.title),
    bool(p.description), bool(p.jsonLd), bool(p.openGraph), bool(p.h1), bool(p.canonical), bool(p.robots),
    JSON.stringify(scan.signals), JSON.stringify(scan.quality), JSON.stringify(scan.data), scan.trust,
  ];
}

/**
 * The scan writes on the request thread's connection, with prepared statements: a group is written
 * within the call (bun:sqlite answers synchronously), so the telemetry writer commits each group
 * within its turn. `pause` is the connection's write pause (the WAL checkpointer's).
 */
export function sqliteScanWriteRecordsSync(database: Pick<AppDatabase, 'sqlite'>): Synchronous<ScanWriteRecords> & { pause: WritesPause } {
  const { sqlite } = database;
  const placeholders = COLUMNS.map(() => '?').join(', ');
  const insert = sqlite.prepare(`INSERT INTO scans (${COLUMNS.join(', ')}) VALUES (${placeholders})`);
  // A separate probe, then the plain insert: measured cheaper than one INSERT ... SELECT ... WHERE
  // NOT EXISTS, whose 24 bound columns go through a SELECT first (bench/bulk.ts). Inside the one
  // writing transaction over the (scanned_at, url) index, so it sees rows of every endpoint, earlier
  // rows of the same batch, and (SQLite has one writer at a time) rows of a racing bulk request.
  const stored = sqlite.prepare<unknown, [number, string]>('SELECT 1 FROM scans WHERE scanned_at = ? AND url = ?');
  const isStored = (scan: NormalizedScan) => stored.get(scan.scannedAt, scan.url) !== null;
  return {
    pause: writePause(sqlite),
    commitGroup: writeTransaction(sqlite, (group, slice) => {
      slice.start();
      const inserted: number[] = [];
      for (const { scans, receivedAt, skipDuplicates } of group) {
        if (!slice.takes(scans.length)) break;
        try {
          let written = 0;
          for (const scan of scans) {
            if (skipDuplicates && isStored(scan)) continue;
            insert.run(...toParams(scan, receivedAt));
            written++;
          }
          inserted.push(written);
        } catch (error) {
          throw new EntryFailed(inserted.length, error);
        }
      }
      return inserted;
    }),
  };
}

/** The badge on the request thread's connection (a hot route: one index seek), the backlog on the stats reader's. */
export function sqliteScanReadRecordsSync(database: Pick<AppDatabase, 'sqlite' | 'stats'>): Synchronous<ScanReadRecords> {
  const latest = database.sqlite.prepare<{ grade: string; percentage: number }, [string]>(
    // The most trusted scan, then the most recently received (telemetry/payload.ts ScanTrust): from
    // the end of scans_badge_idx; rowid breaks ties within one bulk request, in its order.
    'SELECT grade, percentage FROM scans INDEXED BY scans_badge_idx WHERE hostname = ? ORDER BY trust DESC, received_at DESC, rowid DESC LIMIT 1',
  );
  // Prepared at the first read: the stats reader opens (and creates) the rollups file, which a
  // command that reads no scans (svc leads list after a restore) must not do.
  let backlog: (() => RollupBacklog) | null = null;
  return {
    badge: (hostname) => latest.get(hostname),
    backlog: () => (backlog ??= readRollupBacklog(database.stats()))(),
  };
}

/**
 * The scans domain on SQLite: the writes and the request thread's reads on the open database; the
 * dashboard's reads in Workers of their own (scan-dashboard-workers.ts) and the roller with scan
 * retention in another (scan-rollups.ts), each on its own connection with the rollups file attached.
 */
export function sqliteScanStorage(database: AppDatabase): ScanStorage {
  return {
    writes: promised<ScanWriteRecords>({ commitGroup: sqliteScanWriteRecordsSync(database).commitGroup }),
    reads: promised<ScanReadRecords>(sqliteScanReadRecordsSync(database)),
    dashboard: () => {
      // The stats reader makes the rollups file ready before the Workers' connections attach it.
      database.stats();
      const queries = createDashboardQueries(database.file);
      database.onClose(queries.close);
      return queries;
    },
    roller: (batchScans) => createScanRollups(database, batchScans),
  };
}
