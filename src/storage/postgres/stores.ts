import { and, eq, sql } from 'drizzle-orm';
import { catalogSyncs, storeEvents, stores } from './db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import type { StoreHoldings } from '../../stores/removal.ts';
import { HOLDINGS_SQL, STORE_DELETES } from '../store-holdings.ts';
import type { StoreRecords } from '../stores.ts';
import type { PostgresClient, PostgresQueries } from './client.ts';
import { sqlStateOf, valuesKeptOut } from './errors.ts';
import { dropUnfinishedJobs, insertJob } from './jobs.ts';

/** The store being updated has its creation-ping window open at `at`: opened at or before it (a clock set back before the opening closes it), closing after it. */
const pingWindowOpen = (at: number) => sql`EXISTS (SELECT 1 FROM hook_ping_windows w WHERE w.store_id = stores.id AND w.opened_at <= ${at} AND ${at} < w.closes_at)`;

/** A unique key already taken (SQLSTATE unique_violation). */
const UNIQUE_VIOLATION = '23505';

/** Moves `updated_at` to `at`, or 1 ms past the previous one when that is not earlier (it is part of the signals' version stamp). */
const movedOn = (at: number) => sql`greatest(${at}::bigint, ${stores.updatedAt} + 1)`;

/** Plain SQL whose `$1` is the store's id (store-holdings.ts), as a statement with the id bound at each place. */
const withStoreId = (text: string, id: string) => sql.join(text.split('$1').map((part) => sql.raw(part)), sql`${id}`);

/** Records lifecycle and privacy events against a store (`store_events`), all at `at`, on `db` (a transaction they are part of). */
export async function recordStoreEvents(db: PostgresQueries, storeId: string, kinds: string[], at: number): Promise<void> {
  if (kinds.length > 0) await db.insert(storeEvents).values(kinds.map((kind) => ({ id: newId(), storeId, kind, occurredAt: at })));
}

/** `app/uninstalled` on `db`: inactive, its signals withdrawn, both recorded as store events. */
export async function deactivateStore(db: PostgresQueries, id: string, at: number): Promise<void> {
  await db.update(stores).set({ status: 'inactive', deactivatedAt: at, signalsWithdrawnAt: at, updatedAt: at }).where(eq(stores.id, id));
  await recordStoreEvents(db, id, ['app_uninstalled', 'signals_withdrawn'], at);
}

/** Stores on PostgreSQL (the same contract as src/storage/sqlite/stores.ts); no failure carries a value it was given (errors.ts). */
export function postgresStoreRecords({ db }: Pick<PostgresClient, 'db'>): StoreRecords {
  async function holdings(tx: PostgresQueries, id: string): Promise<StoreHoldings> {
    const [counts] = await tx.execute<Record<keyof StoreHoldings, string>>(withStoreId(HOLDINGS_SQL, id));
    // count(*) is a bigint, which the client answers as text.
    return Object.fromEntries(Object.entries(counts!).map(([kind, n]) => [kind, Number(n)])) as unknown as StoreHoldings;
  }
  async function disconnect(tx: PostgresQueries, id: string, at: number) {
    const [before] = await tx.select().from(stores).where(eq(stores.id, id)).for('update');
    if (!before) return null;
    const [row] = await tx
      .update(stores)
      .set({ status: 'inactive', deactivatedAt: before.deactivatedAt ?? at, disconnectedAt: before.disconnectedAt ?? at, signalsWithdrawnAt: before.signalsWithdrawnAt ?? at, updatedAt: movedOn(at) })
      .where(eq(stores.id, id))
      .returning();
    await recordStoreEvents(tx, id, [...(before.disconnectedAt === null ? ['disconnected'] : []), ...(before.signalsWithdrawnAt === null ? ['signals_withdrawn'] : [])], at);
    return { before, row: row! };
  }

  return valuesKeptOut<StoreRecords>('stores', {
    async byId(id) {
      const [row] = await db.select().from(stores).where(eq(stores.id, id));
      return row ?? null;
    },

    async byRef(platform, ref) {
      const [row] = await db.select().from(stores).where(and(eq(stores.platform, platform), eq(stores.platformRef, ref)));
      return row ?? null;
    },

    list: () => db.select().from(stores).orderBy(stores.createdAt, stores.id),

    add: (store, connection) =>
      db.transaction(async (tx) => {
        const [row] = await tx.insert(stores).values(store).onConflictDoNothing().returning();
        if (row && connection) await insertJob(tx, connection);
        return row ?? null;
      }),

    async openPingWindow(id, openedAt, closesAt) {
      await db.execute(
        sql`INSERT INTO hook_ping_windows (store_id, opened_at, closes_at) SELECT id, ${openedAt}::bigint, ${closesAt}::bigint FROM stores WHERE id = ${id} ON CONFLICT (store_id) DO UPDATE SET opened_at = excluded.opened_at, closes_at = excluded.closes_at`,
      );
    },

    confirmPing: async (id, at) => (await db.update(stores).set({ hooksConfirmedAt: at }).where(and(eq(stores.id, id), pingWindowOpen(at))).returning({ id: stores.id })).length === 1,

    async saveCredentials(id, saved, at, connection) {
      try {
        return await db.transaction(async (tx) => {
          const [row] = await tx
            .update(stores)
            .set({ ...saved, hookError: null, hookTopics: [], status: 'active', deactivatedAt: null, signalsWithdrawnAt: null, disconnectedAt: null, updatedAt: at })
            .where(eq(stores.id, id))
            .returning();
          if (row && connection) await insertJob(tx, connection);
          return row ?? null;
        });
      } catch (error) {
        // The platform reference is unique per platform: another store has it.
        if (sqlStateOf(error) === UNIQUE_VIOLATION) return 'ref_taken';
        throw error;
      }
    },

    sealedValues: () =>
      db
        .select({ id: stores.id, credentials: stores.credentials, webhookSecret: stores.webhookSecret })
        .from(stores)
        .where(sql`${stores.credentials} NOT LIKE 'plain:%' OR ${stores.webhookSecret} NOT LIKE 'plain:%'`)
        .orderBy(stores.id),

    async setHooks(id, hooks, at) {
      const [row] = await db
        .update(stores)
        .set({ ...hooks, ...(at === null ? {} : { updatedAt: at }) })
        .where(eq(stores.id, id))
        .returning();
      return row ?? null;
    },

    async setCurrency(id, currency, at) {
      const [row] = await db.update(stores).set({ currency, updatedAt: at }).where(eq(stores.id, id)).returning();
      return row ?? null;
    },

    async saveSettings(id, settings, at) {
      const [row] = await db.update(stores).set({ settings, updatedAt: movedOn(at) }).where(eq(stores.id, id)).returning();
      return row ?? null;
    },

    disconnect: (id, at) => db.transaction(async (tx) => (await disconnect(tx, id, at))?.row ?? null),

    deactivate: (id, at) => db.transaction((tx) => deactivateStore(tx, id, at)),

    stop: (id, reason, at) =>
      db.transaction(async (tx) => {
        const disconnected = await disconnect(tx, id, at);
        if (!disconnected) return null;
        await tx.update(catalogSyncs).set({ status: 'failed', error: reason, finishedAt: at }).where(and(eq(catalogSyncs.storeId, id), eq(catalogSyncs.status, 'running')));
        return { store: disconnected.before, dropped: await dropUnfinishedJobs(tx, id, null) };
      }),

    holdings: (id) => holdings(db, id),

    removeAll: (id) =>
      db.transaction(async (tx) => {
        const removed = await holdings(tx, id);
        for (const statement of STORE_DELETES) await tx.execute(withStoreId(statement, id));
        return removed;
      }),

    finishDisconnect: (id, hooks, at) =>
      db.transaction(async (tx) => {
        if (hooks) await tx.update(stores).set({ ...hooks, updatedAt: at }).where(eq(stores.id, id));
        return { kept: await holdings(tx, id), dropped: await dropUnfinishedJobs(tx, id, null) };
      }),
  });
}
