import type { Database } from 'bun:sqlite';

/**
 * Another connection reading as the server's readers do (the roller reading scans, the stats
 * reading rollups): a read transaction held `holdMs`, then `gapMs` without one, over and over until
 * stopped. Each snapshot predates the commits made while it is open, so no checkpoint can copy
 * those until it ends. `stop()` resolves once the last transaction has ended.
 */
export function readInTransactions(reader: Database, sql: string, holdMs: number, gapMs = 0): { stop(): Promise<void> } {
  let reading = true;
  const reads = (async () => {
    while (reading) {
      reader.exec('BEGIN');
      reader.query(sql).get();
      await Bun.sleep(holdMs);
      reader.exec('COMMIT');
      if (gapMs > 0) await Bun.sleep(gapMs);
    }
  })();
  return {
    async stop() {
      reading = false;
      await reads;
    },
  };
}
