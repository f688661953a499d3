import { and, eq, sql } from 'drizzle-orm';
import type { AppDatabase, Db } from './db/index.ts';
import { catalogSyncs, storeEvents, stores } from './db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { writeTransaction } from './write-transaction.ts';
import type { StoreHoldings } from '../../stores/removal.ts';
import { HOLDINGS_SQL, STORE_DELETES } from '../store-holdings.ts';
import type { StoreRecords } from '../stores.ts';
import type { Synchronous } from '../synchronous.ts';
import { sqliteJobRecordsSync } from './jobs.ts';
import { promised } from './promised.ts';

/** The store being updated has its creation-ping window open at `at`: opened at or before it (a clock set back before the opening closes it), closing after it. */
const pingWindowOpen = (at: number) => sql`EXISTS (SELECT 1 FROM hook_ping_windows w WHERE w.store_id = stores.id AND w.opened_at <= ${at} AND ${at} < w.closes_at)`;

/** Records lifecycle and privacy events against a store (`store_events`), all at `at`. */
export const storeEventWriter =
  (db: Db) =>
  (storeId: string, kinds: string[], at: number): void => {
    if (kinds.length > 0) db.insert(storeEvents).values(kinds.map((kind) => ({ id: newId(), storeId, kind, occurredAt: at }))).run();
  };

/** Stores on SQLite, answered synchronously: the webhook group commit deactivates a store inside its own transaction. */
export function sqliteStoreRecordsSync(database: Pick<AppDatabase, 'db' | 'sqlite'>): Synchronous<StoreRecords> {
  const { db, sqlite } = database;
  // Prepared once: every webhook delivery whose store is not cached looks it up.
  const byIdStatement = db.select().from(stores).where(eq(stores.id, sql.placeholder('id'))).prepare();
  const byRefStatement = db
    .select()
    .from(stores)
    .where(and(eq(stores.platform, sql.placeholder('platform')), eq(stores.platformRef, sql.placeholder('ref'))))
    .prepare();
  const holdingsQuery = sqlite.query<StoreHoldings, [string]>(HOLDINGS_SQL);
  const openPingWindowStatement = sqlite.query<never, [number, number, string]>(
    'INSERT INTO hook_ping_windows (store_id, opened_at, closes_at) SELECT id, ?, ? FROM stores WHERE id = ? ON CONFLICT (store_id) DO UPDATE SET opened_at = excluded.opened_at, closes_at = excluded.closes_at',
  );
  const deletes = STORE_DELETES.map((statement) => sqlite.query<never, [string]>(statement));
  const holdings = (storeId: string): StoreHoldings => ({ ...holdingsQuery.get(storeId)! });
  const jobs = sqliteJobRecordsSync(database);
  const recordEvents = storeEventWriter(db);
  /** Moves `updated_at` to `at`, or 1 ms past the previous one when that is not earlier (it is part of the signals' version stamp). */
  const movedOn = (at: number) => sql`max(${at}, ${stores.updatedAt} + 1)`;

  const records: Synchronous<StoreRecords> = {
    byId: (id) => byIdStatement.get({ id }) ?? null,
    byRef: (platform, ref) => byRefStatement.get({ platform, ref }) ?? null,
    list: () => db.select().from(stores).orderBy(stores.createdAt, stores.id).all(),
    add: writeTransaction(sqlite, (store, connection) => {
      const row = db.insert(stores).values(store).onConflictDoNothing().returning().get() ?? null;
      if (row && connection) jobs.enqueue(connection);
      return row;
    }),

    saveCredentials: writeTransaction(sqlite, (id, saved, at, connection) => {
      const conflict = db.select({ id: stores.id }).from(stores).where(and(eq(stores.platform, sql`(SELECT platform FROM stores WHERE id = ${id})`), eq(stores.platformRef, saved.platformRef))).get();
      if (conflict && conflict.id !== id) return 'ref_taken';
      const row =
        db
          .update(stores)
          .set({ ...saved, hookError: null, hookTopics: [], status: 'active', deactivatedAt: null, signalsWithdrawnAt: null, disconnectedAt: null, updatedAt: at })
          .where(eq(stores.id, id))
          .returning()
          .get() ?? null;
      if (row && connection) jobs.enqueue(connection);
      return row;
    }),

    sealedValues: () =>
      db
        .select({ id: stores.id, credentials: stores.credentials, webhookSecret: stores.webhookSecret })
        .from(stores)
        .where(sql`${stores.credentials} NOT LIKE 'plain:%' OR ${stores.webhookSecret} NOT LIKE 'plain:%'`)
        .orderBy(stores.id)
        .all(),

    setHooks: (id, hooks, at) =>
      db
        .update(stores)
        .set({ ...hooks, ...(at === null ? {} : { updatedAt: at }) })
        .where(eq(stores.id, id))
        .returning()
        .get() ?? null,

    openPingWindow(id, openedAt, closesAt) {
      openPingWindowStatement.run(openedAt, closesAt, id);
    },

    confirmPing: (id, at) => db.update(stores).set({ hooksConfirmedAt: at }).where(and(eq(stores.id, id), pingWindowOpen(at))).returning({ id: stores.id }).all().length === 1,

    setCurrency: (id, currency, at) => db.update(stores).set({ currency, updatedAt: at }).where(eq(stores.id, id)).returning().get() ?? null,

    saveSettings: (id, settings, at) => db.update(stores).set({ settings, updatedAt: movedOn(at) }).where(eq(stores.id, id)).returning().get() ?? null,

    disconnect: writeTransaction(sqlite, (id: string, at: number) => {
      const before = byIdStatement.get({ id });
      if (!before) return null;
      const row = db
        .update(stores)
        .set({ status: 'inactive', deactivatedAt: before.deactivatedAt ?? at, disconnectedAt: before.disconnectedAt ?? at, signalsWithdrawnAt: before.signalsWithdrawnAt ?? at, updatedAt: movedOn(at) })
        .where(eq(stores.id, id))
        .returning()
        .get()!;
      recordEvents(id, [...(before.disconnectedAt === null ? ['disconnected'] : []), ...(before.signalsWithdrawnAt === null ? ['signals_withdrawn'] : [])], at);
      return row;
    }),

    deactivate: writeTransaction(sqlite, (id: string, at: number) => {
      db.update(stores).set({ status: 'inactive', deactivatedAt: at, signalsWithdrawnAt: at, updatedAt: at }).where(eq(stores.id, id)).run();
      recordEvents(id, ['app_uninstalled', 'signals_withdrawn'], at);
    }),

    stop: writeTransaction(sqlite, (id: string, reason: string, at: number) => {
      const store = byIdStatement.get({ id });
      if (!store) return null;
      records.disconnect(id, at);
      db.update(catalogSyncs).set({ status: 'failed', error: reason, finishedAt: at }).where(and(eq(catalogSyncs.storeId, id), eq(catalogSyncs.status, 'running'))).run();
      return { store, dropped: jobs.dropUnfinished(id, null) };
    }),

    holdings,

    removeAll: writeTransaction(sqlite, (id: string) => {
      const removed = holdings(id);
      for (const statement of deletes) statement.run(id);
      return removed;
    }),

    finishDisconnect: writeTransaction(sqlite, (id: string, hooks: Parameters<StoreRecords['finishDisconnect']>[1], at: number) => {
      if (hooks) records.setHooks(id, hooks, at);
      return { kept: holdings(id), dropped: jobs.dropUnfinished(id, null) };
    }),
  };
  return records;
}

export const sqliteStoreRecords = (database: Pick<AppDatabase, 'db' | 'sqlite'>): StoreRecords => promised<StoreRecords>(sqliteStoreRecordsSync(database));
