import type { DiscoveryRecords, SignalRecords } from '../signals.ts';
import { candidateOf, discoveryStoreOf, listedProductOf, servedStoreOf, signalQueries } from '../signal-queries.ts';
import type { PostgresClient } from './client.ts';

// Platform ids in byte order, as on SQLite, whatever the database's collation.
const QUERIES = signalQueries(' COLLATE "C"');

/** The signals' reads on PostgreSQL (the same contract as src/storage/sqlite/signals.ts). */
export function postgresSignalRecords({ sql }: Pick<PostgresClient, 'sql'>): SignalRecords {
  return { candidates: async (platform, productId, storeId) => (await sql.unsafe(QUERIES.candidates, [productId, platform, storeId])).map(candidateOf) };
}

/** The discovery files' reads on PostgreSQL (the same contract as src/storage/sqlite/signals.ts). */
export function postgresDiscoveryRecords({ sql }: Pick<PostgresClient, 'sql'>): DiscoveryRecords {
  return {
    async store(storeId) {
      const [row] = await sql.unsafe(QUERIES.store, [storeId]);
      return row === undefined ? null : discoveryStoreOf(row);
    },
    storeStamp: async (storeId) => String((await sql.unsafe(QUERIES.storeStamp, [storeId]))[0].stamp),
    listed: async (storeId) => (await sql.unsafe(QUERIES.listed, [storeId])).map(listedProductOf),
    servedStores: async () => (await sql.unsafe(QUERIES.servedStores)).map(servedStoreOf),
  };
}
