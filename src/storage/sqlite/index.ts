import type { AppDatabase } from './db/index.ts';
import type { Storage } from '../index.ts';
import { sqliteAuthRecords } from './auth.ts';
import { sqliteCatalogEntryRecords, sqliteCatalogEntryRecordsSync, sqliteProductRecords, sqliteProductRecordsSync } from './catalog.ts';
import { sqliteChangeFeed } from './changes.ts';
import { sqliteDatabaseHealth } from './health.ts';
import { sqliteEnrichmentRecords, sqliteFaqRecords, sqliteFaqRecordsSync } from './content.ts';
import { sqliteRetentionRecords } from './retention.ts';
import { sqliteDiscoveryRecordsSync, sqliteSignalRecordsSync } from './signals.ts';
import { sqliteDeliveryRecords } from './deliveries.ts';
import { sqliteJobRecords } from './jobs.ts';
import { sqliteStoreRecords } from './stores.ts';
import { sqliteSyncStateRecords } from './sync.ts';
import { sqliteScanReadRecordsSync, sqliteScanStorage, sqliteScanWriteRecordsSync } from './scans.ts';

/** The SQLite engine's storage, on the open database (its change feed sees every process's commits by itself). */
export function sqliteStorage(database: AppDatabase): Storage {
  return {
    engine: 'sqlite',
    changes: sqliteChangeFeed(database),
    auth: sqliteAuthRecords(database),
    faqs: sqliteFaqRecords(database),
    enrichments: sqliteEnrichmentRecords(database),
    catalogEntries: sqliteCatalogEntryRecords(database),
    products: sqliteProductRecords(database),
    health: sqliteDatabaseHealth(database),
    // bun:sqlite answers synchronously.
    hot: {
      faqs: sqliteFaqRecordsSync(database),
      products: sqliteProductRecordsSync(database),
      catalogEntries: sqliteCatalogEntryRecordsSync(database),
      signals: sqliteSignalRecordsSync(database),
      discovery: sqliteDiscoveryRecordsSync(database),
      scans: sqliteScanReadRecordsSync(database),
      scanWrites: sqliteScanWriteRecordsSync(database),
    },
    stores: sqliteStoreRecords(database),
    syncs: sqliteSyncStateRecords(database),
    jobs: sqliteJobRecords(database),
    deliveries: sqliteDeliveryRecords(database),
    retention: sqliteRetentionRecords(database),
    scans: sqliteScanStorage(database),
  };
}
