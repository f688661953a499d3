import type { AuthRecords } from './auth.ts';
import type { ChangeFeed } from './changes.ts';
import type { CatalogEntryRecords, EnrichmentRecords, FaqRecords, ProductRecords } from './content.ts';
import type { DatabaseHealth } from './health.ts';
import type { Immediate } from './synchronous.ts';
import type { RetentionRecords } from './retention.ts';
import type { DeliveryRecords, JobRecords, StoreRecords, SyncStateRecords } from './stores.ts';
import type { DiscoveryRecords, SignalRecords } from './signals.ts';
import type { ScanReadRecords, ScanStorage, ScanWriteRecords, WritesPause } from './scans.ts';

/** Which engine holds svc's state. */
export type Engine = 'sqlite' | 'postgres';

/**
 * Everything svc keeps, behind one seam (issue 30): each domain's records and the change feed that
 * the caches in front of them watch, with one implementation per engine (src/storage/sqlite/index.ts,
 * src/storage/postgres/index.ts).
 */
export interface Storage {
  engine: Engine;
  changes: ChangeFeed;
  auth: AuthRecords;
  faqs: FaqRecords;
  enrichments: EnrichmentRecords;
  catalogEntries: CatalogEntryRecords;
  products: ProductRecords;
  stores: StoreRecords;
  syncs: SyncStateRecords;
  jobs: JobRecords;
  deliveries: DeliveryRecords;
  retention: RetentionRecords;
  scans: ScanStorage;
  /** The reads of the hot public GETs, answered at once where the engine can (SQLite), so those GETs answer without a promise there. */
  hot: HotReads;
  health: DatabaseHealth;
}

/** What the hot public GETs read beyond their caches (the widget's FAQs, the signals). */
export interface HotReads {
  faqs: Pick<Immediate<FaqRecords>, 'approved'>;
  products: Pick<Immediate<ProductRecords>, 'refsOf' | 'variantsOf'>;
  catalogEntries: Pick<Immediate<CatalogEntryRecords>, 'refsOf'>;
  signals: Immediate<SignalRecords>;
  discovery: Immediate<DiscoveryRecords>;
  /** The badge (a hot GET) and the rollup backlog (/metrics, /healthz, the dashboard). */
  scans: Immediate<ScanReadRecords>;
  /** What the telemetry writer commits its groups to (SQLite: within the turn), and the pause they wait out where the engine has one. */
  scanWrites: Immediate<ScanWriteRecords> & { pause?: WritesPause };
}
