import { and, eq, sql } from 'drizzle-orm';
import { catalogSyncs, stores } from './db/schema/index.ts';
import type { UnlistedChunk } from '../../catalog/sweep.ts';
import type { PassRef } from '../../sync/state.ts';
import { queuedJob } from '../../webhooks/queue.ts';
import type { SweepTarget, SyncStateRecords } from '../stores.ts';
import { entryWrites, productWrites } from './catalog.ts';
import type { PostgresClient, PostgresQueries } from './client.ts';
import { valuesKeptOut } from './errors.ts';
import { dropUnfinishedJobs, enqueueOnceIn } from './jobs.ts';

const ofPass = (pass: PassRef) => and(eq(catalogSyncs.storeId, pass.storeId), eq(catalogSyncs.kind, pass.kind), eq(catalogSyncs.runId, pass.runId));
const fresh = { status: 'running' as const, cursor: null, pageSpan: null, pages: 0, items: 0, sweptThrough: null, removed: 0, error: null, finishedAt: null };

/**
 * Catalogue sync passes on PostgreSQL (the same contract as src/storage/sqlite/sync.ts). A step's
 * transaction locks its pass's row (`FOR UPDATE`): a newer trigger that begins the kind again waits
 * for the step in hand, and a step that waited finds its pass superseded. A sweep's step locks the
 * products it finds unlisted, so one a webhook writes meanwhile is either written first (and read
 * as listed) or waits for the step: nothing a webhook wrote is removed, as on SQLite, whose write
 * transaction holds the whole database.
 */
export function postgresSyncStateRecords({ db }: Pick<PostgresClient, 'db'>): SyncStateRecords {
  /** Whether `pass` is the running pass of its kind, its row locked to the end of `tx`. */
  async function isCurrent(tx: PostgresQueries, pass: PassRef): Promise<boolean> {
    const [row] = await tx
      .select({ runId: catalogSyncs.runId, status: catalogSyncs.status })
      .from(catalogSyncs)
      .where(and(eq(catalogSyncs.storeId, pass.storeId), eq(catalogSyncs.kind, pass.kind)))
      .for('update');
    return row?.runId === pass.runId && row.status === 'running';
  }
  const fail = async (tx: PostgresQueries, pass: PassRef, error: string, at: number) => {
    await tx.update(catalogSyncs).set({ status: 'failed', error, finishedAt: at, failedPasses: sql`${catalogSyncs.failedPasses} + 1` }).where(ofPass(pass));
  };
  const of = (tx: PostgresQueries, storeId: string) => tx.select().from(catalogSyncs).where(eq(catalogSyncs.storeId, storeId));
  async function unlisted(tx: PostgresQueries, pass: PassRef, passStartedAt: number, target: SweepTarget, after: string, limit: number): Promise<UnlistedChunk> {
    return target.kind === 'products' ? productWrites(tx, { lockUnlisted: true }).unlistedAfter(pass.storeId, passStartedAt, after, limit) : entryWrites(tx).unlistedAfter(pass.storeId, target.type, passStartedAt, after, limit);
  }
  /** Removes `gone` (as of `at`) on `tx`; how many were removed. */
  async function remove(tx: PostgresQueries, pass: PassRef, target: SweepTarget, gone: string[], at: number): Promise<number> {
    if (target.kind === 'entries') return entryWrites(tx).remove(pass.storeId, target.type, gone);
    let removed = 0;
    for (const productId of gone) if ((await productWrites(tx).remove(pass.storeId, productId, at, true, at)) === 'removed') removed++;
    return removed;
  }
  /** Inside `tx`: `gone` removed and the sweep's position saved (null: the pass is complete); false when the pass was superseded meanwhile. */
  async function swept(tx: PostgresQueries, pass: PassRef, target: SweepTarget, gone: string[], through: string | null, at: number): Promise<boolean> {
    if (!(await isCurrent(tx, pass))) return false;
    const removed = await remove(tx, pass, target, gone, at);
    await tx
      .update(catalogSyncs)
      .set({ removed: sql`${catalogSyncs.removed} + ${removed}`, error: null, ...(through === null ? { sweptThrough: null, status: 'done' as const, finishedAt: at, lastCompletedAt: at, failedPasses: 0 } : { sweptThrough: through }) })
      .where(ofPass(pass));
    return true;
  }
  const setPaused = async (tx: PostgresQueries, storeId: string, pausedAt: number | null) => {
    const [row] = await tx
      .update(stores)
      .set({ syncPausedAt: pausedAt === null ? null : sql`coalesce(${stores.syncPausedAt}, ${pausedAt}::bigint)` })
      .where(eq(stores.id, storeId))
      .returning();
    return row ?? null;
  };

  return valuesKeptOut<SyncStateRecords>('sync', {
    async get(storeId, kind) {
      const [row] = await db.select().from(catalogSyncs).where(and(eq(catalogSyncs.storeId, storeId), eq(catalogSyncs.kind, kind)));
      return row ?? null;
    },

    of: (storeId) => of(db, storeId),

    async running(storeId) {
      const [row] = await db.select({ kind: catalogSyncs.kind }).from(catalogSyncs).where(and(eq(catalogSyncs.storeId, storeId), eq(catalogSyncs.status, 'running'))).limit(1);
      return row !== undefined;
    },

    begin: (storeId, trigger, passes, at) =>
      db.transaction(async (tx) => {
        for (const pass of passes) {
          await tx
            .insert(catalogSyncs)
            .values({ storeId, kind: pass.kind, runId: pass.runId, trigger, startedAt: at, ...fresh })
            .onConflictDoUpdate({ target: [catalogSyncs.storeId, catalogSyncs.kind], set: { runId: pass.runId, trigger, startedAt: at, ...fresh } });
          if (pass.failed !== null) await fail(tx, { storeId, ...pass }, pass.failed, at);
          else if (pass.job !== null) await enqueueOnceIn(tx, queuedJob(pass.job, storeId, {}, at));
        }
      }),

    async noteError(pass, error) {
      await db.update(catalogSyncs).set({ error }).where(ofPass(pass));
    },

    fail: (pass, error, at) => fail(db, pass, error, at),

    pause: (storeId, jobKinds, at) =>
      db.transaction(async (tx) => {
        const row = await setPaused(tx, storeId, at);
        if (row) await dropUnfinishedJobs(tx, storeId, jobKinds);
        return row;
      }),

    resume: (storeId, jobKinds, at) =>
      db.transaction(async (tx) => {
        const row = await setPaused(tx, storeId, null);
        if (!row) return null;
        for (const pass of await of(tx, storeId)) if (pass.status === 'running') await enqueueOnceIn(tx, queuedJob(jobKinds[pass.kind], storeId, {}, at));
        return row;
      }),

    applyPage: (pass, passStartedAt, write, advance, at) =>
      db.transaction(async (tx) => {
        if (!(await isCurrent(tx, pass))) return false;
        if (write.kind === 'entries') await entryWrites(tx).upsert(write.entries);
        else {
          const products = productWrites(tx);
          for (const { product, description } of write.products) await products.upsert(pass.storeId, write.currency, product, description, at);
          await products.markListed(pass.storeId, write.products.map(({ product }) => product.productId), passStartedAt);
        }
        if (advance) {
          await tx
            .update(catalogSyncs)
            .set({ cursor: advance.next, pageSpan: advance.pageSpan, pages: sql`${catalogSyncs.pages} + 1`, items: sql`${catalogSyncs.items} + ${advance.items}`, error: null, ...(advance.next === null ? { sweptThrough: '' } : {}) })
            .where(ofPass(pass));
        }
        return true;
      }),

    sweepStep: (pass, passStartedAt, target, after, limit, removeUnlisted, at) =>
      db.transaction(async (tx) => {
        const chunk = await unlisted(tx, pass, passStartedAt, target, after, limit);
        if (!removeUnlisted && chunk.unlisted.length > 0) return (await isCurrent(tx, pass)) ? chunk : null;
        return (await swept(tx, pass, target, chunk.unlisted, chunk.through, at)) ? chunk : null;
      }),

    sweptThrough: (pass, target, gone, through, at) => db.transaction((tx) => swept(tx, pass, target, gone, through, at)),
  });
}
