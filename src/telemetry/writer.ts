import type { Database } from 'bun:sqlite';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import type { NormalizedScan } from './payload.ts';

/** A batch never holds more rows than this; a full batch is written at once (DESIGN §6). */
export const MAX_BATCH_ROWS = 512;

const COLUMNS = [
  'id', 'hostname', 'url', 'scanned_at', 'received_at', 'country', 'platform', 'platform_confidence', 'page_type',
  'grade', 'percentage', 'svc_detected', 'svc_version', 'vertical', 'has_title', 'has_description', 'has_json_ld',
  'has_open_graph', 'has_h1', 'has_canonical', 'has_robots', 'signals', 'quality', 'data',
] as const;

type Param = string | number | null;
const bool = (value: boolean | null): Param => (value === null ? null : value ? 1 : 0);

function toParams(scan: NormalizedScan, receivedAt: number): Param[] {
  const p = scan.presence;
  return [
    newId(), scan.hostname, scan.url, scan.scannedAt, receivedAt, scan.country, scan.platform, scan.platformConfidence,
    scan.pageType, scan.grade, scan.percentage, bool(scan.svcDetected), scan.svcVersion, scan.vertical, bool(p.title),
    bool(p.description), bool(p.jsonLd), bool(p.openGraph), bool(p.h1), bool(p.canonical), bool(p.robots),
    JSON.stringify(scan.signals), JSON.stringify(scan.quality), JSON.stringify(scan.data),
  ];
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

const persistenceFailed = () => new ApiError(500, 'persistence_failed', 'the scan could not be stored; retry later');

/**
 * Group commit (DESIGN §6, feasibility §4): scans queue in memory until the end of the current
 * event-loop turn (setImmediate) or until MAX_BATCH_ROWS are waiting, then one transaction writes
 * them with a prepared statement and every waiter is answered: resolved after COMMIT, or rejected
 * with 500 `persistence_failed` when the transaction fails (it rolls back: nothing partial).
 */
export function createScanWriter(sqlite: Database, maxBatchRows = MAX_BATCH_ROWS) {
  const insert = sqlite.prepare(`INSERT INTO scans (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`);
  const writeBatch = sqlite.transaction((rows: Param[][]) => {
    for (const row of rows) insert.run(...row);
  });

  let rows: Param[][] = [];
  let waiters: Waiter[] = [];
  let scheduled: ReturnType<typeof setImmediate> | null = null;
  let closed = false;

  function flush(): void {
    if (scheduled) clearImmediate(scheduled);
    scheduled = null;
    if (rows.length === 0) return;
    const batch = rows;
    const answer = waiters;
    rows = [];
    waiters = [];
    try {
      writeBatch(batch);
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', msg: 'scan batch failed', rows: batch.length, error: String(error) }));
      const failure = persistenceFailed();
      for (const waiter of answer) waiter.reject(failure);
      return;
    }
    for (const waiter of answer) waiter.resolve();
  }

  return {
    /** Queue one scan; resolves once its row is committed. */
    write(scan: NormalizedScan, receivedAt: number): Promise<void> {
      if (closed) return Promise.reject(persistenceFailed());
      return new Promise<void>((resolve, reject) => {
        rows.push(toParams(scan, receivedAt));
        waiters.push({ resolve, reject });
        if (rows.length >= maxBatchRows) flush();
        else scheduled ??= setImmediate(flush);
      });
    },

    /** Flush pending rows and refuse new ones (graceful shutdown, before the database closes). */
    close(): void {
      flush();
      closed = true;
    },
  };
}

export type ScanWriter = ReturnType<typeof createScanWriter>;
