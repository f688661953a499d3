import type { AuthRecords } from '../auth.ts';
import type { Storage } from '../index.ts';
import { postgresAuthRecords } from './auth.ts';
import { postgresCatalogEntryRecords, postgresProductRecords } from './catalog.ts';
import { postgresChangeFeed, type PostgresChangeFeed } from './changes.ts';
import type { PostgresClient } from './client.ts';
import { postgresDatabaseHealth } from './health.ts';
import { postgresScanStorage } from './scans.ts';
import { postgresEnrichmentRecords, postgresFaqRecords } from './content.ts';
import { postgresRetentionRecords } from './retention.ts';
import { postgresDiscoveryRecords, postgresSignalRecords } from './signals.ts';
import { postgresDeliveryRecords } from './deliveries.ts';
import { postgresJobRecords } from './jobs.ts';
import { postgresStoreRecords } from './stores.ts';
import { postgresSyncStateRecords } from './sync.ts';
import { STORE_DELETES } from '../store-holdings.ts';
import type { DeliveryEffect, DeliveryToCommit } from '../../webhooks/deliveries.ts';

/** Per method: the tables it may write, or a function of its arguments that names them; null for a read. */
type TablesWritten<Records> = { [Method in keyof Records]: readonly string[] | (Records[Method] extends (...args: infer Args) => unknown ? (...args: Args) => readonly string[] : never) | null };

/**
 * `records` whose writing methods, once their commit has answered, move the change feed's stamps of
 * the tables they wrote: the feed's notification arrives a few ms later, and a cache of this
 * process must not serve the old row in between (a key revoked here, refused by the next request
 * here). The map names every method (a new one does not compile until it is classified).
 */
function announcingWrites<Records extends object>(records: Records, feed: PostgresChangeFeed, written: TablesWritten<Records>): Records {
  const announced = { ...records } as Record<string, unknown>;
  for (const [name, tables] of Object.entries(written) as [string, readonly string[] | ((...args: unknown[]) => readonly string[]) | null][]) {
    if (tables === null) continue;
    const method = (records as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
    announced[name] = async (...args: unknown[]) => {
      try {
        return await method(...args);
      } finally {
        // Also after a failure: whether it committed may be unknown (the connection broke after COMMIT).
        feed.wrote(typeof tables === 'function' ? tables(...args) : tables);
      }
    };
  }
  return announced as Records;
}

const FAQ_TABLES = ['faq_entries', 'faq_entity_changes'];
const PRODUCT_TABLES = ['products', 'product_variants'];
const STORE_TABLES = ['stores', 'store_events'];
/** Every table a store's removal deletes from (store-holdings.ts), and the console sessions that go with its keys. */
const REMOVED_WITH_A_STORE = [...new Set(STORE_DELETES.map((statement) => /^DELETE FROM (\w+)/.exec(statement)![1]!)), 'console_sessions'];
/** What a sync page or sweep step writes with its pass's bookkeeping: products (with their variants), categories and pages. */
const SYNC_WRITE_TABLES = ['catalog_syncs', ...PRODUCT_TABLES, 'catalog_entries'];
/**
 * What each delivery's effect may write beside the log. Only these are announced: a group that
 * announced every table a delivery may write would empty the store registry's cache (and wake the
 * job runner) at every group of product updates.
 */
const DELIVERY_TABLES: Record<DeliveryEffect['kind'], readonly string[]> = {
  upsert: PRODUCT_TABLES,
  remove: PRODUCT_TABLES,
  enqueue: ['jobs'],
  deactivate: STORE_TABLES,
  privacy: ['store_events'],
  order: ['order_signals'],
  ignore: [],
  refuse: [],
};
/** The tables a delivery group may write: its log, and what its deliveries' effects write. */
const deliveryGroupTables = (group: readonly DeliveryToCommit[]): string[] => [...new Set(['webhook_deliveries', ...group.flatMap((delivery) => DELIVERY_TABLES[delivery.effect.kind])])];

/** The PostgreSQL engine's storage on `client`, with its change feed (listening once `changes.ready` resolves). */
export function postgresStorage(client: PostgresClient): Storage & { changes: PostgresChangeFeed } {
  const changes = postgresChangeFeed(client);
  const auth: AuthRecords = postgresAuthRecords(client);
  const storage: Omit<Storage, 'hot'> & { changes: PostgresChangeFeed } = {
    engine: 'postgres',
    changes,
    health: postgresDatabaseHealth(client),
    auth: {
      keys: announcingWrites(auth.keys, changes, { add: ['api_keys'], byHash: null, byId: null, revoke: ['api_keys'], list: null }),
      keyUsage: announcingWrites(auth.keyUsage, changes, { noteUse: ['api_key_usage'] }),
      leads: announcingWrites(auth.leads, changes, {
        addFirst: ['leads'],
        addSignUp: ['leads'],
        get: null,
        byTokenHash: null,
        replaceToken: ['leads'],
        verify: ['leads'],
        revokeToken: ['leads'],
        list: null,
        noteFirstScan: ['leads'],
      }),
      sessions: announcingWrites(auth.sessions, changes, { add: ['console_sessions'], byHash: null, touch: ['console_sessions'], remove: ['console_sessions'], sweep: ['console_sessions'] }),
    },
    faqs: announcingWrites(postgresFaqRecords(client), changes, {
      byId: null,
      create: FAQ_TABLES,
      update: FAQ_TABLES,
      remove: FAQ_TABLES,
      listByEntity: null,
      listByStore: null,
      approved: null,
    }),
    enrichments: announcingWrites(postgresEnrichmentRecords(client), changes, { byProductRow: null, put: ['product_enrichments'], enrichedAt: null, remove: ['product_enrichments'] }),
    catalogEntries: announcingWrites(postgresCatalogEntryRecords(client), changes, {
      upsert: ['catalog_entries'],
      unlistedAfter: null,
      remove: ['catalog_entries'],
      refsOf: null,
      namedBy: null,
      list: null,
    }),
    products: announcingWrites(postgresProductRecords(client), changes, {
      upsert: PRODUCT_TABLES,
      remove: PRODUCT_TABLES,
      markListed: ['products'],
      unlistedAfter: null,
      get: null,
      refsOf: null,
      namedBy: null,
      list: null,
      variantsOf: null,
    }),
    stores: announcingWrites(postgresStoreRecords(client), changes, {
      byId: null,
      byRef: null,
      list: null,
      add: ['stores', 'jobs'],
      saveCredentials: ['stores', 'jobs'],
      sealedValues: null,
      openPingWindow: ['hook_ping_windows'],
      confirmPing: ['stores'],
      setHooks: ['stores'],
      setCurrency: ['stores'],
      saveSettings: ['stores'],
      disconnect: STORE_TABLES,
      deactivate: STORE_TABLES,
      stop: [...STORE_TABLES, 'catalog_syncs', 'jobs'],
      holdings: null,
      removeAll: REMOVED_WITH_A_STORE,
      finishDisconnect: ['stores', 'jobs'],
    }),
    syncs: announcingWrites(postgresSyncStateRecords(client), changes, {
      get: null,
      of: null,
      running: null,
      begin: ['catalog_syncs', 'jobs'],
      noteError: ['catalog_syncs'],
      fail: ['catalog_syncs'],
      pause: ['stores', 'jobs'],
      resume: ['stores', 'jobs'],
      applyPage: SYNC_WRITE_TABLES,
      sweepStep: SYNC_WRITE_TABLES,
      sweptThrough: SYNC_WRITE_TABLES,
    }),
    jobs: announcingWrites(postgresJobRecords(client), changes, {
      enqueue: ['jobs'],
      enqueueOnce: ['jobs'],
      claim: ['jobs'],
      requeue: ['jobs'],
      releaseLeases: ['jobs'],
      renewLease: ['jobs'],
      handBack: ['jobs'],
      complete: ['jobs'],
      fail: ['jobs'],
      nextRetry: null,
      hasUnfinished: null,
      dropUnfinished: ['jobs'],
    }),
    deliveries: announcingWrites(postgresDeliveryRecords(client), changes, {
      commitGroup: deliveryGroupTables,
      settle: ['webhook_deliveries'],
      duplicatesOf: null,
      applyRemoval: [...PRODUCT_TABLES, 'webhook_deliveries'],
      refuseRemoval: ['webhook_deliveries'],
    }),
    retention: announcingWrites(postgresRetentionRecords(client), changes, { deleteOldest: ['webhook_deliveries', 'jobs', 'store_events', 'order_signals', 'leads'] }),
    // The scans' records tell the feed of their commits themselves (a group commit, a fold, a retention batch).
    scans: postgresScanStorage(client, changes),
  };
  // Every read is a promise; the hot GETs wait for it.
  return {
    ...storage,
    hot: {
      faqs: storage.faqs,
      products: storage.products,
      catalogEntries: storage.catalogEntries,
      signals: postgresSignalRecords(client),
      discovery: postgresDiscoveryRecords(client),
      scans: storage.scans.reads,
      scanWrites: storage.scans.writes,
    },
  };
}
