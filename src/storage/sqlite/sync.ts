import { and, eq, sql } from 'drizzle-orm';
import type { AppDatabase } from './db/index.ts';
import { catalogSyncs, stores } from './db/schema/index.ts';
import type { UnlistedChunk } from '../../catalog/sweep.ts';
import { writeTransaction } from './write-transaction.ts';
import type { PassRef } from '../../sync/state.ts';
import { queuedJob } from '../../webhooks/queue.ts';
import type { SweepTarget, SyncStateRecords } from '../stores.ts';
import type { Synchronous } from '../synchronous.ts';
import { sqliteCatalogEntryRecordsSync, sqliteProductRecordsSync } from './catalog.ts';
import { sqliteJobRecordsSync } from './jobs.ts';
import { promised } from './promised.ts';

/** Catalogue sync passes on SQLite, each step's writes in one transaction with its bookkeeping. */
export function sqliteSyncStateRecords(database: Pick<AppDatabase, 'db' | 'sqlite'>): SyncStateRecords {
  const { db, sqlite } = database;
  const products = sqliteProductRecordsSync(database);
  const entries = sqliteCatalogEntryRecordsSync(database);
  const jobs = sqliteJobRecordsSync(database);
  const byStoreAndKind = and(eq(catalogSyncs.storeId, sql.placeholder('storeId')), eq(catalogSyncs.kind, sql.placeholder('kind')));
  // Prepared once, like the two below: read at every step of a pass (building and preparing it each time cost more than the read).
  const passRow = db.select().from(catalogSyncs).where(byStoreAndKind).prepare();
  // A pass's start runs in the turn of the request that triggered it: no statement is built there.
  const fresh = { status: 'running' as const, cursor: null, pageSpan: null, pages: 0, items: 0, sweptThrough: null, removed: 0, error: null, finishedAt: null };
  const beginPass = db
    .insert(catalogSyncs)
    .values({ storeId: sql.placeholder('storeId'), kind: sql.placeholder('kind'), runId: sql.placeholder('runId'), trigger: sql.placeholder('trigger'), startedAt: sql.placeholder('startedAt'), ...fresh })
    .onConflictDoUpdate({
      target: [catalogSyncs.storeId, catalogSyncs.kind],
      set: { runId: sql`excluded.run_id`, trigger: sql`excluded.trigger`, startedAt: sql`excluded.started_at`, ...fresh },
    })
    .prepare();
  // Asked before every write batch of a pass.
  const currentRun = db.select({ runId: catalogSyncs.runId, status: catalogSyncs.status }).from(catalogSyncs).where(byStoreAndKind).prepare();
  const isCurrent = (pass: PassRef) => {
    const row = currentRun.get({ storeId: pass.storeId, kind: pass.kind });
    return row?.runId === pass.runId && row.status === 'running';
  };
  const ofPass = (pass: PassRef) => and(eq(catalogSyncs.storeId, pass.storeId), eq(catalogSyncs.kind, pass.kind), eq(catalogSyncs.runId, pass.runId));
  const fail = (pass: PassRef, error: string, at: number) =>
    db.update(catalogSyncs).set({ status: 'failed', error, finishedAt: at, failedPasses: sql`${catalogSyncs.failedPasses} + 1` }).where(ofPass(pass)).run();
  const of = (storeId: string) => db.select().from(catalogSyncs).where(eq(catalogSyncs.storeId, storeId)).all();

  const unlisted = (pass: PassRef, passStartedAt: number, target: SweepTarget, after: string, limit: number): UnlistedChunk =>
    target.kind === 'products' ? products.unlistedAfter(pass.storeId, passStartedAt, after, limit) : entries.unlistedAfter(pass.storeId, target.type, passStartedAt, after, limit);
  /** Removes `gone` (as of `at`); how many were removed. */
  const remove = (pass: PassRef, target: SweepTarget, gone: string[], at: number): number =>
    target.kind === 'products' ? gone.filter((productId) => products.remove(pass.storeId, productId, at, true, at) === 'removed').length : entries.remove(pass.storeId, target.type, gone);
  /** Inside a transaction: `gone` removed and the sweep's position saved (null: the pass is complete); false when the pass was superseded meanwhile. */
  function swept(pass: PassRef, target: SweepTarget, gone: string[], through: string | null, at: number): boolean {
    if (!isCurrent(pass)) return false;
    const removed = remove(pass, target, gone, at);
    db.update(catalogSyncs)
      .set({ removed: sql`${catalogSyncs.removed} + ${removed}`, error: null, ...(through === null ? { sweptThrough: null, status: 'done', finishedAt: at, lastCompletedAt: at, failedPasses: 0 } : { sweptThrough: through }) })
      .where(ofPass(pass))
      .run();
    return true;
  }
  const setPaused = (storeId: string, pausedAt: number | null) =>
    db.update(stores).set({ syncPausedAt: pausedAt === null ? null : sql`coalesce(${stores.syncPausedAt}, ${pausedAt})` }).where(eq(stores.id, storeId)).returning().get() ?? null;

  return promised<SyncStateRecords>({
    get: (storeId, kind) => passRow.get({ storeId, kind }) ?? null,
    of,
    running: (storeId) => db.select({ kind: catalogSyncs.kind }).from(catalogSyncs).where(and(eq(catalogSyncs.storeId, storeId), eq(catalogSyncs.status, 'running'))).get() !== undefined,

    begin: writeTransaction(sqlite, (storeId, trigger, passes, at) => {
      for (const pass of passes) {
        beginPass.run({ storeId, kind: pass.kind, runId: pass.runId, trigger, startedAt: at });
        if (pass.failed !== null) fail({ storeId, ...pass }, pass.failed, at);
        else if (pass.job !== null) jobs.enqueueOnce(queuedJob(pass.job, storeId, {}, at));
      }
    }),

    noteError(pass, error) {
      db.update(catalogSyncs).set({ error }).where(ofPass(pass)).run();
    },

    fail,

    pause: writeTransaction(sqlite, (storeId, jobKinds, at) => {
      const row = setPaused(storeId, at);
      if (row) jobs.dropUnfinished(storeId, jobKinds);
      return row;
    }),

    resume: writeTransaction(sqlite, (storeId, jobKinds, at) => {
      const row = setPaused(storeId, null);
      if (!row) return null;
      for (const pass of of(storeId)) if (pass.status === 'running') jobs.enqueueOnce(queuedJob(jobKinds[pass.kind], storeId, {}, at));
      return row;
    }),

    applyPage: writeTransaction(sqlite, (pass, passStartedAt, write, advance, at) => {
      if (!isCurrent(pass)) return false;
      if (write.kind === 'entries') entries.upsert(write.entries);
      else {
        for (const { product, description } of write.products) products.upsert(pass.storeId, write.currency, product, description, at);
        products.markListed(pass.storeId, write.products.map(({ product }) => product.productId), passStartedAt);
      }
      if (advance) {
        db.update(catalogSyncs)
          .set({ cursor: advance.next, pageSpan: advance.pageSpan, pages: sql`${catalogSyncs.pages} + 1`, items: sql`${catalogSyncs.items} + ${advance.items}`, error: null, ...(advance.next === null ? { sweptThrough: '' } : {}) })
          .where(ofPass(pass))
          .run();
      }
      return true;
    }),

    sweepStep: writeTransaction(sqlite, (pass, passStartedAt, target, after, limit, removeUnlisted, at) => {
      const chunk = unlisted(pass, passStartedAt, target, after, limit);
      if (!removeUnlisted && chunk.unlisted.length > 0) return isCurrent(pass) ? chunk : null;
      return swept(pass, target, chunk.unlisted, chunk.through, at) ? chunk : null;
    }),

    sweptThrough: writeTransaction(sqlite, swept),
  });
}
