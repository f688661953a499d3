import type { SQLQueryBindings } from 'bun:sqlite';
import type { AppDatabase } from './db/index.ts';
import type { DiscoveryRecords, SignalRecords } from '../signals.ts';
import { candidateOf, discoveryStoreOf, listedProductOf, servedStoreOf, signalQueries } from '../signal-queries.ts';
import type { Synchronous } from '../synchronous.ts';

// SQLite orders text by its bytes: no collation to name.
const QUERIES = signalQueries('');

/** The signals' reads on SQLite, answered synchronously: the signal GETs answer without a promise (test/hot-paths.test.ts). */
export function sqliteSignalRecordsSync({ sqlite }: Pick<AppDatabase, 'sqlite'>): Synchronous<SignalRecords> {
  const candidates = sqlite.query<Record<string, unknown>, SQLQueryBindings[]>(QUERIES.candidates);
  return { candidates: (platform, productId, storeId) => candidates.all(productId, platform, storeId).map(candidateOf) };
}

/** The discovery files' reads on SQLite, answered synchronously (prepared once). */
export function sqliteDiscoveryRecordsSync({ sqlite }: Pick<AppDatabase, 'sqlite'>): Synchronous<DiscoveryRecords> {
  const store = sqlite.query<Record<string, unknown>, [string]>(QUERIES.store);
  const storeStamp = sqlite.query<{ stamp: string }, [string]>(QUERIES.storeStamp);
  const listed = sqlite.query<Record<string, unknown>, [string]>(QUERIES.listed);
  const servedStores = sqlite.query<Record<string, unknown>, []>(QUERIES.servedStores);
  return {
    store(storeId) {
      const row = store.get(storeId);
      return row === null ? null : discoveryStoreOf(row);
    },
    storeStamp: (storeId) => storeStamp.get(storeId)!.stamp,
    listed: (storeId) => listed.all(storeId).map(listedProductOf),
    servedStores: () => servedStores.all().map(servedStoreOf),
  };
}
