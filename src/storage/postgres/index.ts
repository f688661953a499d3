import type { AuthRecords } from '../auth.ts';
import type { Storage } from '../index.ts';
import { postgresAuthRecords } from './auth.ts';
import { postgresCatalogEntryRecords, postgresProductRecords } from './catalog.ts';
import { postgresChangeFeed, type PostgresChangeFeed } from './changes.ts';
import type { PostgresClient } from './client.ts';
import { postgresEnrichmentRecords, postgresFaqRecords } from './content.ts';
import { postgresRetentionRecords } from './retention.ts';

/** For each method of a records object: the tables it writes, or null for a method that only reads. */
type TablesWritten<Records> = { [Method in keyof Records]: readonly string[] | null };

/**
 * `records` whose writing methods, once their commit has answered, move the change feed's stamps of
 * the tables they wrote: the feed's notification arrives a few ms later, and a cache of this
 * process must not serve the old row in between (a key revoked here, refused by the next request
 * here). The map names every method (a new one does not compile until it is classified).
 */
function announcingWrites<Records extends object>(records: Records, feed: PostgresChangeFeed, written: TablesWritten<Records>): Records {
  const announced = { ...records } as Record<string, unknown>;
  for (const [name, tables] of Object.entries(written) as [string, readonly string[] | null][]) {
    if (tables === null) continue;
    const method = (records as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
    announced[name] = async (...args: unknown[]) => {
      try {
        return await method(...args);
      } finally {
        // Also after a failure: whether it committed may be unknown (the connection broke after COMMIT).
        feed.wrote(tables);
      }
    };
  }
  return announced as Records;
}

const FAQ_TABLES = ['faq_entries', 'faq_entity_changes'];
const PRODUCT_TABLES = ['products', 'product_variants'];

/** The PostgreSQL engine's storage on `client`, with its change feed (listening once `changes.ready` resolves). */
export function postgresStorage(client: PostgresClient): Storage & { changes: PostgresChangeFeed } {
  const changes = postgresChangeFeed(client);
  const auth: AuthRecords = postgresAuthRecords(client);
  return {
    engine: 'postgres',
    changes,
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
    retention: announcingWrites(postgresRetentionRecords(client), changes, { deleteOldest: ['webhook_deliveries', 'jobs', 'store_events', 'order_signals', 'leads'] }),
  };
}
